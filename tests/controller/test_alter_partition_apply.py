"""§2.6–§2.8 — applying a valid AlterPartition (no-op, permutation, expansion, shrink and its
release/MV-dependent leader-epoch bump, LRS transitions, reassignment completion and
NEW_LEADER_ELECTED, ELR) and the response contents."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import AlterPartitionPartitionResult
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.state import LeaderRecoveryState, PartitionChangeRecord


def started(make, release, **config):
    h = make(release, **config)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    return h


def success(leader, leader_epoch, isr, partition_epoch, lrs=0):
    """§2.7: a success entry carries the state after the record (or the current one)."""
    return AlterPartitionPartitionResult(0, Error.NONE, leader, leader_epoch, tuple(isr), partition_epoch, lrs)


def test_identical_request_is_a_no_op(make, release):
    """§2.6 no-op: same ISR as an ordered list, same LRS → no record, no epoch bump, success with
    the current state."""
    h = started(make, release)
    mark = h.mark()
    assert h.alter(1, [1, 2, 3]) == success(1, 0, [1, 2, 3], 0)
    assert h.records_since(mark) == []
    assert h.epochs() == (0, 0)


def test_permutation_is_not_a_no_op(make, release):
    """§2.6: a permutation of the current ISR sets the new order and bumps only the partition
    epoch (not a shrink, so no leader-epoch bump in any release)."""
    h = started(make, release)
    assert h.alter(1, [3, 1, 2]) == success(1, 0, [3, 1, 2], 1)
    assert h.state().isr == (3, 1, 2)
    assert h.alter(1, [3, 1, 2]) == success(1, 0, [3, 1, 2], 1)


def test_expansion_bumps_only_the_partition_epoch(make, release, shrink_bump):
    """§2.6 ISR expansion: partitionEpoch+1, leader epoch unchanged (all versions); the ISR keeps
    the request's order."""
    h = started(make, release)
    le = 1 if shrink_bump(release) else 0
    assert h.alter(1, [1, 2]) == success(1, le, [1, 2], 1)
    assert h.alter(1, [3, 1, 2]) == success(1, le, [3, 1, 2], 2)


@pytest.mark.parametrize(
    ("release", "metadata_version", "bumps"),
    [
        ("3.3", None, True),
        ("3.5", None, True),
        ("3.5", "3.3-IV3", True),
        ("3.7", None, False),
        ("3.7", "3.6-IV0", False),
        ("3.7", "3.5-IV2", True),
        ("3.8", None, False),
        ("3.8", "3.5-IV2", True),
        ("3.9", None, False),
        ("3.9", "3.5-IV2", True),
        ("4.0", None, False),
        ("4.0", "3.3-IV3", True),
        ("4.1", None, False),
        ("4.1", "3.6-IV0", False),
        ("4.1", "3.5-IV2", True),
    ],
)
def test_shrink_leader_epoch_bump_by_release_and_mv(make, release, metadata_version, bumps):
    """§2.6 ISR shrink: partitionEpoch+1; leaderEpoch+1 on every shrink with 3.3/3.5 code, and
    from 3.6 on (KAFKA-15021) only when metadata.version < 3.6-IV0 (feature level 12)."""
    config = {} if metadata_version is None else {"metadata_version": metadata_version}
    h = started(make, release, **config)
    assert h.alter(1, [1, 2]) == success(1, 1 if bumps else 0, [1, 2], 1)


def test_replacing_a_member_counts_as_a_shrink(make, release, shrink_bump):
    """§2.6 / §3.1 step 7: the bump condition is "the new ISR does not contain every current ISR
    member" — [1,2] → [1,3] drops 2, so it bumps wherever a shrink does, although the size is
    unchanged."""
    h = started(make, release)
    bump = 1 if shrink_bump(release) else 0
    h.alter(1, [1, 2])
    assert h.alter(1, [1, 3]) == success(1, 2 * bump, [1, 3], 2)


# ---------------------------------------------------------------------------------------- LRS


def recovering(make, release):
    """Leader 2, ISR [2], RECOVERING (unclean ElectLeaders); returns (harness, leader epoch)."""
    h = started(make, release)
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    (result,) = h.c.elect_leaders(Election.UNCLEAN, [("foo", 0)])
    assert result.error is Error.NONE
    le, pe = h.epochs()
    assert pe == 3 and h.state().leader_recovery_state is LeaderRecoveryState.RECOVERING
    return h, le


def test_recovering_to_recovering_with_leader_only_is_allowed(make, release):
    """§2.6 LRS: RECOVERING→RECOVERING is allowed with an ISR of exactly the leader; here it is
    also a no-op (same ISR, same LRS)."""
    h, le = recovering(make, release)
    mark = h.mark()
    assert h.alter(2, [2], lrs=1) == success(2, le, [2], 3, lrs=1)
    assert h.records_since(mark) == []


def test_recovering_to_recovered_same_isr(make, release):
    """§2.6 LRS: RECOVERING→RECOVERED is allowed; with the same ISR the record changes only the
    LRS (partitionEpoch+1)."""
    h, le = recovering(make, release)
    assert h.alter(2, [2], lrs=0) == success(2, le, [2], 4, lrs=0)
    assert h.state().leader_recovery_state is LeaderRecoveryState.RECOVERED


def test_recovering_to_recovered_with_expansion(make, release):
    """§2.6 LRS: RECOVERING→RECOVERED is allowed with any ISR size (here [2,3])."""
    h, le = recovering(make, release)
    assert h.alter(2, [2, 3], lrs=0) == success(2, le, [2, 3], 4, lrs=0)


@pytest.mark.releases(max="3.9")
def test_v0_clears_recovering(make, release):
    """§2.6: a v0 AlterPartition carries no LRS (i.e. RECOVERED), so on a RECOVERING partition it
    flips the LRS to RECOVERED (3.x only); a v1 request stating RECOVERING keeps it."""
    h, le = recovering(make, release)
    mark = h.mark()
    assert h.alter(2, [2], version=1, lrs=1) == success(2, le, [2], 3, lrs=1)
    assert h.records_since(mark) == []
    assert h.alter(2, [2], version=0) == success(2, le, [2], 4, lrs=0)
    assert h.state().leader_recovery_state is LeaderRecoveryState.RECOVERED


# -------------------------------------------------------------------------------- reassignment


def reassigning(make, release, target):
    h = make(release)
    h.start(1, 2, 3, 4)
    h.create("foo", [[1, 2, 3]])
    assert h.c.reassign("foo", 0, target) is Error.NONE
    return h


def test_reassignment_start_layout(make, release):
    """§3.4 reassignment start: replicas := target followed by the removed ones; adding / removing
    the set differences; ISR unchanged; no member lost → no leader-epoch bump."""
    h = reassigning(make, release, [2, 3, 4])
    current = h.state()
    assert (current.replicas, current.removing, current.adding) == ((2, 3, 4, 1), (1,), (4,))
    assert (current.isr, current.leader, current.leader_epoch, current.partition_epoch) == ((1, 2, 3), 1, 0, 1)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_completion_removing_the_leader_answers_new_leader_elected(make, release, version):
    """§2.6 NEW_LEADER_ELECTED: completing a reassignment that removes the requesting leader
    still writes the record (replicas [2,3,4], ISR [2,3,4], leader 2 = first of the new
    replicas in the new ISR, both epochs +1) but answers NEW_LEADER_ELECTED (v ≥ 2) or
    FENCED_LEADER_EPOCH (v0/v1, 3.x) with only index and code (§2.7). Kafka:
    `testReassignPartitions`."""
    h = reassigning(make, release, [2, 3, 4])
    if not h.serves(version):
        pytest.skip("version not served by this release (§2.1)")
    mark = h.mark()
    result = h.alter(1, [1, 2, 3, 4], version=version)
    expected = Error.NEW_LEADER_ELECTED if version >= 2 else Error.FENCED_LEADER_EPOCH
    assert result == AlterPartitionPartitionResult(0, expected)
    assert len(h.partition_records_since(mark)) == 1
    current = h.state()
    assert (current.replicas, current.isr, current.removing, current.adding) == ((2, 3, 4), (2, 3, 4), (), ())
    assert (current.leader, current.leader_epoch, current.partition_epoch) == (2, 1, 2)


def test_completion_keeping_the_leader_bumps_leader_epoch(make, release):
    """§2.6 reassignment completion: replicas := target, removing replicas leave the ISR, the
    replica set lost a member so the leader field is set (leaderEpoch+1) even though the leader
    (1) stays; the requester gets success with that state."""
    h = reassigning(make, release, [1, 2, 4])
    assert h.state().replicas == (1, 2, 4, 3)
    assert h.alter(1, [1, 2, 3, 4]) == success(1, 1, [1, 2, 4], 2)
    current = h.state()
    assert (current.replicas, current.removing, current.adding) == ((1, 2, 4), (), ())


@pytest.mark.parametrize(
    ("release", "completes"),
    [("3.3", True), ("3.5", True), ("3.7", True), ("3.8", False), ("3.9", False), ("4.0", False), ("4.1", False)],
)
def test_completion_rule_by_release_through_alter_partition(make, release, completes, shrink_bump):
    """§3.4 / §7 (KAFKA-15665): replicas [1,2,3], ISR [1,3] (2 dropped), reassign to [1,2,4]
    (removing [3], adding [4]); the leader then sends ISR [1,3,4]. 3.3–3.7 complete because every
    *adding* replica is in ISR' = [1,4]; 3.8+ wait because target replica 2 is not."""
    h = make(release)
    h.start(1, 2, 3, 4)
    h.create("foo", [[1, 2, 3]])
    bump = 1 if shrink_bump(release) else 0
    assert h.alter(1, [1, 3]) == success(1, bump, [1, 3], 1)
    h.c.reassign("foo", 0, [1, 2, 4])
    assert h.state().replicas == (1, 2, 4, 3) and h.epochs() == (bump, 2)
    result = h.alter(1, [1, 3, 4])
    current = h.state()
    if completes:
        assert result == success(1, bump + 1, [1, 4], 3)
        assert (current.replicas, current.removing, current.adding) == ((1, 2, 4), (), ())
    else:
        assert result == success(1, bump, [1, 3, 4], 3)
        assert (current.replicas, current.removing, current.adding) == ((1, 2, 4, 3), (3,), (4,))


# ---------------------------------------------------------------------------------------- ELR


@pytest.mark.releases("4.0", "4.1")
def test_shrink_below_min_isr_moves_members_to_elr_and_growth_clears_it(make, release):
    """§2.6 / §4.9: with ELR on and min ISR 2, shrinking [1,2,3] → [1] puts the removed members
    into ELR (ELR := (ELR ∪ ISR) − target ISR = [2,3]) in the same record; growing back to
    ≥ min ISR clears ELR."""
    h = started(make, release, elr=True, min_insync_replicas=2)
    assert h.alter(1, [1]) == success(1, 0, [1], 1)
    assert sorted(h.state().elr) == [2, 3] and h.state().last_known_elr == ()
    assert h.alter(1, [1, 2]) == success(1, 0, [1, 2], 2)
    assert h.state().elr == ()


@pytest.mark.releases("4.0", "4.1")
def test_shrink_to_min_isr_keeps_elr_empty(make, release):
    """§4.9: |target ISR| ≥ min ISR → ELR stays empty ([1,2,3] → [1,2] with min ISR 2)."""
    h = started(make, release, elr=True, min_insync_replicas=2)
    mark = h.mark()
    assert h.alter(1, [1, 2]) == success(1, 0, [1, 2], 1)
    (record,) = h.partition_records_since(mark)
    assert record.elr is None and h.state().elr == ()


def test_record_written_for_new_leader_elected_is_a_partition_change(make, release):
    """§2.6: NEW_LEADER_ELECTED is "the only case where a partition gets both an error and a
    state change" — the one record names the new leader."""
    h = reassigning(make, release, [2, 3, 4])
    mark = h.mark()
    h.alter(1, [1, 2, 3, 4])
    (record,) = h.records_since(mark)
    assert isinstance(record, PartitionChangeRecord)
    assert (record.leader, record.isr, record.replicas) == (2, (2, 3, 4), (2, 3, 4))


@pytest.mark.releases("4.0", "4.1")
@pytest.mark.parametrize(
    ("cluster_min_isr", "topic_min_isr", "isr", "elr"),
    [(2, "5", [1, 2], (3,)), (2, "1", [1], ()), (1, "2", [1], (2, 3)), (2, None, [1, 2], ())],
    ids=["topic-above-rf", "topic-below-cluster", "topic-above-cluster", "cluster"],
)
def test_min_isr_is_topic_config_capped_by_replication_factor(make, release, cluster_min_isr, topic_min_isr,
                                                            isr, elr):
    """§4.9: minIsr = min(effective min.insync.replicas of the topic, replication factor of
    partition 0): a topic value 5 with RF 3 acts as 3; the topic value overrides the cluster's."""
    h = make(release, elr=True, min_insync_replicas=cluster_min_isr)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]], None if topic_min_isr is None else {"min.insync.replicas": topic_min_isr})
    assert h.alter(1, isr).error is Error.NONE
    assert tuple(sorted(h.state().elr)) == elr


@pytest.mark.releases("4.0", "4.1")
def test_min_isr_follows_current_replication_factor(make, release):
    """§4.9: minIsr = min(min.insync.replicas, replication factor of partition 0) — Kafka's
    getTopicEffectiveMinIsr reads partition 0's *current* replicas. With min.insync.replicas 3,
    foo = [1,2] (minIsr 2) reassigned to [1,2,3] (completed: RF 3 → minIsr 3), a shrink to [1,2]
    is below min ISR and must put 3 into ELR."""
    h = make(release, elr=True, min_insync_replicas=3)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2]])
    h.c.reassign("foo", 0, [1, 2, 3])
    assert h.alter(1, [1, 2, 3]) == success(1, 0, [1, 2, 3], 2)
    assert (h.state().replicas, h.state().adding) == ((1, 2, 3), ())
    assert h.alter(1, [1, 2]) == success(1, 0, [1, 2], 3)
    assert h.state().elr == (3,)
