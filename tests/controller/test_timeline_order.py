"""The order in which Kafka's controller iterates a topic's partitions (reference_impl/timeline_order).

The expected orders were printed by Kafka's own `TimelineHashMap` (a map of 0..n-1 built as
`TopicControlInfo` builds it, iterated with `values()`), from the 3.3.2 and 4.1.1 jars alike
(3,000 random put sequences also agreed); three partitions iterate 2 first, and a put that
replaces an entry can grow the table and change the order (five partitions: 2 first, then 0)."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import BrokerRegistrationRequest, HeartbeatRequest
from isrcheck.reference_impl.timeline_order import PartitionTable, iteration_order

KAFKA_ORDER = {
    1: (0,), 2: (0, 1), 3: (2, 0, 1), 4: (2, 0, 1, 3), 5: (2, 0, 4, 1, 3), 6: (5, 0, 2, 4, 1, 3),
    8: (5, 0, 2, 7, 4, 1, 6, 3), 9: (5, 0, 2, 7, 4, 1, 6, 3, 8),
}


@pytest.mark.parametrize("count", sorted(KAFKA_ORDER))
def test_the_order_is_kafkas(count: int) -> None:
    assert iteration_order(count) == KAFKA_ORDER[count]


def test_a_replacing_put_can_grow_the_table_and_change_the_order() -> None:
    """Kafka: 0..4 put, then put(r) for any r in 0..4 iterates 0,2,4,1,3 (the replacement's
    (size + 1) x 0.75 > 4 doubles the table first); before it, 2,0,4,1,3."""
    table = PartitionTable()
    for key in range(5):
        table = table.put(key)
    assert table.first() == 2
    for key in range(5):
        assert table.put(key).order() == (0, 2, 4, 1, 3)
        assert table.put(key).size == 5


def test_every_partition_appears_once() -> None:
    for count in range(1, 200):
        assert sorted(iteration_order(count)) == list(range(count))


@pytest.mark.parametrize("release", ["3.3", "3.9", "4.1"])
def test_create_partitions_takes_the_replication_factor_from_the_first_partition_iterated(release: str) -> None:
    controller = Controller(release)
    for broker in (1, 2, 3, 4):
        epoch = controller.register_broker(BrokerRegistrationRequest(broker, f"b{broker}")).broker_epoch
        if broker != 4:
            controller.heartbeat(HeartbeatRequest(broker, epoch, 2**62))
    assert controller.create_topic("foo", [[1, 2, 3], [2, 3, 1], [3, 1, 2]]) is Error.NONE
    assert controller.reassign("foo", 2, [4]) is Error.NONE  # broker 4 fenced: stays in progress
    assert len(controller.partitions[("foo", 2)].replicas) == 4
    assert controller.create_partitions("foo", 4, [[1, 2, 3]]) is Error.INVALID_REPLICA_ASSIGNMENT
    assert controller.create_partitions("foo", 4, [[4, 1, 2, 3]]) is Error.NONE
