"""§7 — differences across releases, one test per row of the §7 table that the controller model
expresses (plus the MV gates of §3.2 and §4.4 and KAFKA-16624 of §3.1). Expected values are
written out per release from the spec; rows the model does not express (BrokerRegistration /
BrokerHeartbeat versions, log dirs, ApiVersions features, Metadata on the controller listener)
are not tested here."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import AlterPartitionPartitionResult, IsrMember
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.release import ClusterConfig, profile_named
from isrcheck.reference_impl.state import BrokerRegistrationChangeRecord, LeaderRecoveryState

TIMEOUT = 9000
SERVED = {
    "3.3": {0, 1, 2},
    "3.5": {0, 1, 2, 3},
    "3.7": {0, 1, 2, 3},
    "3.8": {0, 1, 2, 3},
    "3.9": {0, 1, 2, 3},
    "4.0": {2, 3},
    "4.1": {2, 3},
}
"""§2.1 / §7 row "AlterPartition versions accepted" (3.8 follows 3.7/3.9: "0-3")."""


def started(make, release, **config):
    h = make(release, **config)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    return h


# ------------------------------------------------------------------ AlterPartition versions


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_versions_accepted(make, release, version):
    """§7 row 1 / §2.1: 3.3 accepts 0–2; 3.5–3.9 0–3; 4.0 and 4.1 2–3 (KAFKA-18601). A version
    outside the range is not processed: a top-level error, no topics, nothing written. (The
    spec does not name the error for an unserved version.)"""
    h = started(make, release)
    members = [IsrMember(1, h.epoch(1)), IsrMember(2, h.epoch(2))] if version == 3 else [1, 2]
    entry = h.topic_entry("foo", [h.item("foo", members)], version)
    mark = h.mark()
    response = h.alter_request(1, [entry], version=version)
    if version in SERVED[release]:
        assert response.error is Error.NONE
        assert response.topics[0].partitions[0].isr == (1, 2)
    else:
        assert response.error is not Error.NONE and response.topics == ()
        assert h.records_since(mark) == [] and h.state().isr == (1, 2, 3)


@pytest.mark.releases(min="3.5")
def test_kip903_member_epoch_check(make, release):
    """§7 row 2 (KIP-903, 3.5+): a v3 member with a stale broker epoch is ineligible."""
    h = started(make, release)
    h.alter(1, [1, 2])
    result = h.alter(1, [IsrMember(1), IsrMember(2), IsrMember(3, h.epoch(3) + 1)], version=3)
    assert result == AlterPartitionPartitionResult(0, Error.INELIGIBLE_REPLICA)


@pytest.mark.releases("3.3")
def test_3_3_has_no_v3(make, release):
    """§7 row 2: 3.3 has no KIP-903 check — it does not serve AlterPartition v3 at all, so
    per-member epochs cannot be sent."""
    h = started(make, release)
    entry = h.topic_entry("foo", [h.item("foo", [IsrMember(1, h.epoch(1)), IsrMember(2, 0)])], 3)
    assert h.alter_request(1, [entry], version=3).error is not Error.NONE


def test_ineligible_error_codes(make, release):
    """§7 row 3: INELIGIBLE_REPLICA for v ≥ 2 / OPERATION_NOT_ATTEMPTED for v ≤ 1 in 3.x; 4.0+
    (no v0/v1) only INELIGIBLE_REPLICA."""
    h = started(make, release)
    h.alter(1, [1, 2])
    h.c.fence_stale_broker(3)
    codes = {h.alter(1, [1, 2, 3], version=v).error for v in SERVED[release]}
    if release.startswith("3."):
        assert codes == {Error.OPERATION_NOT_ATTEMPTED, Error.INELIGIBLE_REPLICA}
    else:
        assert codes == {Error.INELIGIBLE_REPLICA}


def test_new_leader_elected_error_codes(make, release):
    """§7 row 4: NEW_LEADER_ELECTED for v ≥ 2 / FENCED_LEADER_EPOCH for v ≤ 1 in 3.x; 4.0+ only
    NEW_LEADER_ELECTED (each version gets a fresh reassignment that removes the leader)."""
    codes = set()
    for version in sorted(SERVED[release]):
        h = make(release)
        h.start(1, 2, 3, 4)
        h.create("foo", [[1, 2, 3]])
        h.c.reassign("foo", 0, [2, 3, 4])
        members = [IsrMember(b) for b in (1, 2, 3, 4)]
        codes.add(h.alter(1, members, version=version).error)
        assert h.state().leader == 2
    if release.startswith("3."):
        assert codes == {Error.FENCED_LEADER_EPOCH, Error.NEW_LEADER_ELECTED}
    else:
        assert codes == {Error.NEW_LEADER_ELECTED}


@pytest.mark.parametrize(
    ("release", "bumps"),
    [("3.3", True), ("3.5", True), ("3.7", False), ("3.8", False), ("3.9", False), ("4.0", False), ("4.1", False)],
)
def test_shrink_bump_with_default_mv(make, release, bumps):
    """§7 row 5: leader-epoch bump on ISR shrink — always in 3.3/3.5; 3.7+ only if
    MV < 3.6-IV0, which their default MVs are not."""
    h = started(make, release)
    assert h.alter(1, [1, 2]).leader_epoch == (1 if bumps else 0)


# ------------------------------------------------------------------ metadata.version


@pytest.mark.parametrize(
    ("release", "mv"),
    [("3.3", {"3.3-IV3"}), ("3.5", {"3.5-IV2"}), ("3.7", {"3.7-IV4"}), ("3.9", {"3.9-IV0"}),
     ("4.0", {"4.0-IV3"}), ("4.1", {"4.1-IV1", "4.0-IV3"})],
)
def test_default_metadata_version(release, mv):
    """§7 row 6: default (latest production) MV for new clusters. 4.1 is [UNSURE] in the spec
    (4.1-IV1 or 4.0-IV3)."""
    assert str(Controller(release).config.metadata_version) in mv


@pytest.mark.parametrize(
    ("release", "lowest_ok", "too_low"),
    [("3.3", "3.0-IV1", "3.0-IV0"), ("3.9", "3.0-IV1", "3.0-IV0"), ("4.0", "3.3-IV3", "3.3-IV2"),
     ("4.1", "3.3-IV3", "3.3-IV2")],
)
def test_minimum_metadata_version(release, lowest_ok, too_low):
    """§7 row 7: the runtime minimum MV is 3.0-IV1 in 3.x and 3.3-IV3 in 4.x."""
    profile = profile_named(release)
    assert str(ClusterConfig.for_profile(profile, metadata_version=lowest_ok).metadata_version) == lowest_ok
    with pytest.raises(ValueError):
        ClusterConfig.for_profile(profile, metadata_version=too_low)


@pytest.mark.releases(max="3.9")
@pytest.mark.parametrize(("mv", "recovering"), [("3.1-IV0", False), ("3.2-IV0", True)])
def test_unclean_recovering_needs_mv_3_2(make, release, mv, recovering):
    """§3.2 (3.3 – 4.0-cut): RECOVERING is set on unclean election only if the cluster MV ≥
    3.2-IV0 (KIP-704)."""
    h = make(release, metadata_version=mv)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    assert h.c.elect_leaders(Election.UNCLEAN, [("foo", 0)])[0].error is Error.NONE
    assert h.state().leader == 2
    expected = LeaderRecoveryState.RECOVERING if recovering else LeaderRecoveryState.RECOVERED
    assert h.state().leader_recovery_state is expected


@pytest.mark.releases(max="3.9")
@pytest.mark.parametrize(("mv", "persisted"), [("3.3-IV2", False), ("3.3-IV3", True)])
def test_controlled_shutdown_persisted_from_mv_3_3_iv3(make, release, mv, persisted):
    """§4.4: in 3.x the InControlledShutdown record is written only if MV ≥ 3.3-IV3; on older MVs
    a shutting-down broker is never ineligible for AlterPartition. (4.x: minimum MV is
    3.3-IV3, always persisted.)"""
    h = started(make, release, metadata_version=mv)
    h.heartbeat(1, shutdown=True)
    assert h.c.broker(1).in_controlled_shutdown is persisted
    expected = Error.INELIGIBLE_REPLICA if persisted else Error.NONE
    assert h.alter(2, [2, 3, 1]).error is expected


# ------------------------------------------------------------------ unclean / reassignment


def test_unclean_config_honoured(make, release):
    """§7 row 8: unclean.leader.election.enable is honoured by KRaft only from 3.9."""
    h = make(release)
    h.start(1, 2)
    h.create("foo", [[1, 2]], configs={"unclean.leader.election.enable": "true"})
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    assert h.state().leader == (2 if release in ("3.9", "4.0", "4.1") else -1)


def test_reassignment_completion_rule(make, release):
    """§7 row 9: 3.3–3.7 complete when adding ⊆ ISR'; 3.8+ (KAFKA-15665) when every target
    replica is in ISR'. Target [1,2,4] from [1,2,3] with 2 out of the ISR, ISR sent [1,3,4]."""
    h = make(release)
    h.start(1, 2, 3, 4)
    h.create("foo", [[1, 2, 3]])
    h.alter(1, [1, 3])
    h.c.reassign("foo", 0, [1, 2, 4])
    h.alter(1, [1, 3, 4])
    completes = release in ("3.3", "3.5", "3.7")
    assert h.state().replicas == ((1, 2, 4) if completes else (1, 2, 4, 3))


# ------------------------------------------------------------------ registration / sessions


@pytest.mark.parametrize(
    ("release", "epoch_kept", "fenced_after"),
    [("3.3", False, True), ("3.5", False, True), ("3.7", False, False), ("3.8", False, False),
     ("3.9", True, False), ("4.0", True, False), ("4.1", True, False)],
)
def test_same_incarnation_reregistration(make, release, epoch_kept, fenced_after):
    """§7 row 10: same-incarnation re-registration of an unfenced broker — 3.3/3.5 new epoch,
    fenced; 3.7.1+/3.8 new epoch, state kept; 3.9+ epoch and state kept."""
    h = started(make, release)
    old = h.epoch(2)
    assert h.register(2).error is Error.NONE
    assert (h.epoch(2) == old, h.c.broker(2).fenced) == (epoch_kept, fenced_after)


def test_new_incarnation_touches_isrs(make, release):
    """§7 row 11: a new-incarnation registration removes the broker from ISRs only in 4.0+
    (as-if-fenced, KAFKA-18106); 3.x leaves ISRs alone."""
    h = started(make, release)
    h.c.now_ms += TIMEOUT + 1
    assert h.restart(3).error is Error.NONE
    assert h.state().isr == ((1, 2, 3) if release.startswith("3.") else (1, 2))


def test_session_tracking(make, release):
    """§7 row 12: 3.x tracks only unfenced brokers (a fenced old incarnation never blocks);
    4.0+ tracks (id, epoch) pairs for every heartbeat, fenced ones included; at controller
    activation 4.0 seeds a fresh contact for every registered broker, 4.1 (KAFKA-19130) skips
    fenced ones."""
    h = make(release)
    h.start(2)
    h.register(1)
    h.heartbeat(1, fence=True)
    blocked_now = h.restart(1).error is Error.DUPLICATE_BROKER_REGISTRATION
    assert blocked_now is (not release.startswith("3."))
    h.c.advance_clock(5000)
    h.heartbeat(2)
    h.c.advance_clock(TIMEOUT - 5000 + 1)
    assert h.c.broker(1).fenced and not h.c.broker(2).fenced
    h.c.fail_over()
    blocked_after_failover = h.restart(1).error is Error.DUPLICATE_BROKER_REGISTRATION
    assert blocked_after_failover is (release == "4.0")
    assert h.restart(2).error is Error.DUPLICATE_BROKER_REGISTRATION


# ------------------------------------------------------------------ ELR


@pytest.mark.parametrize("release", ["3.3", "3.5", "3.7", "3.8", "3.9"])
def test_elr_unavailable_in_3x(release):
    """§7 row 13 / §4.9: ELR is absent (3.3/3.5) or dormant behind a non-production MV (3.7–3.9)
    — a 3.x cluster cannot run with it, and it is off by default."""
    profile = profile_named(release)
    assert ClusterConfig.for_profile(profile).eligible_leader_replicas is False
    with pytest.raises(ValueError):
        ClusterConfig.for_profile(profile, eligible_leader_replicas=True)


def test_elr_opt_in_on_4_0():
    """§7 row 13 / §4.9: 4.0 — off by default, can be enabled (ELRV_1 requires MV ≥ 4.0-IV1)."""
    profile = profile_named("4.0")
    assert ClusterConfig.for_profile(profile).eligible_leader_replicas is False
    assert ClusterConfig.for_profile(profile, eligible_leader_replicas=True).eligible_leader_replicas
    with pytest.raises(ValueError):
        ClusterConfig.for_profile(profile, metadata_version="4.0-IV0", eligible_leader_replicas=True)


def test_elr_default_on_for_new_4_1_clusters():
    """§7 row 13 / §4.9: 4.1 — on by default for newly formatted clusters (bootstrap MV ≥
    4.1-IV0); a 4.1 cluster on an older MV (e.g. 4.0-IV3) has it off; it can be turned off."""
    profile = profile_named("4.1")
    assert Controller("4.1").config.eligible_leader_replicas is True
    assert ClusterConfig.for_profile(profile, metadata_version="4.0-IV3").eligible_leader_replicas is False
    assert ClusterConfig.for_profile(profile, eligible_leader_replicas=False).eligible_leader_replicas is False


@pytest.mark.releases("4.0", "4.1")
def test_last_known_leader_acceptability(make, release):
    """§7 row 14 / §3.2 (c): ISR and ELR empty, lastKnownElr [1] (both brokers re-registered
    uncleanly with ELR on, min ISR 2). Unfencing 2 runs the election for the leaderless
    partition: 4.0 elects the *fenced* last known leader 1 (ISR [1], RECOVERING); 4.1
    (KAFKA-19522) does not. On 4.1, unfencing 1 then elects it."""
    h = make(release, elr=True, min_insync_replicas=2)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    h.c.now_ms += TIMEOUT + 1
    h.restart(2)
    assert (h.state().leader, h.state().isr, h.state().elr) == (1, (1,), ())
    h.restart(1)
    current = h.state()
    assert (current.leader, current.isr, current.elr, current.last_known_elr) == (-1, (), (), (1,))
    h.unfence(2)
    current = h.state()
    if release == "4.0":
        assert h.c.broker(1).fenced
        assert (current.leader, current.isr, current.last_known_elr) == (1, (1,), ())
        assert current.leader_recovery_state is LeaderRecoveryState.RECOVERING
    else:
        assert (current.leader, current.isr, current.last_known_elr) == (-1, (), (1,))
        h.unfence(1)
        current = h.state()
        assert (current.leader, current.isr, current.last_known_elr) == (1, (1,), ())
        assert current.leader_recovery_state is LeaderRecoveryState.RECOVERING


# ------------------------------------------------------------------ KAFKA-16624


@pytest.mark.parametrize(
    ("release", "metadata_version", "useless_record"),
    [("3.3", None, True), ("3.5", None, True), ("3.7", "3.5-IV2", True), ("3.7", None, False),
     ("3.8", "3.5-IV2", False), ("3.9", "3.5-IV2", False), ("4.0", "3.5-IV2", False), ("4.1", "3.5-IV2", False)],
)
@pytest.mark.parametrize("how", ["fenced-broker-shuts-down", "unregister"])
def test_useless_leader_epoch_record_kafka_16624(make, release, metadata_version, useless_record, how):
    """§3.1 version differences: the partition is leaderless with its sole ISR member 1 fenced;
    removing 1 again (a fenced broker asking to shut down → handleBrokerFenced, or
    unregistration) yields, in 3.3–3.7 with the shrink bump active, a record with only
    leader -1 → -1 (leaderEpoch+1, partitionEpoch+1); 3.8+ (KAFKA-16624) writes no partition
    record."""
    config = {} if metadata_version is None else {"metadata_version": metadata_version}
    h = make(release, **config)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    before = h.epochs()
    assert (h.state().leader, h.state().isr) == (-1, (1,))
    mark = h.mark()
    if how == "unregister":
        assert h.c.unregister_broker(1) is Error.NONE
    else:
        response = h.heartbeat(1, shutdown=True)
        assert (response.is_fenced, response.should_shut_down) == (True, True)
        assert BrokerRegistrationChangeRecord(1, h.epoch(1), fenced=True) in h.records_since(mark)
    records = h.partition_records_since(mark)
    if useless_record:
        assert [(r.leader, r.isr) for r in records] == [(-1, None)]
        assert h.epochs() == (before[0] + 1, before[1] + 1)
    else:
        assert records == []
        assert h.epochs() == before
    assert (h.state().leader, h.state().isr) == (-1, (1,))
