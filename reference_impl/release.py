"""Release profiles: every rule that differs between Kafka releases, named in one place.

Each field cites controller.md §7 (the release table) or the section of the rule it selects.
A profile is a *code* version; the cluster's metadata.version (MV) is configuration
(`ClusterConfig.metadata_version`) because several rules depend on both (§2.6, §3.1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum


@dataclass(frozen=True, order=True)
class MetadataVersion:
    """A metadata.version such as 3.6-IV0; ordered like Kafka's feature levels."""

    major: int
    minor: int
    iv: int

    @classmethod
    def parse(cls, text: str) -> MetadataVersion:
        try:
            release, iv = text.split("-IV")
            major, minor = release.split(".")
            return cls(int(major), int(minor), int(iv))
        except ValueError:
            raise ValueError(f"not a metadata.version: {text!r} (expected e.g. '3.6-IV0')") from None

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}-IV{self.iv}"


MV_3_2_IV0 = MetadataVersion(3, 2, 0)  # leader recovery state (KIP-704)
MV_3_3_IV3 = MetadataVersion(3, 3, 3)  # in-controlled-shutdown persisted (KIP-841)
MV_3_6_IV0 = MetadataVersion(3, 6, 0)  # no leader-epoch bump on ISR shrink (KAFKA-15021)
MV_4_0_IV1 = MetadataVersion(4, 0, 1)  # eligible leader replicas possible (KIP-966)


class SameIncarnation(Enum):
    """What re-registering with the same incarnation id writes (§4.1 table)."""

    NEW_EPOCH_RESET = "new epoch, fenced, not in controlled shutdown"  # 3.3 - 3.7.0
    NEW_EPOCH_KEEP_STATE = "new epoch, fenced/in-controlled-shutdown copied"  # 3.7.1, 3.8 (KAFKA-16757)
    AMEND = "epoch kept, state copied"  # 3.9+ (KAFKA-16952)


class Elr(Enum):
    """Availability of eligible leader replicas (KIP-966, §4.9)."""

    UNAVAILABLE = "absent or dormant (needs a non-production MV)"  # 3.3 - 3.9
    OPT_IN = "off unless the eligible.leader.replicas.version feature is enabled"  # 4.0
    DEFAULT_ON = "on for newly formatted clusters"  # 4.1


@dataclass(frozen=True)
class ReleaseProfile:
    name: str
    alter_partition_versions: tuple[int, int]
    """§2.1: 3.3 serves 0-2, 3.5-3.9 0-3, 4.0+ 2-3 (KAFKA-18601)."""
    kip903_broker_epochs: bool
    """§2.5 rule 4: per-member broker epoch check (3.5+)."""
    shrink_bump_mv_gated: bool
    """§2.6: False = every ISR shrink bumps the leader epoch (3.3/3.5); True = only if MV < 3.6-IV0."""
    shrink_bump_before_isr: bool
    """§3.1: 3.3-3.7 compare the *target* ISR before setting it (useless records, fixed by KAFKA-16624)."""
    unclean_config_honoured: bool
    """§4.8: unclean.leader.election.enable is ignored by KRaft before 3.9 (KAFKA-12670)."""
    reassignment_needs_all_target_in_isr: bool
    """§3.4: 3.3-3.7 complete when adding ⊆ ISR; 3.8+ when every target replica is in the ISR (KAFKA-15665)."""
    same_incarnation: SameIncarnation
    new_incarnation_shutdown_handler: bool
    """§4.7: 4.0+ removes a re-registering (new incarnation) broker from ISRs (KAFKA-18106)."""
    session_per_epoch: bool
    """§4.1/§4.3: 4.0+ tracks contact per (id, epoch) for every heartbeat, fenced ones too (KAFKA-17793)."""
    elr: Elr
    last_known_leader_must_be_acceptable: bool
    """§3.2(c): KAFKA-19522, reportedly in 4.1.0; the 4.0 code elects a fenced last known leader."""
    default_metadata_version: MetadataVersion
    minimum_metadata_version: MetadataVersion
    broker_registration_versions: tuple[int, int]
    broker_heartbeat_versions: tuple[int, int]
    record_elr_writes_last_known: bool = False
    """§4.9 `maybeUpdateRecordElr` writes the target lastKnownElr (3.7.1: cleared with the ELR when
    ELR is off or the election unclean); from 3.8 it returns before that line
    (`useLastKnownLeaderInBalancedRecovery`, always on), found by kafka-jvm on 4.1."""
    last_known_leader_when_leaderless: bool = False
    """§4.9 `maybeUpdateLastKnownLeader`: False (4.0.1) = lastKnownElr := [leader] when the record
    empties the ISR, cleared when the partition keeps or gets a leader; True (4.1.1) = lastKnownElr
    := [leader] when the record sets the leader to none and lastKnownElr is empty, cleared only when
    the record elects a leader (PartitionChangeBuilder at 4.1.1; found by kafka-jvm)."""
    activation_skips_fenced: bool = False
    """§4.1: on controller activation 4.1 seeds contact times only for unfenced brokers (KAFKA-19130)."""
    replay_forgets_offset: bool = False
    """§4.2 row 10: replaying a broker's registration change record resets its reported metadata offset to
    -1 (`BrokerHeartbeatManager.register`, reached with the soft state already updated) — seen on real
    3.7.1 and 3.9.0, not on 3.3.2 / 3.5.2; assumed for 3.8 and 4.x (docs/known-divergences.md)."""
    fence_keeps_shutdown_state: bool = False
    """§4.3: a broker whose session expires while in controlled shutdown keeps its controlled-shutdown
    offset (3.3.2/3.5.2: `BrokerHeartbeatManager.fence` only untracks it and the replayed fence record's
    `register(id, true)` leaves an already-fenced soft state alone), so its next heartbeat is judged
    in CONTROLLED_SHUTDOWN and answered SHUTDOWN_NOW until it registers again; from 3.7.1 `register`
    touches the state and clears the offset. Found by kafka-jvm (Kafka's own classes), K2 in
    docs/known-divergences.md."""
    representative_version: tuple[int, int, int] = (0, 0, 0)
    """The patch release the profile models, for release specifiers such as ">=3.7.1"."""

    @property
    def is_3x(self) -> bool:
        return self.name.startswith("3.")


_MV = MetadataVersion.parse

_P3_3 = ReleaseProfile(
    name="3.3",
    alter_partition_versions=(0, 2),
    kip903_broker_epochs=False,
    shrink_bump_mv_gated=False,
    shrink_bump_before_isr=True,
    unclean_config_honoured=False,
    reassignment_needs_all_target_in_isr=False,
    same_incarnation=SameIncarnation.NEW_EPOCH_RESET,
    new_incarnation_shutdown_handler=False,
    session_per_epoch=False,
    elr=Elr.UNAVAILABLE,
    last_known_leader_must_be_acceptable=False,
    default_metadata_version=_MV("3.3-IV3"),
    minimum_metadata_version=_MV("3.0-IV1"),
    broker_registration_versions=(0, 0),
    broker_heartbeat_versions=(0, 0),
    fence_keeps_shutdown_state=True,
    representative_version=(3, 3, 2),
)
# Each later release names only what §7 says changed since the one before.
_P3_5 = replace(
    _P3_3, name="3.5", alter_partition_versions=(0, 3), kip903_broker_epochs=True,
    default_metadata_version=_MV("3.5-IV2"), broker_registration_versions=(0, 1), representative_version=(3, 5, 2),
)
_P3_7 = replace(
    _P3_5, name="3.7", shrink_bump_mv_gated=True, same_incarnation=SameIncarnation.NEW_EPOCH_KEEP_STATE,
    default_metadata_version=_MV("3.7-IV4"), broker_registration_versions=(0, 3), broker_heartbeat_versions=(0, 1),
    replay_forgets_offset=True, fence_keeps_shutdown_state=False, representative_version=(3, 7, 2),
    record_elr_writes_last_known=True,
)
_P3_8 = replace(
    _P3_7, name="3.8", shrink_bump_before_isr=False, reassignment_needs_all_target_in_isr=True,
    record_elr_writes_last_known=False,
    default_metadata_version=_MV("3.8-IV0"), representative_version=(3, 8, 1),
)
_P3_9 = replace(
    _P3_8, name="3.9", unclean_config_honoured=True, same_incarnation=SameIncarnation.AMEND,
    default_metadata_version=_MV("3.9-IV0"), broker_registration_versions=(0, 4), representative_version=(3, 9, 1),
)
_P4_0 = replace(
    _P3_9, name="4.0", alter_partition_versions=(2, 3), new_incarnation_shutdown_handler=True,
    session_per_epoch=True, elr=Elr.OPT_IN, default_metadata_version=_MV("4.0-IV3"),
    minimum_metadata_version=_MV("3.3-IV3"), representative_version=(4, 0, 0),
)
_P4_1 = replace(
    _P4_0, name="4.1", elr=Elr.DEFAULT_ON, last_known_leader_must_be_acceptable=True,
    last_known_leader_when_leaderless=True,
    default_metadata_version=_MV("4.1-IV1"), activation_skips_fenced=True, representative_version=(4, 1, 0),
)

PROFILES: dict[str, ReleaseProfile] = {p.name: p for p in (_P3_3, _P3_5, _P3_7, _P3_8, _P3_9, _P4_0, _P4_1)}

NEWEST = "4.1"


def profile_named(name: str) -> ReleaseProfile:
    """The profile for a release such as '3.9' or '3.9.0' (patch versions map to their line)."""
    parts = name.strip().split(".")
    key = ".".join(parts[:2])
    if key not in PROFILES:
        known = ", ".join(PROFILES)
        raise ValueError(f"unknown Kafka release {name!r}; known release profiles: {known}")
    return PROFILES[key]


@dataclass(frozen=True)
class ClusterConfig:
    """Cluster-wide settings (controller.md §6) resolved against a profile."""

    metadata_version: MetadataVersion
    eligible_leader_replicas: bool
    unclean_leader_election_enable: bool = False
    min_insync_replicas: int = 1
    broker_session_timeout_ms: int = 9000

    @classmethod
    def for_profile(
        cls,
        profile: ReleaseProfile,
        *,
        metadata_version: str | None = None,
        eligible_leader_replicas: bool | None = None,
        unclean_leader_election_enable: bool = False,
        min_insync_replicas: int = 1,
        broker_session_timeout_ms: int = 9000,
    ) -> ClusterConfig:
        """Defaults per §7; raises ValueError for a combination the release cannot run."""
        mv = profile.default_metadata_version if metadata_version is None else _MV(metadata_version)
        if mv < profile.minimum_metadata_version:
            raise ValueError(
                f"metadata.version {mv} is below the minimum {profile.minimum_metadata_version} of Kafka {profile.name}"
            )
        if mv > profile.default_metadata_version:
            raise ValueError(f"metadata.version {mv} is newer than Kafka {profile.name} supports")
        if eligible_leader_replicas is None:
            elr = profile.elr is Elr.DEFAULT_ON and mv >= MetadataVersion(4, 1, 0)
        else:
            elr = eligible_leader_replicas
        if elr and (profile.elr is Elr.UNAVAILABLE or mv < MV_4_0_IV1):
            raise ValueError(f"eligible leader replicas cannot be enabled on Kafka {profile.name} with MV {mv}")
        if min_insync_replicas < 1:
            raise ValueError("min_insync_replicas must be at least 1")
        return cls(mv, elr, unclean_leader_election_enable, min_insync_replicas, broker_session_timeout_ms)
