"""The AlterPartitionManager (leader.md §12): one request in flight per broker, batching, retry
after top-level errors, re-routing after NOT_CONTROLLER and lost connections."""

from __future__ import annotations

from cluster_helpers import TOPIC, TP, new_cluster
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.isr_state import CommittedPartitionState, PendingShrinkIsr, PendingState
from isrcheck.reference_impl.leader_rules import LeaderRules
from isrcheck.reference_impl.messages import (
    AlterPartitionPartitionResult,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicResult,
)
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.partition import Partition
from isrcheck.reference_impl.rpc import ALTER_PARTITION, ALTER_PARTITION_RESPONSE, ZOMBIE_NODE, Message

RULES = LeaderRules()


def alter_partition_messages(cluster: Cluster, kind: str = ALTER_PARTITION) -> list[Message]:
    return [m for m in cluster.network.inflight.values() if m.kind == kind]


def two_partition_cluster() -> Cluster:
    cluster = new_cluster(assignment=[[1, 2, 3], [1, 2, 3]])
    cluster.hold(Selector(ALTER_PARTITION, 1))
    return cluster


def propose_shrink(cluster: Cluster, index: int, out: tuple[int, ...] = (3,)) -> tuple[Partition, PendingState]:
    partition = cluster.brokers[1].partitions[(TOPIC, index)]
    proposal = RULES.prepare_isr_shrink(partition, out)
    partition.transition(proposal)
    partition.submit(proposal)
    return partition, proposal


def test_one_request_in_flight_and_batching() -> None:
    """§12: the first proposal is sent at once; one queued while it is in flight goes in the next
    request, sent as soon as the response arrives."""
    cluster = two_partition_cluster()
    propose_shrink(cluster, 0)
    assert len(alter_partition_messages(cluster)) == 1
    propose_shrink(cluster, 1)
    assert len(alter_partition_messages(cluster)) == 1
    assert cluster.brokers[1].manager.inflight_requests() == 1
    first = alter_partition_messages(cluster)[0]
    assert isinstance(first.payload, AlterPartitionRequest)
    assert [p.partition for t in first.payload.topics for p in t.partitions] == [0]
    cluster.deliver(first)
    cluster.deliver(alter_partition_messages(cluster, ALTER_PARTITION_RESPONSE)[0])
    second = alter_partition_messages(cluster)
    assert len(second) == 1
    assert [p.partition for t in second[0].payload.topics for p in t.partitions] == [1]
    cluster.release()
    cluster.settle()
    assert cluster.controller.partition(TOPIC, 0).isr == (1, 2)
    assert cluster.controller.partition(TOPIC, 1).isr == (1, 2)


def respond(cluster: Cluster, request: Message, response: AlterPartitionResponse) -> None:
    """Replace the controller's answer to `request` by `response` and deliver it."""
    del cluster.network.inflight[request.id]
    cluster.send(ALTER_PARTITION_RESPONSE, "controller", 1, response, request.id, 0, request.src_serial)
    cluster.deliver(alter_partition_messages(cluster, ALTER_PARTITION_RESPONSE)[0])


def test_a_submit_during_the_back_off_sends_everything_queued() -> None:
    """§12: after a top-level error the in-flight flag is clear, so a new submit sends at once —
    with every queued item in one request."""
    cluster = two_partition_cluster()
    propose_shrink(cluster, 0)
    respond(cluster, alter_partition_messages(cluster)[0], AlterPartitionResponse(Error.UNKNOWN_SERVER_ERROR))
    assert not alter_partition_messages(cluster)
    propose_shrink(cluster, 1)
    resent = alter_partition_messages(cluster)
    assert len(resent) == 1
    assert sorted(p.partition for t in resent[0].payload.topics for p in t.partitions) == [0, 1]


def test_retried_partition_errors_go_out_after_the_whole_response_is_read() -> None:
    """§12, Kafka's `DefaultAlterPartitionManager.sendRequest`: the in-flight flag is cleared only
    after every callback of a response has run, so proposals the callbacks submit again wait and
    go out together; at no point has a partition two proposals outstanding. (A send from inside
    the loop took the items whose answers were still unread into the new request, beside their
    partitions' next proposals.)"""
    cluster = new_cluster(assignment=[[1, 2, 3], [1, 2, 3], [1, 2, 3]])
    cluster.hold(Selector(ALTER_PARTITION, 1))
    propose_shrink(cluster, 0)
    propose_shrink(cluster, 1)
    propose_shrink(cluster, 2)
    manager = cluster.brokers[1].manager
    respond(cluster, alter_partition_messages(cluster)[0], AlterPartitionResponse(Error.UNKNOWN_SERVER_ERROR))
    cluster.advance(50)
    batch = alter_partition_messages(cluster)
    assert len(batch) == 1 and isinstance(batch[0].payload, AlterPartitionRequest)
    request = batch[0].payload
    assert sorted(p.partition for t in request.topics for p in t.partitions) == [0, 1, 2]
    failed = Error.UNKNOWN_SERVER_ERROR  # neither revert nor wait: the leader submits again (§9)
    errors = tuple(AlterPartitionTopicResult(tuple(AlterPartitionPartitionResult(p.partition, failed)
                                                   for p in t.partitions), topic_id=t.topic_id)
                   for t in request.topics)
    respond(cluster, batch[0], AlterPartitionResponse(Error.NONE, errors))
    outstanding = [tp for tp, _, _ in manager.outstanding()]
    assert sorted(outstanding) == [(TOPIC, 0), (TOPIC, 1), (TOPIC, 2)]
    resent = alter_partition_messages(cluster)
    assert len(resent) == 1
    assert sorted(p.partition for t in resent[0].payload.topics for p in t.partitions) == [0, 1, 2]


def test_top_level_error_retries_after_the_back_off() -> None:
    """§12: a top-level error clears the in-flight flag and retries the batch 50 ms later."""
    cluster = two_partition_cluster()
    propose_shrink(cluster, 0)
    respond(cluster, alter_partition_messages(cluster)[0], AlterPartitionResponse(Error.STALE_BROKER_EPOCH))
    assert cluster.brokers[1].manager.inflight_requests() == 0
    assert not alter_partition_messages(cluster)
    cluster.advance(49)
    assert not alter_partition_messages(cluster)
    cluster.advance(1)
    assert len(alter_partition_messages(cluster)) == 1


def test_not_controller_reroutes_and_resends() -> None:
    """§12: NOT_CONTROLLER (top level or for a partition) → rediscover the controller and resend
    the same request; the partition's callback is not invoked."""
    cluster = two_partition_cluster()
    partition, proposal = propose_shrink(cluster, 0)
    request = alter_partition_messages(cluster)[0]
    cluster.brokers[1].manager.route = ZOMBIE_NODE
    respond(cluster, request, AlterPartitionResponse(Error.NOT_CONTROLLER))
    assert partition.state == proposal
    resent = alter_partition_messages(cluster)
    assert len(resent) == 1 and resent[0].dst == "controller" and resent[0].payload == request.payload


def test_lost_connection_resends_the_request() -> None:
    """§12: a dropped request or response is a disconnect: the request is re-queued and resent; a
    resend after the controller applied the first copy meets INVALID_UPDATE_VERSION and the leader
    waits for the metadata, which brings the committed ISR."""
    cluster = two_partition_cluster()
    partition, _ = propose_shrink(cluster, 0)
    cluster.deliver(alter_partition_messages(cluster)[0])
    cluster.drop(alter_partition_messages(cluster, ALTER_PARTITION_RESPONSE)[0])
    assert len(alter_partition_messages(cluster)) == 1
    assert isinstance(partition.state, PendingShrinkIsr)
    cluster.release()
    cluster.settle()
    assert partition.state == CommittedPartitionState((1, 2))
    assert cluster.controller.partition(TOPIC, 0).isr == (1, 2)


def test_partition_missing_from_the_response_is_resent() -> None:
    """§12: an item the response does not mention stays queued and goes out again."""
    cluster = two_partition_cluster()
    propose_shrink(cluster, 0)
    respond(cluster, alter_partition_messages(cluster)[0], AlterPartitionResponse(Error.NONE, ()))
    assert len(alter_partition_messages(cluster)) == 1
    assert [item[0] for item in cluster.brokers[1].manager.outstanding()] == [TP]


def test_stale_and_duplicated_responses_are_ignored() -> None:
    """§12: a response is matched to the in-flight request by correlation id."""
    cluster = two_partition_cluster()
    partition, _ = propose_shrink(cluster, 0)
    request = alter_partition_messages(cluster)[0]
    cluster.deliver(request)
    response = alter_partition_messages(cluster, ALTER_PARTITION_RESPONSE)[0]
    cluster.duplicate(response)
    copies = alter_partition_messages(cluster, ALTER_PARTITION_RESPONSE)
    cluster.deliver(copies[0])
    assert partition.state == CommittedPartitionState((1, 2))
    cluster.deliver(copies[1])
    assert partition.state == CommittedPartitionState((1, 2))
    assert not cluster.brokers[1].manager.outstanding()


def test_request_versions_follow_the_profile() -> None:
    """§12: v3 (member epochs) where the controller serves it; 3.3 tops out at v2 (no epochs)."""
    for release, version, epochs in (("4.1", 3, True), ("3.5", 3, True), ("3.3", 2, False)):
        cluster = new_cluster(release)
        cluster.hold(Selector(ALTER_PARTITION, 1))
        propose_shrink(cluster, 0)
        request = alter_partition_messages(cluster)[0].payload
        assert request.version == version
        members = request.topics[0].partitions[0].new_isr
        assert all(m.broker_epoch != -1 for m in members) is epochs
        if version >= 2:
            assert request.topics[0].topic_id == cluster.controller.topic_ids[TOPIC]
