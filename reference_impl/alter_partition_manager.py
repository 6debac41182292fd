"""The broker's AlterPartitionManager (leader.md §12): one queue of ISR proposals per broker, at
most one AlterPartition request in flight, batching of whatever is queued, retry after top-level
errors, re-routing after NOT_CONTROLLER or a lost connection.

Every step is a small method so a mutant can replace one: `submit` (B18), `maybe_propagate`
(D10), `build_request` (B22), `reroutes` (B21), `clear_pending` (B17).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from isrcheck.contract.operations.leader_branch import LeaderBranch

from .errors import Error
from .isr_state import PendingState
from .messages import (
    AlterPartitionItem,
    AlterPartitionPartitionResult,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopic,
    IsrMember,
)
from .rpc import ALTER_PARTITION, CONTROLLER_NODE

if TYPE_CHECKING:
    from .broker import Broker
    from .partition import Partition

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True, eq=False)
class ManagerItem:
    """One queued proposal and the partition whose callback completes it (§12 `unsentIsrUpdates`)."""

    id: int
    partition: Partition
    proposal: PendingState

    @property
    def tp(self) -> TopicPartition:
        return self.partition.tp


@dataclass(frozen=True, slots=True)
class InflightRequest:
    correlation: int
    items: tuple[ManagerItem, ...]
    request: AlterPartitionRequest


class AlterPartitionManager:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.items: dict[TopicPartition, ManagerItem] = {}
        self.inflight: InflightRequest | None = None
        self.route: str = CONTROLLER_NODE
        """Where requests go: the active controller, or a zombie until NOT_CONTROLLER (§12, B21)."""
        self.retry_generation = 0

    # ---------------------------------------------------------------- submission

    def submit(self, partition: Partition, proposal: PendingState) -> bool:
        """§12 `submit`: refused (False → OPERATION_NOT_ATTEMPTED) while the partition has an item,
        unsent or in flight; otherwise queued and sent if nothing is in flight."""
        tp = partition.tp
        if tp in self.items:
            return False
        self.items[tp] = ManagerItem(self.broker.next_item_id(), partition, proposal)
        self.maybe_propagate()
        return True

    def maybe_propagate(self) -> None:
        """§12: send every queued item in one request unless a request is in flight."""
        if self.items and self.inflight is None:
            self.send(tuple(self.items.values()))

    def send(self, items: tuple[ManagerItem, ...]) -> None:
        request = self.build_request(items)
        message = self.broker.send(ALTER_PARTITION, self.route, request)
        self.inflight = InflightRequest(message.id, items, request)

    def build_request(self, items: tuple[ManagerItem, ...]) -> AlterPartitionRequest:
        """§12 request construction, rebuilt at every (re)send with the current broker epoch;
        below v3 the member epochs are dropped (the KAFKA-15353 conversion, done idempotently)."""
        version = self.broker.alter_partition_version
        topics: dict[str, list[AlterPartitionItem]] = {}
        for item in items:
            sent = item.proposal.sent
            isr = sent.isr if version >= 3 else tuple(IsrMember(m.broker) for m in sent.isr)
            topics.setdefault(item.partition.topic, []).append(
                AlterPartitionItem(item.partition.index, sent.leader_epoch, sent.partition_epoch, isr,
                                   sent.leader_recovery_state)
            )
        request_topics = []
        for topic, partitions in topics.items():
            if version >= 2:
                topic_id = self.broker.cache.topic_ids.get(topic, "")
                request_topics.append(AlterPartitionTopic(tuple(partitions), topic_id=topic_id))
            else:
                request_topics.append(AlterPartitionTopic(tuple(partitions), topic_name=topic))
        return AlterPartitionRequest(version, self.broker.id, self.broker.epoch, tuple(request_topics))

    # ---------------------------------------------------------------- responses

    def reroutes(self, response: AlterPartitionResponse) -> bool:
        """§12: NOT_CONTROLLER anywhere in the response makes the channel rediscover the
        controller and resend the same request; the callbacks are not invoked."""
        if response.error is Error.NOT_CONTROLLER:
            return True
        return any(p.error is Error.NOT_CONTROLLER for t in response.topics for p in t.partitions)

    def on_response(self, correlation: int, response: AlterPartitionResponse) -> None:
        """§12 `handleAlterPartitionResponse`. The request counts as in flight until every
        callback has run, as in Kafka's `DefaultAlterPartitionManager.sendRequest`, which clears
        its in-flight flag only after `handleAlterPartitionResponse` returns: a callback that
        submits again (a retried error) queues its proposal, and it goes out with the rest
        afterwards. Sending from inside the loop put the items whose answers were still to be
        read into a new request, beside their partitions' next proposals (two outstanding)."""
        inflight = self.inflight
        if inflight is None or inflight.correlation != correlation:
            return
        if self.reroutes(response):
            self.route = CONTROLLER_NODE
            self.resend(inflight)
            return
        if response.error is not Error.NONE:
            self.inflight = None
            self.schedule_retry()
            return
        results = self.results_by_partition(inflight.request, response)
        for item in inflight.items:
            result = results.get(item.tp)
            if result is None:
                continue
            self.items.pop(item.tp, None)
            outcome: AlterPartitionPartitionResult | Error = result if result.error is Error.NONE else result.error
            item.partition.on_alter_partition_result(item.proposal, outcome)
        self.inflight = None
        self.maybe_propagate()

    def results_by_partition(
        self, request: AlterPartitionRequest, response: AlterPartitionResponse
    ) -> dict[TopicPartition, AlterPartitionPartitionResult]:
        names = {topic_id: name for name, topic_id in self.broker.cache.topic_ids.items()}
        results: dict[TopicPartition, AlterPartitionPartitionResult] = {}
        for topic in response.topics:
            name = topic.topic_name if topic.topic_name is not None else names.get(topic.topic_id or "")
            if name is None:
                continue
            for partition in topic.partitions:
                results[(name, partition.partition)] = partition
        return results

    def resend(self, inflight: InflightRequest) -> None:
        """A lost connection or NOT_CONTROLLER: the request is re-queued at the head (§12)."""
        self.broker.cluster.reached(LeaderBranch.REQUEST_REROUTED)
        self.inflight = None
        self.send(inflight.items)

    def on_disconnect(self, correlation: int) -> None:
        inflight = self.inflight
        if inflight is not None and inflight.correlation == correlation:
            self.resend(inflight)

    def schedule_retry(self) -> None:
        """§12: one-shot `send-alter-partition` after the back-off."""
        self.retry_generation += 1
        self.broker.schedule_alter_partition_retry(self.retry_generation)

    def on_retry_timer(self, generation: int) -> None:
        if generation == self.retry_generation:
            self.maybe_propagate()

    def clear_pending(self, tp: TopicPartition) -> None:
        """The pre-3.0 `clearPending` (KAFKA-12686): drop the partition's item even if in flight.
        The reference never calls it (`LeaderRules.clears_pending_on_metadata`); B17 does."""
        self.items.pop(tp, None)

    # ---------------------------------------------------------------- observation

    def outstanding(self) -> tuple[tuple[TopicPartition, int, bool], ...]:
        """(partition, item id, in flight) for every item queued or in the in-flight request."""
        inflight = self.inflight
        if inflight is None and not self.items:
            return ()
        sent = {} if inflight is None else {id(item): item for item in inflight.items}
        rows = [(item.tp, item.id, id(item) in sent) for item in self.items.values()]
        queued = {id(item) for item in self.items.values()}
        rows.extend((item.tp, item.id, True) for key, item in sent.items() if key not in queued)
        return tuple(rows)

    def inflight_requests(self) -> int:
        return 0 if self.inflight is None else 1
