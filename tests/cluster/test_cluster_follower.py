"""Followers (leader.md §13, §7 follower HW) and the replica log's epoch cache (KIP-101/279)."""

from __future__ import annotations

import pytest
from cluster_helpers import TOPIC, TP, leader_partition, new_cluster
from isrcheck.reference_impl.follower import FollowerRules
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.replica_log import ReplicaLog
from isrcheck.reference_impl.rpc import FETCH, FetchRequest

FOLLOWER = FollowerRules()


def log_of(*epochs: int) -> ReplicaLog:
    log = ReplicaLog()
    log.append([(epoch, index) for index, epoch in enumerate(epochs)])
    return log


def test_epoch_cache_end_offsets() -> None:
    """KIP-279 `endOffsetFor`: newest epoch → LEO; else next epoch's start; older than all →
    (requested, first start); newer than all or undefined → (-1, -1)."""
    log = log_of(1, 1, 3, 3, 3)
    assert log.epochs == [(1, 0), (3, 2)]
    assert log.end_offset_for_epoch(3) == (3, 5)
    assert log.end_offset_for_epoch(2) == (1, 2)
    assert log.end_offset_for_epoch(1) == (1, 2)
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.end_offset_for_epoch(4) == (-1, -1)
    assert log.end_offset_for_epoch(-1) == (-1, -1)


def test_truncation_prunes_the_epoch_cache() -> None:
    """Truncation removes records and cached epochs from the offset on; at the LEO it still drops an
    epoch entry with no records (a former leader's assigned epoch; Kafka's truncateTo)."""
    log = log_of(1, 1, 3, 3)
    log.hw = 4
    log.truncate_to(2)
    assert (log.leo, log.epochs, log.hw) == (2, [(1, 0)], 2)
    log.assign_epoch(5, 2)
    log.truncate_to(2)
    assert log.epochs == [(1, 0)]


def test_losing_unflushed_records() -> None:
    """A crash with `lose: unflushed` keeps exactly what was flushed; the HW is clamped."""
    log = log_of(1, 1)
    log.flush()
    log.append([(2, 10), (2, 11)])
    log.hw = 4
    log.lose_unflushed()
    assert (log.leo, log.epochs, log.hw) == (2, [(1, 0)], 2)


@pytest.mark.parametrize(
    ("epochs", "diverging", "offset"),
    [
        ((1, 1, 1, 2, 2), (1, 3), 3),      # same epoch known: min(leader end, own end)
        ((1, 1, 1, 2, 2), (1, 2), 2),
        ((1, 1, 3, 3), (2, 3), 2),         # leader's epoch unknown here: end of own largest epoch below it
        ((3, 3), (1, 0), 0),               # nothing at or below the leader's epoch: the leader's end
        ((1, 1), (-1, -1), 2),             # undefined end offset: keep the fetch offset
    ],
)
def test_truncation_offset(epochs: tuple[int, ...], diverging: tuple[int, int], offset: int) -> None:
    """§13 / KIP-279 `getOffsetTruncationState`."""
    assert FOLLOWER.truncation_offset(log_of(*epochs), diverging) == offset


def test_follower_hw_is_clamped_to_its_leo() -> None:
    """§7: HW := the leader's, clamped to [log start, own LEO] (so it may go down)."""
    log = log_of(1, 1, 1)
    assert FOLLOWER.follower_high_watermark(10, log) == 3
    assert FOLLOWER.follower_high_watermark(2, log) == 2


@pytest.mark.parametrize(("release", "epoch_sent"), [("3.3", False), ("3.5", True), ("4.1", True)])
def test_fetch_carries_the_broker_epoch_from_fetch_v15(release: str, epoch_sent: bool) -> None:
    """§13: Fetch v15 (MV ≥ 3.5-IV1) sends ReplicaState{id, broker epoch}; older versions -1."""
    cluster = new_cluster(release)
    cluster.hold(Selector(FETCH, 2))
    cluster.advance(600)
    request = next(m.payload for m in cluster.network.inflight.values() if m.kind == FETCH and m.src == 2)
    assert isinstance(request, FetchRequest)
    assert request.broker_epoch == (cluster.brokers[2].epoch if epoch_sent else -1)


def test_followers_replicate_and_learn_the_hw() -> None:
    """§13: fetch again at once after data; the follower's HW follows the leader's by one fetch
    (a fetch without new data waits replica.fetch.wait.max.ms)."""
    cluster = new_cluster()
    cluster.produce(TOPIC, 0, -1, 5)
    cluster.advance(1100)
    for broker in (2, 3):
        log = cluster.brokers[broker].partitions[TP].log
        assert (log.leo, log.hw) == (5, 5)
    assert leader_partition(cluster).log.records == cluster.brokers[2].partitions[TP].log.records


def test_diverging_follower_truncates_before_its_next_fetch() -> None:
    """§13 (KAFKA-10554, KAFKA-14704): a DivergingEpoch sets no HW; the follower truncates to the
    divergence point and then refetches the new leader's records."""
    cluster = new_cluster(assignment=[[1, 2, 3]])
    cluster.produce(TOPIC, 0, 1, 2)
    cluster.advance(600)
    # A writes two records nobody fetches, then loses leadership to B
    cluster.hold(Selector(FETCH, 2, 1))
    cluster.hold(Selector(FETCH, 3, 1))
    cluster.produce(TOPIC, 0, 1, 2)
    old_leader = cluster.brokers[1].partitions[TP]
    assert old_leader.log.leo == 4
    cluster.controller.fence_stale_broker(1)
    cluster.controller_changed()
    cluster.settle()
    new_leader = leader_partition(cluster)
    assert new_leader.broker_id == 2
    cluster.produce(TOPIC, 0, 1, 1)
    cluster.release()
    cluster.advance(3000)
    assert old_leader.log.records == new_leader.log.records
    assert [epoch for epoch, _ in old_leader.log.records] == [0, 0, 1]
    assert old_leader.log.hw <= old_leader.log.leo


def test_shutting_down_follower_fetches_only_isr_partitions() -> None:
    """§13: during a controlled shutdown a broker stops fetching partitions whose ISR lost it."""
    cluster = new_cluster(assignment=[[1, 2, 3]])
    cluster.create_topic("bar", [[3, 1, 2]])
    cluster.settle()
    process = cluster.brokers[3]
    cluster.controlled_shutdown(3)
    cluster.settle()
    assert cluster.controller.partition(TOPIC, 0).isr == (1, 2)
    assert process.status == "shutting_down"
    assert process.partitions[TP].role == "follower"
    assert not FOLLOWER.should_fetch(process.partitions[TP])
    cluster.advance(5000)
    assert process.status == "stopped" and cluster.controller.broker(3).fenced
