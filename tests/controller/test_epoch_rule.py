"""§1.1 — the epoch rule of `PartitionRegistration.merge`: every PartitionChangeRecord bumps the
partition epoch by exactly one; the leader epoch is bumped by exactly one iff the record names a
leader (-2 = NO_LEADER_CHANGE does not; the same id and -1 do). Creation starts both at 0."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.state import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionState,
    merge,
)

BASE = PartitionState(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=4, partition_epoch=7)


def test_record_without_leader_bumps_only_partition_epoch():
    """§1.1: leader field -2 (NO_LEADER_CHANGE) → partitionEpoch+1, leaderEpoch and leader kept."""
    after = merge(BASE, PartitionChangeRecord("t", 0, leader=NO_LEADER_CHANGE, isr=(1, 2)))
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (1, 4, 8)
    assert after.isr == (1, 2)


def test_record_naming_the_same_leader_bumps_leader_epoch():
    """§1.1: a record naming *the same* leader id still bumps the leader epoch by one."""
    after = merge(BASE, PartitionChangeRecord("t", 0, leader=1))
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (1, 5, 8)


def test_record_naming_no_leader_bumps_leader_epoch():
    """§1.1: leader field -1 counts as naming a leader: leader := -1, leaderEpoch+1."""
    after = merge(BASE, PartitionChangeRecord("t", 0, leader=NO_LEADER))
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (-1, 5, 8)


def test_minus_one_to_minus_one_still_bumps_leader_epoch():
    """§1.1 (and the KAFKA-16624 record of §3.1): leader -1 → -1 is a leader-epoch bump."""
    leaderless = PartitionState(replicas=(1, 2), isr=(1,), leader=NO_LEADER, leader_epoch=2, partition_epoch=3)
    after = merge(leaderless, PartitionChangeRecord("t", 0, leader=NO_LEADER))
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (-1, 3, 4)


def test_new_leader_bumps_both_epochs_by_exactly_one():
    """§1.1: a leader change bumps each epoch by exactly one, whatever else the record holds."""
    record = PartitionChangeRecord("t", 0, leader=2, isr=(2, 3), leader_recovery_state=LeaderRecoveryState.RECOVERED)
    after = merge(BASE, record)
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (2, 5, 8)


@pytest.mark.parametrize(
    "record",
    [
        PartitionChangeRecord("t", 0),
        PartitionChangeRecord("t", 0, leader_recovery_state=LeaderRecoveryState.RECOVERING),
        PartitionChangeRecord("t", 0, replicas=(1, 2, 3, 4), adding=(4,)),
        PartitionChangeRecord("t", 0, elr=(2,), last_known_elr=(1,)),
        PartitionChangeRecord("t", 0, isr=(3, 2, 1)),
    ],
    ids=["empty", "lrs-only", "replicas", "elr", "permuted-isr"],
)
def test_any_record_without_leader_bumps_partition_epoch_once(record):
    """§1.1: "applying any PartitionChangeRecord increments partitionEpoch by exactly 1"; no
    leader field → leader epoch untouched."""
    after = merge(BASE, record)
    assert (after.leader, after.leader_epoch, after.partition_epoch) == (1, 4, 8)


def test_unset_fields_are_unchanged():
    """§1.1: `null` list fields and LRS -1 mean "unchanged"."""
    current = PartitionState(
        replicas=(1, 2, 3, 4), isr=(2, 1), leader=2, leader_epoch=1, partition_epoch=1,
        leader_recovery_state=LeaderRecoveryState.RECOVERING, removing=(4,), adding=(3,), elr=(5,),
        last_known_elr=(6,),
    )
    after = merge(current, PartitionChangeRecord("t", 0))
    assert after.replicas == (1, 2, 3, 4)
    assert after.isr == (2, 1)
    assert (after.removing, after.adding, after.elr, after.last_known_elr) == ((4,), (3,), (5,), (6,))
    assert after.leader_recovery_state is LeaderRecoveryState.RECOVERING


def test_topic_creation_starts_both_epochs_at_zero(make, release):
    """§1.1 / §5: a PartitionRecord (creation) starts leaderEpoch and partitionEpoch at 0."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3], [2, 3, 1]])
    for index in (0, 1):
        assert h.epochs("foo", index) == (0, 0)


def test_controller_epochs_count_the_records(make, release):
    """§1.1 at controller level: after a mixed history (shrink, expand, fencing the leader,
    unfencing, a preferred election), the partition epoch equals the number of
    PartitionChangeRecords for the partition and the leader epoch the number of those naming a
    leader — whatever release rules decided which records to write."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.alter(1, [1, 2])
    h.alter(1, [1, 2, 3])
    h.c.fence_stale_broker(1)
    h.unfence(1)
    leader = h.state().leader
    h.alter(leader, [*h.state().isr, 1])
    h.c.elect_leaders(Election.PREFERRED, [("foo", 0)])
    records = [
        r for _, r in h.c.log if isinstance(r, PartitionChangeRecord) and (r.topic, r.partition) == ("foo", 0)
    ]
    assert any(isinstance(r, PartitionRecord) for _, r in h.c.log)
    named = [r for r in records if r.leader != NO_LEADER_CHANGE]
    assert h.epochs() == (len(named), len(records))
    assert h.state().leader == 1
