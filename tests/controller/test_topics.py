"""§5 — topic creation (manual assignments) and CreatePartitions: ISR = the active replicas
(registered, unfenced, not in controlled shutdown) in assignment order, leader = first of them,
both epochs 0, LRS RECOVERED, ELR and lastKnownElr empty; all inactive → error."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.state import LeaderRecoveryState, PartitionRecord, TopicRecord


def brokers(make, release, **config):
    """1, 2, 3 unfenced; 4 registered but fenced; 5 in controlled shutdown (it led t5)."""
    h = make(release, **config)
    h.start(1, 2, 3, 5)
    h.register(4)
    h.create("t5", [[5, 1]])
    assert h.heartbeat(5, shutdown=True).should_shut_down is False
    assert h.c.broker(5).in_controlled_shutdown and not h.c.broker(5).fenced
    return h


def test_all_active_replicas(make, release):
    """§5: ISR = every replica when all are active (assignment order), leader = replicas[0],
    leaderEpoch 0, partitionEpoch 0, LRS RECOVERED, ELR [] / lastKnownElr []."""
    h = brokers(make, release)
    h.create("foo", [[3, 1, 2]])
    current = h.state()
    assert (current.replicas, current.isr, current.leader) == ((3, 1, 2), (3, 1, 2), 3)
    assert (current.leader_epoch, current.partition_epoch) == (0, 0)
    assert current.leader_recovery_state is LeaderRecoveryState.RECOVERED
    assert (current.elr, current.last_known_elr, current.removing, current.adding) == ((), (), (), ())


@pytest.mark.parametrize(
    ("assignment", "isr"),
    [([4, 1, 2], (1, 2)), ([5, 3, 1], (3, 1)), ([1, 4, 5, 2], (1, 2)), ([4, 5, 3], (3,))],
    ids=["fenced-first", "shutting-down-first", "inactive-middle", "only-last-active"],
)
def test_inactive_replicas_left_out_of_isr(make, release, assignment, isr):
    """§5: fenced (4) and controlled-shutdown (5) replicas are left out of the ISR, the order of
    the rest is kept, the leader is the first active replica — leader ≠ replicas[0] is allowed."""
    h = brokers(make, release)
    h.create("foo", [assignment])
    current = h.state()
    assert (current.replicas, current.isr, current.leader) == (tuple(assignment), isr, isr[0])
    assert h.epochs() == (0, 0)


def test_each_partition_gets_its_own_isr(make, release):
    """§5: the rule is applied per partition."""
    h = brokers(make, release)
    h.create("foo", [[1, 2, 4], [4, 3, 2], [2, 3, 1]])
    assert [(h.state("foo", i).isr, h.state("foo", i).leader) for i in range(3)] == [
        ((1, 2), 1), ((3, 2), 3), ((2, 3, 1), 2)]


@pytest.mark.parametrize("assignment", [[[4, 5]], [[1, 2], [4, 5]]], ids=["single", "second-partition"])
def test_all_replicas_inactive_is_invalid_replica_assignment(make, release, assignment):
    """§5: a partition whose ISR would be empty (manual assignment) →
    INVALID_REPLICA_ASSIGNMENT; nothing is created."""
    h = brokers(make, release)
    mark = h.mark()
    assert h.c.create_topic("foo", assignment) is Error.INVALID_REPLICA_ASSIGNMENT
    assert h.records_since(mark) == []
    assert h.c.partition("foo", 0) is None and "foo" not in h.c.topic_ids


@pytest.mark.parametrize(
    "assignment",
    [[[1, 9]], [[1, 2, 1]], [[]], [[1, 2], [1, 2, 3]], [[1, 2], [3]]],
    ids=["unregistered", "duplicate", "empty-list", "longer-later", "shorter-later"],
)
def test_bad_manual_assignment(make, release, assignment):
    """§5: each list non-empty, only registered brokers, no duplicates, all lists the same length
    — else INVALID_REPLICA_ASSIGNMENT, nothing written."""
    h = brokers(make, release)
    mark = h.mark()
    assert h.c.create_topic("foo", assignment) is Error.INVALID_REPLICA_ASSIGNMENT
    assert h.records_since(mark) == []


def test_registered_fenced_broker_may_be_assigned(make, release):
    """§5: the assignment check is "registered", not "active" — a fenced broker may hold a
    replica (it is just not in the ISR)."""
    h = brokers(make, release)
    assert h.c.create_topic("foo", [[4, 1]]) is Error.NONE
    assert h.state().isr == (1,)


def test_unregistered_broker_cannot_be_assigned(make, release):
    """§5: after UnregisterBroker the id is no longer registered → INVALID_REPLICA_ASSIGNMENT."""
    h = brokers(make, release)
    h.c.unregister_broker(3)
    assert h.c.create_topic("foo", [[1, 3]]) is Error.INVALID_REPLICA_ASSIGNMENT


def test_creation_records(make, release):
    """§5 / §9.4: creation writes a TopicRecord and one PartitionRecord per partition."""
    h = brokers(make, release)
    mark = h.mark()
    h.create("foo", [[1, 2], [2, 3]])
    records = h.records_since(mark)
    assert [type(r) for r in records] == [TopicRecord, PartitionRecord, PartitionRecord]
    assert [(r.topic, r.partition) for r in records[1:]] == [("foo", 0), ("foo", 1)]


def test_create_partitions_uses_the_same_rule(make, release):
    """§5: "CreatePartitions uses the same ISR/leader rule for the new partitions"; the new
    partitions continue the index sequence; existing ones are untouched."""
    h = brokers(make, release)
    h.create("foo", [[1, 2, 3]])
    before = h.state("foo", 0)
    assert h.c.create_partitions("foo", 3, [[4, 2, 1], [5, 3, 2]]) is Error.NONE
    assert h.state("foo", 0) == before
    assert [(h.state("foo", i).isr, h.state("foo", i).leader, h.epochs("foo", i)) for i in (1, 2)] == [
        ((2, 1), 2, (0, 0)), ((3, 2), 3, (0, 0))]


def test_create_partitions_all_inactive(make, release):
    """§5: a new partition with no active replica fails like at creation."""
    h = brokers(make, release)
    h.create("foo", [[1, 2]])
    mark = h.mark()
    assert h.c.create_partitions("foo", 2, [[4, 5]]) is Error.INVALID_REPLICA_ASSIGNMENT
    assert h.records_since(mark) == []
    assert h.c.partition("foo", 1) is None


@pytest.mark.releases("4.1")
def test_creation_with_elr_on(make, release):
    """§5: ELR [] and lastKnownElr [] at creation also with ELR on (4.1 default)."""
    h = make(release, elr=None)
    assert h.c.config.eligible_leader_replicas
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    assert (h.state().elr, h.state().last_known_elr) == ((), ())
