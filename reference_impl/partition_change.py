"""The single partition-change engine: Kafka's `PartitionChangeBuilder` (controller.md §3).

Every change to a partition — AlterPartition, fencing, unfencing, controlled shutdown,
unregistration, re-registration, elections and reassignment — is computed here as a
`PartitionChangeRecord` (or None when nothing changes) and applied by `state.merge`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from .release import MV_3_2_IV0, MV_3_6_IV0, MetadataVersion, ReleaseProfile
from .state import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionState,
)


class Election(Enum):
    PREFERRED = "preferred"
    ONLINE = "online"
    UNCLEAN = "unclean"


@dataclass(frozen=True, slots=True)
class ChangeRules:
    """The release- and cluster-dependent switches the builder reads (§3.1, §3.2, §3.4, §4.9)."""

    profile: ReleaseProfile
    metadata_version: MetadataVersion
    elr_enabled: bool
    min_isr: int

    @property
    def shrink_bumps_leader_epoch(self) -> bool:
        """§2.6: 3.3/3.5 always; 3.6+ only when MV < 3.6-IV0 (KAFKA-15021)."""
        return not self.profile.shrink_bump_mv_gated or self.metadata_version < MV_3_6_IV0


class ChangeTargets(NamedTuple):
    """What the caller wants; None = keep the current value (§3 inputs). A named tuple rather
    than a dataclass: it is built on every partition change, and this is the hot path."""

    isr: tuple[int, ...] | None = None
    replicas: tuple[int, ...] | None = None
    removing: tuple[int, ...] | None = None
    adding: tuple[int, ...] | None = None
    leader_recovery_state: LeaderRecoveryState | None = None
    election: Election = Election.ONLINE
    unclean_shutdown_replicas: tuple[int, ...] = ()


def without(items: tuple[int, ...], removed: tuple[int, ...] | frozenset[int]) -> tuple[int, ...]:
    return tuple(r for r in items if r not in removed)


def complete_reassignment(
    isr: tuple[int, ...], replicas: tuple[int, ...], removing: tuple[int, ...], adding: tuple[int, ...],
    needs_all_target_in_isr: bool,
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """`PartitionReassignmentReplicas.maybeCompleteReassignment` (§3.4): the completed
    (isr, replicas), or None while the reassignment must go on."""
    if not removing and not adding:
        return None
    new_isr = without(isr, removing)
    new_replicas = without(replicas, removing)
    if not new_isr or not new_replicas:
        return None
    waiting_for = new_replicas if needs_all_target_in_isr else adding
    if any(r not in new_isr for r in waiting_for):
        return None
    return new_isr, new_replicas


def build_partition_change(
    topic: str,
    partition: int,
    current: PartitionState,
    targets: ChangeTargets,
    acceptable: Callable[[int], bool],
    rules: ChangeRules,
) -> PartitionChangeRecord | None:
    """`PartitionChangeBuilder.build()` in the step order of §3.1 (3.8+), with the 3.3–3.7
    epoch-bump placement when the profile says so. Returns None for "no record"."""
    profile = rules.profile
    elr_on = rules.elr_enabled
    target_isr = current.isr if targets.isr is None else targets.isr
    target_replicas = current.replicas if targets.replicas is None else targets.replicas
    target_removing = current.removing if targets.removing is None else targets.removing
    target_adding = current.adding if targets.adding is None else targets.adding
    target_lrs = targets.leader_recovery_state
    if target_lrs is None:
        target_lrs = current.leader_recovery_state
    target_elr = current.elr
    target_last_known_elr = current.last_known_elr

    # 1. completeReassignmentIfNeeded
    completed = complete_reassignment(
        target_isr, target_replicas, target_removing, target_adding, profile.reassignment_needs_all_target_in_isr
    )
    if completed is not None:
        target_isr, target_replicas = completed
        target_removing = target_adding = ()

    # 2. maybePopulateTargetElr (§4.9)
    if elr_on:
        if len(target_isr) >= rules.min_isr:
            target_elr = target_last_known_elr = ()
        else:
            candidates = set(target_elr) | set(current.isr)
            target_elr = tuple(
                sorted(r for r in candidates if r not in target_isr and r not in targets.unclean_shutdown_replicas)
            )

    # 3. tryElection (§3.2)
    def valid_new_leader(r: int) -> bool:
        in_isr = r in target_isr or (elr_on and not target_isr and r in target_elr)
        return in_isr and acceptable(r)

    def can_elect_last_known_leader() -> bool:
        if not elr_on or target_isr or target_elr or len(current.last_known_elr) != 1:
            return False
        return not profile.last_known_leader_must_be_acceptable or acceptable(current.last_known_elr[0])

    winner, unclean = _elect(current, target_replicas, targets.election, valid_new_leader, acceptable,
                             can_elect_last_known_leader)
    record_leader = NO_LEADER_CHANGE
    record_isr: tuple[int, ...] | None = None
    record_lrs: LeaderRecoveryState | None = None
    if winner != current.leader:
        if elr_on and not unclean and winner in target_elr:
            target_isr = (winner,)
            target_elr = tuple(r for r in target_elr if r != winner)
        record_leader = winner
        if unclean:
            record_isr = (winner,)
            recovery_supported = not profile.is_3x or rules.metadata_version >= MV_3_2_IV0
            if current.leader_recovery_state != LeaderRecoveryState.RECOVERING and recovery_supported:
                record_lrs = LeaderRecoveryState.RECOVERING

    reassigned_away = any(r not in target_replicas for r in current.replicas)
    if profile.shrink_bump_before_isr:
        # 3.3-3.7 `triggerLeaderEpochBumpIfNeeded`: compares the *target* ISR, before setting it.
        if record_leader == NO_LEADER_CHANGE:
            shrunk = any(r not in target_isr for r in current.isr)
            if reassigned_away or (rules.shrink_bumps_leader_epoch and shrunk):
                record_leader = current.leader
    # 4. reassignment epoch bump
    elif record_leader == NO_LEADER_CHANGE and reassigned_away:
        record_leader = current.leader

    # 5. maybeUpdateRecordElr
    record_elr: tuple[int, ...] | None = None
    record_last_known_elr: tuple[int, ...] | None = None
    if elr_on or current.elr or current.last_known_elr:
        if record_isr is not None or not elr_on:
            target_elr = target_last_known_elr = ()
        if target_elr != current.elr:
            record_elr = target_elr
        # 3.8+ writes no lastKnownElr here: the controller always builds with
        # useLastKnownLeaderInBalancedRecovery, with which maybeUpdateRecordElr returns before it
        # (3.8.1 to 4.1.1); step 8 alone writes it. 3.7.1 still writes the target here.
        if profile.record_elr_writes_last_known and target_last_known_elr != current.last_known_elr:
            record_last_known_elr = target_last_known_elr

    # 6. the ISR; with ELR off it never becomes empty ("last ISR member stays")
    if record_isr is None and (target_isr or elr_on) and target_isr != current.isr:
        record_isr = target_isr

    # 7. shrink epoch bump, 3.8+ (KAFKA-16624: uses the record's ISR)
    if (
        not profile.shrink_bump_before_isr
        and rules.shrink_bumps_leader_epoch
        and record_leader == NO_LEADER_CHANGE
        and record_isr is not None
        and any(r not in record_isr for r in current.isr)
    ):
        record_leader = current.leader

    # 8. maybeUpdateLastKnownLeader (§4.9)
    if elr_on and profile.last_known_leader_when_leaderless:
        if record_leader == NO_LEADER and not current.last_known_elr:
            record_last_known_elr = (current.leader,)
        elif record_leader >= 0 and current.last_known_elr:
            record_last_known_elr = ()
    elif elr_on:
        if record_isr is not None and not record_isr and current.last_known_elr != (current.leader,):
            record_last_known_elr = (current.leader,)
        elif (
            record_leader >= 0 or (current.leader != NO_LEADER and record_leader != NO_LEADER)
        ) and current.last_known_elr:
            record_last_known_elr = ()

    # 9. assignment changes; 10. LRS
    record_replicas = target_replicas if target_replicas and target_replicas != current.replicas else None
    record_removing = target_removing if target_removing != current.removing else None
    record_adding = target_adding if target_adding != current.adding else None
    if target_lrs != current.leader_recovery_state:
        record_lrs = target_lrs

    if (
        record_leader == NO_LEADER_CHANGE
        and record_isr is None
        and record_replicas is None
        and record_removing is None
        and record_adding is None
        and record_elr is None
        and record_last_known_elr is None
        and record_lrs is None
    ):
        return None
    return PartitionChangeRecord(
        topic, partition, record_leader, record_isr, record_replicas, record_removing, record_adding,
        record_elr, record_last_known_elr, record_lrs,
    )


def _elect(
    current: PartitionState,
    target_replicas: tuple[int, ...],
    election: Election,
    valid_new_leader: Callable[[int], bool],
    acceptable: Callable[[int], bool],
    can_elect_last_known_leader: Callable[[], bool],
) -> tuple[int, bool]:
    """`electLeader` (§3.2): (winner, unclean)."""
    if election is Election.PREFERRED:
        if target_replicas and valid_new_leader(target_replicas[0]):
            return target_replicas[0], False
        if valid_new_leader(current.leader):
            return current.leader, False
        for r in target_replicas[1:]:
            if valid_new_leader(r):
                return r, False
        if can_elect_last_known_leader():
            return current.last_known_elr[0], True
        return NO_LEADER, False
    if valid_new_leader(current.leader):
        return current.leader, False
    for r in target_replicas:
        if valid_new_leader(r):
            return r, False
    if can_elect_last_known_leader():
        return current.last_known_elr[0], True
    if election is Election.UNCLEAN:
        for r in target_replicas:
            if acceptable(r):
                return r, True
    return NO_LEADER, False
