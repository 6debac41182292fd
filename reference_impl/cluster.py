"""The cluster model: a reference KRaft controller, broker processes, a deterministic network and
a logical clock (leader.md; controller.md §4 for the broker lifecycle).

Nothing happens by itself. A *scheduler event* is the delivery of one message or the firing of
one timer; `step(rng)` performs one chosen by a seeded generator (reordering by picking a
non-oldest message), `settle()` delivers every deliverable message in send order, `advance(ms)`
moves the clock firing timers in order. Faults are explicit calls: drop / duplicate / hold a
message, crash (optionally losing unflushed data or the whole disk), restart, controlled
shutdown, controller fail-over (optionally leaving a zombie), metadata lag. Same calls in the
same order → same result.

The classes and rules it uses are constructor parameters so that a mutant is one subclass:
`Cluster(profile, config, leader_rules=..., follower_rules=..., manager_class=...,
controller_class=..., partition_class=...)`.
"""

from __future__ import annotations

import bisect
import copy
import random
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from isrcheck.contract.history.ground_truth import (
    PROPOSAL_OTHER,
    PROPOSAL_PENDING,
    PROPOSAL_REPLACED_AT_EQUAL_EPOCH,
    AckedRecord,
    BrokerView,
    ClusterObservation,
    DataLoss,
    FollowerProgress,
    IsrAdmission,
    PartitionView,
    ProduceDecision,
    RegistrationView,
    ReplicaView,
)

from .alter_partition_manager import AlterPartitionManager
from .broker import CRASHED, RUNNING, STOPPED, Broker, Disk
from .broker_config import BrokerConfig
from .controller import Controller
from .errors import Error
from .follower import FollowerRules
from .isr_state import CommittedPartitionState, LeaderAndIsr
from .leader_rules import LeaderRules
from .messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerRegistrationRequest,
    HeartbeatRequest,
)
from .metadata_cache import MetadataCache, TopicPartition
from .network import Network, Selector
from .partition import LEADER, Partition
from .release import NEWEST, ClusterConfig, ReleaseProfile, profile_named
from .rpc import (
    ALTER_PARTITION,
    ALTER_PARTITION_RESPONSE,
    CONTROLLER_NODE,
    FETCH,
    FETCH_RESPONSE,
    HEARTBEAT,
    HEARTBEAT_RESPONSE,
    METADATA,
    REGISTRATION,
    REGISTRATION_RESPONSE,
    REQUEST_KINDS,
    ZOMBIE_NODE,
    Message,
    MetadataNotice,
    Node,
)
from .state import LeaderRecoveryState, MetadataRecord, PartitionChangeRecord, PartitionState
from .timers import Timer, Timers

LOSE_NONE = "none"
LOSE_UNFLUSHED = "unflushed"
LOSE_DISK = "disk"

RESPONSE_TO_REQUEST = {
    FETCH_RESPONSE: FETCH,
    ALTER_PARTITION_RESPONSE: ALTER_PARTITION,
    HEARTBEAT_RESPONSE: HEARTBEAT,
    REGISTRATION_RESPONSE: REGISTRATION,
}
NOTICE = MetadataNotice()
ORDERED_KINDS = frozenset({REGISTRATION, REGISTRATION_RESPONSE, HEARTBEAT, HEARTBEAT_RESPONSE})
"""Broker lifecycle traffic: one connection, in order, never duplicated (the controller's
heartbeat state machine assumes it — a stale WantShutDown=false heartbeat would unfence a
broker that finished its controlled shutdown, controller.md §4.2). Random reordering and
duplication leave these kinds alone."""


@dataclass(slots=True)
class ProduceState:
    """The client's view of one produce request."""

    request: int
    topic: str
    partition: int
    acks: int
    broker: int
    record_ids: tuple[int, ...]
    base_offset: int = -1
    status: str = "pending"
    """pending | acked | failed."""
    error: str = "NONE"


class QuiescenceError(RuntimeError):
    """`settle` kept finding work: a livelock in the model (or a mutant)."""


Key = TypeVar("Key", bound=Hashable)
"""What a run-long set holds (`Cluster._frozen_keys`)."""


Map = TypeVar("Map", bound=dict[Any, Any])


def _same_map(now: Map, before: Map) -> Map:
    """`before` if `now` equals it (views compared by identity first: dict equality in C), else
    `now`. The views are frozen values, so an equal map is the same ground truth."""
    return before if now == before else now


class Cluster:
    def __init__(
        self,
        profile: ReleaseProfile | str = NEWEST,
        config: ClusterConfig | None = None,
        broker_config: BrokerConfig | None = None,
        *,
        controller_class: type[Controller] = Controller,
        leader_rules: LeaderRules | None = None,
        follower_rules: FollowerRules | None = None,
        manager_class: type[AlterPartitionManager] = AlterPartitionManager,
        partition_class: type[Partition] = Partition,
        broker_class: type[Broker] = Broker,
        trace: bool = False,
    ) -> None:
        self.profile = profile_named(profile) if isinstance(profile, str) else profile
        self.config = ClusterConfig.for_profile(self.profile) if config is None else config
        self.broker_config = BrokerConfig() if broker_config is None else broker_config
        self.controller_class = controller_class
        self.controller: Controller = controller_class(self.profile, self.config)
        self.zombie: Controller | None = None
        self._zombie_answers: dict[AlterPartitionRequest, AlterPartitionResponse] = {}
        """The zombie's answer to each request it was sent: it never changes, so neither do they."""
        self.leader_rules = LeaderRules() if leader_rules is None else leader_rules
        self.follower_rules = FollowerRules() if follower_rules is None else follower_rules
        self.manager_class = manager_class
        self.partition_class = partition_class
        self.broker_class = broker_class
        self.network = Network()
        self.timers = Timers()
        self.now_ms = 0
        self.events = 0
        """Scheduler events so far: message deliveries plus timer firings."""
        self.deliveries = 0
        self.last_delivered: Message | None = None
        """The message `deliver` took last (what a scheduler event did, for the driver's log)."""
        self.steps = 0
        """Operations so far (the `step` in violations)."""
        self.trace: list[tuple[object, ...]] | None = [] if trace else None
        self.brokers: dict[int, Broker] = {}
        self.disks: dict[int, Disk] = {}
        self._ids = 0
        self._incarnations = 0
        # client side
        self.produces: dict[int, ProduceState] = {}
        self.acked: list[AckedRecord] = []
        # ground truth kept by the harness
        self.truth = MetadataCache()
        self.epoch_leaders: dict[tuple[str, int, int], int] = {}
        self.epoch_isrs: dict[tuple[str, int, int], tuple[int, ...]] = {}
        """(topic, partition, partition epoch) → the ISR the controller committed with it (every
        partition change record bumps the partition epoch, so each is written once), for P-LEAD."""
        self.unclean: dict[TopicPartition, None] = {}
        """Partitions that had an unclean election someone allowed (`unclean_allowed`)."""
        self.unclean_requests: set[TopicPartition] = set()
        """Partitions an ElectLeaders request of type UNCLEAN named."""
        self.leader_branches: dict[str, None] = {}
        """The leader-side decision branches the run has taken (contract/operations/leader_branch.py)."""
        self.alter_partition_outcomes: dict[str, None] = {}
        """The error codes the controller answered the brokers' AlterPartition requests with (the
        top-level one, else each partition's): its validation branches, controller.md §2."""
        self._frozen_sets: dict[str, frozenset[Any]] = {}
        self.admissions: list[IsrAdmission] = []
        self._proposed_hws: dict[int, tuple[AlterPartitionRequest, dict[TopicPartition, int]]] = {}
        """Harness-only: each AlterPartition request's leader HWs when it was sent (by payload
        identity; the payload is kept so the id stays unique), for the P-ELIG ground truth."""
        self.data_loss: list[DataLoss] = []
        self.produce_decisions: list[ProduceDecision] = []
        """Every leader's §8 produce admission decision, with the ISR size and min ISR it read (P-ADM)."""
        self.controlled_shutdowns: dict[int, int] = {}
        """broker → serial of the incarnation whose controlled shutdown the controller accepted."""
        self.metadata_inflight: dict[int, int] = {}
        self.metadata_holds: dict[int, None] = {}
        self._log_seen = 0
        self._partition_views: dict[TopicPartition, tuple[object, PartitionView]] = {}
        self._registration_views: dict[int, tuple[object, RegistrationView]] = {}
        self._broker_views: dict[int, tuple[tuple[object, ...], BrokerView]] = {}
        self._replica_views: dict[
            int, dict[TopicPartition, tuple[tuple[object, ...], ReplicaView, tuple[int, str, int]]]
        ] = {}
        """broker → partition → (what the view was built from, the view, its key in `replicas`)."""
        self._frozen_lists: dict[str, tuple[Any, ...]] = {}
        self._frozen_maps: dict[str, dict[Any, Any]] = {}
        self._last_maps: tuple[
            dict[TopicPartition, PartitionView], dict[int, RegistrationView], dict[int, BrokerView],
            dict[tuple[int, str, int], ReplicaView], frozenset[int],
        ] | None = None
        """The maps of the last observation (`observe` hands them out again while they are equal)."""
        self.pending_produces: dict[int, None] = {}
        """Requests of acks=all producers still waiting."""

    # ================================================================ plumbing

    def next_step(self) -> int:
        """Count one operation of the driver (scenario step, generator action)."""
        self.steps += 1
        return self.steps

    def reached(self, branch: str) -> None:
        """A partition or AlterPartitionManager took `branch` (protocol-state coverage)."""
        self.leader_branches[branch] = None

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def send(
        self, kind: str, src: Node, dst: Node, payload: object, correlation: int = 0, src_serial: int = 0,
        dst_serial: int = 0,
    ) -> Message:
        message = self.network.send(kind, src, dst, payload, correlation, src_serial, dst_serial)
        if kind == ALTER_PARTITION and isinstance(payload, AlterPartitionRequest) and isinstance(src, int):
            process = self.brokers.get(src)
            if process is not None:
                logs = process.disk.logs
                self._proposed_hws[id(payload)] = (payload, {
                    key: logs[key].hw for key in self._request_partitions(payload) if key in logs
                })
        return message

    def metadata_end(self) -> int:
        """The offset of the controller's last record (0 before the first). Offsets increase but
        need not be dense: how they are assigned is the controller's own business (negative
        control N1 leaves gaps), so nothing here may count records to find an offset."""
        log = self.controller.log
        return log[-1][0] if log else 0

    def metadata_records(self, after: int, up_to: int) -> Iterator[tuple[int, MetadataRecord]]:
        """Controller log entries with after < offset ≤ up_to."""
        log = self.controller.log
        for index in range(bisect.bisect_right(log, after, key=lambda entry: entry[0]), len(log)):
            if log[index][0] > up_to:
                return
            yield log[index]

    def alive(self, broker: int) -> bool:
        process = self.brokers.get(broker)
        return process is not None and process.alive

    # ================================================================ scheduler events

    def deliver(self, message: Message) -> None:
        """Deliver one in-flight message (it may have been sent long ago)."""
        del self.network.inflight[message.id]
        self.events += 1
        self.deliveries += 1
        self.last_delivered = message
        if self.trace is not None:
            self.trace.append(("deliver", message.id, message.kind, message.src, message.dst, self.now_ms))
        dst = message.dst
        if dst == CONTROLLER_NODE:
            self._controller_receive(message)
            return
        if dst == ZOMBIE_NODE:
            self._zombie_receive(message)
            return
        assert isinstance(dst, int)
        process = self.brokers.get(dst)
        kind = message.kind
        if process is None or not process.alive or (message.dst_serial and message.dst_serial != process.serial):
            if kind == METADATA:
                self._metadata_done(dst, message.id)
            elif kind in REQUEST_KINDS:
                self._lost(message)
            return
        if kind == METADATA:
            self._metadata_done(dst, message.id)
        process.receive(message)

    def drop(self, message: Message) -> None:
        """Lose one in-flight message; its sender learns of the broken connection (§12: the
        AlterPartition channel resends, a follower refetches after the back-off)."""
        del self.network.inflight[message.id]
        if self.trace is not None:
            self.trace.append(("drop", message.id, message.kind, self.now_ms))
        self._lost(message)

    def duplicate(self, message: Message) -> Message:
        if self.trace is not None:
            self.trace.append(("duplicate", message.id, message.kind, self.now_ms))
        return self.network.duplicate(message)

    def _lost(self, message: Message) -> None:
        if message.kind == METADATA:
            assert isinstance(message.dst, int)
            self._metadata_done(message.dst, message.id)
            return
        if message.kind in REQUEST_KINDS:
            owner, serial, kind, correlation = message.src, message.src_serial, message.kind, message.id
        else:
            owner, serial = message.dst, message.dst_serial
            kind, correlation = RESPONSE_TO_REQUEST[message.kind], message.correlation
        if not isinstance(owner, int):
            return
        process = self.brokers.get(owner)
        if process is not None and process.alive and process.serial == serial:
            process.on_disconnect(kind, correlation)

    def fire_next_timer(self, limit_ms: int | None = None) -> bool:
        """Advance the clock to the next timer (not past `limit_ms`) and fire it."""
        due = self.timers.next_due()
        if due is None or (limit_ms is not None and due > limit_ms):
            return False
        timer = self.timers.pop()
        if due > self.now_ms:
            self._set_clock(due)
        self._fire(timer)
        return True

    def _fire(self, timer: Timer) -> None:
        process = self.brokers.get(timer.broker)
        if process is None or not process.alive or process.serial != timer.serial:
            return
        self.events += 1
        if self.trace is not None:
            self.trace.append(("timer", timer.kind, timer.broker, timer.key, self.now_ms))
        process.on_timer(timer)

    def _set_clock(self, now_ms: int) -> None:
        self.now_ms = now_ms
        controller = self.controller
        before = len(controller.log)
        controller.advance_clock(now_ms - controller.now_ms)
        if len(controller.log) != before:
            self._after_controller()

    def step(self, rng: random.Random, reorder: float = 0.25, deliver_bias: float = 0.9) -> bool:
        """One scheduler event chosen by `rng`: usually a deliverable message (the oldest, or with
        probability `reorder` any), else the next timer. False when nothing can happen.
        Registration and heartbeat traffic stays in order per connection (`ORDERED_KINDS`)."""
        network = self.network
        inflight = network.inflight
        if inflight and (deliver_bias >= 1.0 or rng.random() < deliver_bias or not self.timers):
            if network.holds:
                candidates = network.deliverable()
                if candidates:
                    chosen = candidates[0] if rng.random() >= reorder else rng.choice(candidates)
                    self.deliver(self._in_order(chosen))
                    return True
            elif rng.random() >= reorder:
                self.deliver(next(iter(inflight.values())))
                return True
            else:
                self.deliver(self._in_order(rng.choice(list(inflight.values()))))
                return True
        return self.fire_next_timer()

    def _in_order(self, message: Message) -> Message:
        """The oldest deliverable message on `message`'s connection if its kind is ordered."""
        if message.kind not in ORDERED_KINDS:
            return message
        network = self.network
        for other in network.inflight.values():
            if (
                other.kind in ORDERED_KINDS and other.src == message.src and other.dst == message.dst
                and not network.is_held(other)
            ):
                return other
        return message

    quiescence_limit = 200_000
    """Events one `settle` may take before the cluster counts as livelocked (QuiescenceError)."""

    def settle(self, max_events: int | None = None) -> int:
        """Deliver every deliverable message in send order and fire timers due now, until quiet."""
        count = 0
        network = self.network
        inflight = network.inflight
        timers = self.timers
        limit = self.quiescence_limit if max_events is None else max_events
        while True:
            if inflight and not network.holds:
                self.deliver(next(iter(inflight.values())))
            else:
                message = network.oldest_deliverable() if inflight else None
                if message is not None:
                    self.deliver(message)
                else:
                    timer = timers.pop_due(self.now_ms)
                    if timer is None:
                        return count
                    self._fire(timer)
            count += 1
            if count > limit:
                raise QuiescenceError(f"no quiescence after {limit} events at t={self.now_ms}")

    def advance(self, ms: int) -> None:
        """Let `ms` of logical time pass, delivering messages as they are sent (settle between timers)."""
        target = self.now_ms + ms
        self.settle()
        while self.fire_next_timer(target):
            self.settle()
        if target > self.now_ms:
            self._set_clock(target)
        self.settle()

    # ================================================================ the controller node

    def _reply(self, request: Message, kind: str, payload: object) -> None:
        self.send(kind, request.dst, request.src, payload, request.id, 0, request.src_serial)

    def _controller_receive(self, message: Message) -> None:
        controller = self.controller
        payload = message.payload
        if isinstance(payload, HeartbeatRequest):
            response = controller.heartbeat(payload)
            if payload.want_shut_down and response.error is Error.NONE:
                self.controlled_shutdowns[payload.broker] = message.src_serial
            self._reply(message, HEARTBEAT_RESPONSE, response)
            if payload.current_metadata_offset < self.metadata_end():
                self._notify(payload.broker)
        elif isinstance(payload, AlterPartitionRequest):
            before = self._isrs(payload)
            altered = controller.alter_partition(payload)
            self._note_outcomes(altered)
            self._record_admissions(message, payload, before)
            self._reply(message, ALTER_PARTITION_RESPONSE, altered)
        elif isinstance(payload, BrokerRegistrationRequest):
            registration = controller.register_broker(payload)
            self._reply(message, REGISTRATION_RESPONSE, registration)
        if len(controller.log) != self._log_seen:
            self._after_controller()

    def _zombie_receive(self, message: Message) -> None:
        """A deposed controller that believes it is active answers from its frozen state; it
        cannot commit, so anything it would write ends in NOT_CONTROLLER (B21, §12). Each
        distinct request is answered once (`_zombie_answers`): a leader retrying against the
        zombie sent the same request some ten thousand times in one run, each answer a deep copy
        of the controller."""
        request = message.payload
        assert isinstance(request, AlterPartitionRequest)
        response = self._zombie_answers.get(request)
        if response is None:
            response = self._zombie_answer(request)
            self._zombie_answers[request] = response
        self._note_outcomes(response)
        self._reply(message, ALTER_PARTITION_RESPONSE, response)

    def _zombie_answer(self, request: AlterPartitionRequest) -> AlterPartitionResponse:
        if self.zombie is None:
            return AlterPartitionResponse(Error.NOT_CONTROLLER)
        scratch = copy.deepcopy(self.zombie)
        response = scratch.alter_partition(request)
        if len(scratch.log) != len(self.zombie.log):
            return AlterPartitionResponse(Error.NOT_CONTROLLER)
        return response

    def _note_outcomes(self, response: AlterPartitionResponse) -> None:
        outcomes = self.alter_partition_outcomes
        if response.error is not Error.NONE:
            outcomes[response.error.name] = None
            return
        for topic in response.topics:
            for partition in topic.partitions:
                outcomes[partition.error.name] = None

    def _request_partitions(self, request: AlterPartitionRequest) -> list[TopicPartition]:
        keys: list[TopicPartition] = []
        for topic in request.topics:
            name = topic.topic_name if topic.topic_name is not None else self.controller.topic_names.get(
                topic.topic_id or ""
            )
            if name is not None:
                keys.extend((name, item.partition) for item in topic.partitions)
        return keys

    def _isrs(self, request: AlterPartitionRequest) -> dict[TopicPartition, tuple[tuple[int, ...], int]]:
        """The controller's (ISR, partition epoch) of each partition the request names, before it."""
        partitions = self.controller.partitions
        return {key: (partitions[key].isr, partitions[key].partition_epoch)
                for key in self._request_partitions(request) if key in partitions}

    def _record_admissions(
        self, message: Message, request: AlterPartitionRequest,
        before: dict[TopicPartition, tuple[tuple[int, ...], int]],
    ) -> None:
        """Ground truth for P-ELIG: for every broker an AlterPartition added to an ISR, was the
        registered incarnation the running one, and had it caught up with the leader when the
        leader proposed it? (Unknown when the incarnation that sent the request is gone.)

        "When proposed", not "when the controller accepts": the leader judges §5 at proposal time,
        and Kafka's makeLeader lets a metadata update of *equal* partition epoch replace a pending
        expansion (leader.md §10), after which the HW may pass the proposed member while its
        request is still in flight — found by the engine's cluster self-check; the member then
        catches up from the leader like any other."""
        partitions = self.controller.partitions
        leader = request.broker_id
        proposed = self._proposed_hws.get(id(request))
        proposed_hws = proposed[1] if proposed is not None and proposed[0] is request else {}
        for key, (old_isr, old_epoch) in before.items():
            for member in partitions[key].isr:
                if member in old_isr:
                    continue
                registration = self.controller.brokers.get(member)
                process = self.brokers.get(member)
                alive = process is not None and process.alive
                process_epoch = process.epoch if process is not None and alive else -1
                sender = self.brokers.get(leader)
                caught_up: bool | None = None
                if sender is not None and sender.alive and sender.serial == message.src_serial:
                    leader_log = sender.disk.logs.get(key)
                    member_log = self.disks[member].logs.get(key) if member in self.disks else None
                    hw = proposed_hws.get(key, 0 if leader_log is None else leader_log.hw)
                    caught_up = hw == 0 or (
                        member_log is not None and leader_log is not None and member_log.leo >= hw
                        and member_log.records[:hw] == leader_log.records[:hw]
                    )
                self.admissions.append(IsrAdmission(
                    self.steps, key[0], key[1], member, leader,
                    -1 if registration is None else registration.epoch, process_epoch, caught_up,
                    None if caught_up is None else proposal_at_acceptance(sender, key, request, old_epoch),
                ))

    def _after_controller(self) -> None:
        """New metadata records: update the harness's ground truth and tell every live broker."""
        log = self.controller.log
        truth = self.truth
        for offset, record in log[self._log_seen:]:
            before = truth.partitions.get((record.topic, record.partition)) if isinstance(
                record, PartitionChangeRecord) else None
            tp = truth.replay(offset, record)
            if tp is not None:
                state = truth.partitions[tp]
                self.epoch_leaders.setdefault((tp[0], tp[1], state.leader_epoch), state.leader)
                self.epoch_isrs.setdefault((tp[0], tp[1], state.partition_epoch), state.isr)
                if state.leader_recovery_state == LeaderRecoveryState.RECOVERING and self.unclean_allowed(
                    tp, before, state
                ):
                    self.unclean[tp] = None
        self._log_seen = len(log)
        for broker, process in self.brokers.items():
            if process.alive:
                self._notify(broker)

    def unclean_allowed(self, tp: TopicPartition, before: PartitionState | None, after: PartitionState) -> bool:
        """Whether an election outside the ISR was asked for: unclean.leader.election.enable on
        for the topic (its own config, else the cluster default; KIP-106 turned the default off in
        0.11) or an ElectLeaders request of type UNCLEAN for the partition (KIP-460). Only such an
        election may lose acknowledged records (bugs.md B14: "a model should expose it only under
        the flag"), besides the last known leader's return with eligible leader replicas on
        (KIP-966, `PartitionChangeBuilder.canElectLastKnownLeader`: the last ISR member elected
        again, in RECOVERING because its shutdown may have lost records). Any other is the
        controller's fault, and P-ACK judges it. `before` and `after`: the partition around the
        change that made it RECOVERING."""
        if tp in self.unclean_requests:
            return True
        if before is not None and before.last_known_elr == (after.leader,):
            return True
        value = self.truth.topic_configs.get(tp[0], {}).get("unclean.leader.election.enable")
        return self.config.unclean_leader_election_enable if value is None else value.lower() == "true"

    def request_unclean_election(self, partitions: Sequence[TopicPartition]) -> None:
        self.unclean_requests.update(partitions)

    def _notify(self, broker: int) -> None:
        if broker in self.metadata_inflight:
            return
        process = self.brokers[broker]
        message = self.send(METADATA, CONTROLLER_NODE, broker, NOTICE, 0, 0, process.serial)
        self.metadata_inflight[broker] = message.id

    def _metadata_done(self, broker: int, message_id: int) -> None:
        if self.metadata_inflight.get(broker) == message_id:
            del self.metadata_inflight[broker]

    # ================================================================ operations: topology

    def start_broker(self, broker: int, incarnation: str | None = None) -> Broker:
        """Start broker `broker` as a new incarnation (first start or restart)."""
        current = self.brokers.get(broker)
        if current is not None and current.alive:
            raise ValueError(f"broker {broker} is running")
        self._incarnations += 1
        label = incarnation if incarnation is not None else f"b{broker}-i{self._incarnations}"
        disk = self.disks.setdefault(broker, Disk())
        process = self.broker_class(self, broker, label, self._incarnations, disk)
        self.brokers[broker] = process
        self.controlled_shutdowns.pop(broker, None)
        self.metadata_inflight.pop(broker, None)
        process.start()
        if self.controller.log:
            self._notify(broker)
        return process

    def start(self, brokers: Sequence[int], max_ms: int | None = None) -> None:
        """Start brokers and let time pass until every one is registered and unfenced."""
        for broker in brokers:
            self.start_broker(broker)
        self.wait_unfenced(brokers, max_ms)

    def wait_unfenced(self, brokers: Sequence[int], max_ms: int | None = None) -> bool:
        limit = self.now_ms + (max_ms if max_ms is not None else 10 * self.broker_config.broker_heartbeat_interval_ms)
        interval = max(1, self.broker_config.broker_heartbeat_interval_ms // 4)
        self.settle()
        while not all(self._unfenced(b) for b in brokers):
            if self.now_ms >= limit:
                return False
            self.advance(interval)
        return True

    def _unfenced(self, broker: int) -> bool:
        registration = self.controller.broker(broker)
        process = self.brokers.get(broker)
        return (
            registration is not None and not registration.fenced and process is not None and process.alive
            and registration.epoch == process.epoch
        )

    def create_topic(
        self, topic: str, assignment: Sequence[Sequence[int]], configs: dict[str, str] | None = None
    ) -> Error:
        error = self.controller.create_topic(topic, assignment, configs)
        self.controller_changed()
        return error

    def controller_changed(self) -> None:
        """Call after driving `self.controller` directly (admin operations)."""
        if len(self.controller.log) != self._log_seen:
            self._after_controller()

    # ================================================================ operations: clients

    def produce(
        self, topic: str, partition: int = 0, acks: int = -1, count: int = 1, to: int | None = None
    ) -> ProduceState:
        """A producer appends `count` records (acks -1 = all, 0, 1) to the broker `to`, by default
        the controller's current leader. acks=all completes later (§8)."""
        request = self.next_id()
        tp = (topic, partition)
        target = to
        if target is None:
            registration = self.controller.partition(topic, partition)
            target = -1 if registration is None else registration.leader
        record_ids = tuple(self.next_id() for _ in range(count))
        state = ProduceState(request, topic, partition, acks, target, record_ids)
        self.produces[request] = state
        if acks == -1:
            self.pending_produces[request] = None
        process = self.brokers.get(target)
        if process is None or not process.alive:
            state.status, state.error = "failed", Error.NOT_LEADER_OR_FOLLOWER.name
            self.pending_produces.pop(request, None)
            return state
        error, _ = process.produce(tp, record_ids, acks, request)
        if error is not Error.NONE:
            state.status, state.error = "failed", error.name
            self.pending_produces.pop(request, None)
        elif acks != -1:
            state.status = "acked"
        return state

    def on_produce_decided(
        self, leader: int, tp: TopicPartition, acks: int, isr_size: int, min_isr: int, error: Error
    ) -> None:
        outcome = "APPENDED" if error is Error.NONE else error.name
        decision = ProduceDecision(self.steps, tp[0], tp[1], leader, acks, isr_size, min_isr, outcome)
        self.produce_decisions.append(decision)

    def on_produce_appended(self, request: int, base_offset: int) -> None:
        state = self.produces.get(request)
        if state is not None:
            state.base_offset = base_offset

    def on_produce_complete(self, request: int, error: Error) -> None:
        state = self.produces.get(request)
        if state is None or state.status != "pending":
            return
        self.pending_produces.pop(request, None)
        if error is not Error.NONE:
            state.status, state.error = "failed", error.name
            return
        state.status = "acked"
        for index, record in enumerate(state.record_ids):
            self.acked.append(AckedRecord(state.topic, state.partition, state.base_offset + index, record, request))

    def fetch_now(self, broker: int, leader: int | None = None) -> int:
        """Make follower `broker` send a Fetch now to `leader` (default: every leader it follows)."""
        process = self.brokers.get(broker)
        if process is None or not process.alive:
            return 0
        leaders = sorted({p.leader for p in process.partitions.values() if p.role == "follower" and p.leader >= 0})
        sent = 0
        for target in leaders:
            if (leader is None or target == leader) and process.fetch_from(target):
                sent += 1
        return sent

    # ================================================================ operations: faults

    def crash(self, broker: int, lose: str = LOSE_NONE) -> None:
        """The process dies. `lose`: none (the disk is intact), unflushed (appended but not
        flushed records are gone), disk (the disk is replaced by an empty one)."""
        process = self.brokers.get(broker)
        if process is None or not process.alive:
            raise ValueError(f"broker {broker} is not running")
        process.end(CRASHED)
        disk = self.disks[broker]
        disk.clean_shutdown_epoch = -1
        if lose == LOSE_UNFLUSHED:
            for log in disk.logs.values():
                log.lose_unflushed()
        elif lose == LOSE_DISK:
            self.disks[broker] = Disk()
        elif lose != LOSE_NONE:
            raise ValueError(f"lose must be none, unflushed or disk, not {lose!r}")
        if lose != LOSE_NONE:
            self.data_loss.append(DataLoss(self.steps, broker, lose))
        self.controlled_shutdowns.pop(broker, None)
        if self.trace is not None:
            self.trace.append(("crash", broker, lose, self.now_ms))

    def restart(self, broker: int) -> Broker:
        process = self.brokers.get(broker)
        if process is not None and process.alive:
            raise ValueError(f"broker {broker} is running")
        return self.start_broker(broker)

    def stop_broker(self, broker: int) -> None:
        """Controlled shutdown completed (SHUTDOWN_NOW): flush and exit cleanly."""
        process = self.brokers[broker]
        process.flush()
        process.end(STOPPED)
        process.disk.clean_shutdown_epoch = process.epoch

    def controlled_shutdown(self, broker: int) -> None:
        process = self.brokers.get(broker)
        if process is None or process.status != RUNNING:
            raise ValueError(f"broker {broker} is not running")
        process.begin_controlled_shutdown()

    def fail_over_controller(self, zombie: bool = False) -> None:
        """A new active controller (soft state rebuilt, controller.md §4.5). With `zombie`, the old
        one keeps answering AlterPartition from its frozen state, and every broker sends there
        until a NOT_CONTROLLER makes it rediscover the active one (§12, B21)."""
        if zombie:
            self.zombie = copy.deepcopy(self.controller)
            self._zombie_answers = {}
            for process in self.brokers.values():
                if process.alive:
                    process.manager.route = ZOMBIE_NODE
        self.controller.fail_over()

    def retire_zombie(self) -> None:
        self.zombie = None
        self._zombie_answers = {}
        for process in self.brokers.values():
            if process.alive:
                process.manager.route = CONTROLLER_NODE

    def lag_metadata(self, broker: int) -> None:
        """Freeze the broker's metadata: notices to it are held until `sync_metadata`."""
        self.metadata_holds[broker] = None
        self.network.hold(Selector(METADATA, CONTROLLER_NODE, broker))

    def sync_metadata(self, broker: int, offset: int | None = None) -> None:
        """Apply the log up to `offset` on the broker; without one, catch up fully and stop lagging."""
        process = self.brokers.get(broker)
        if offset is None:
            self.metadata_holds.pop(broker, None)
            self.network.release(Selector(METADATA, CONTROLLER_NODE, broker))
        if process is not None and process.alive:
            process.apply_metadata(self.metadata_end() if offset is None else offset)

    def flush(self, broker: int) -> None:
        process = self.brokers.get(broker)
        if process is not None and process.alive:
            process.flush()

    def hold(self, selector: Selector) -> None:
        self.network.hold(selector)

    def release(self, selector: Selector | None = None) -> None:
        self.network.release(selector)
        if selector is None:
            self.metadata_holds.clear()

    def heal(
        self,
        restart: bool = False,
        until: Callable[[], bool] | None = None,
        max_ms: int | None = None,
        stable_ms: int | None = None,
        check_every_ms: int | None = None,
        probe: bool = False,
    ) -> bool:
        """Faults stop: holds and metadata lag end, the zombie retires, (optionally) stopped and
        crashed brokers restart; then time passes with every message delivered. With `until`,
        returns as soon as it has held continuously for `stable_ms` (default: a lag window and a
        fetch interval — long enough for a spurious shrink to show), else whether it holds at the
        end of `max_ms`.

        With `probe`, a client keeps writing: once every broker the faults left down has had a
        session timeout to be fenced (and its leaders a fetch interval to learn it), one acks=all
        record goes to every partition's leader. (The leader recomputes its HW only on appends,
        follower progress, ISR commits and leadership changes — leader.md §7 — so without traffic
        a HW held back by a replica that has since become ineligible stays put; a probe is what a
        live workload would provide.) Not a lag window later: a replica that stopped within the
        last lag window still counts as caught up then, and only its ineligibility keeps it from
        holding the probe back (leader.md §7 step 3, KAFKA-15021) — a later probe would hide a
        leader that ignores it. After the session timeout eligibility only grows (faults have
        stopped: nothing is fenced or shut down any more), so a replica that is eligible when the
        probe's HW is computed stays so, and nothing it holds back is stranded."""
        self.release()
        self.retire_zombie()
        for broker in list(self.metadata_holds):
            self.sync_metadata(broker)
        if restart:
            for broker, process in sorted(self.brokers.items()):
                if not process.alive:
                    self.start_broker(broker)
        config = self.broker_config
        session = self.config.broker_session_timeout_ms
        lag = config.replica_lag_time_max_ms
        budget = max_ms if max_ms is not None else 3 * session + 4 * lag + config.request_timeout_ms
        stable = stable_ms if stable_ms is not None else lag + config.replica_fetch_wait_max_ms
        every = check_every_ms if check_every_ms is not None else max(1, config.replica_fetch_wait_max_ms)
        if probe:
            self.advance(session + config.replica_fetch_wait_max_ms)
            for topic, partition in sorted(self.controller.partitions):
                self.produce(topic, partition, -1, 1)
        deadline = self.now_ms + budget
        held_since: int | None = None
        while self.now_ms < deadline:
            self.advance(min(every, deadline - self.now_ms))
            if until is None:
                continue
            if until():
                if held_since is None:
                    held_since = self.now_ms
                if self.now_ms - held_since >= stable:
                    return True
            else:
                held_since = None
        return True if until is None else until()

    # ================================================================ observation

    def observe(self) -> ClusterObservation:
        """The ground truth now. Views of what did not change are the same objects as before, and
        a map whose views all stayed is the very map the last observation held (`_same_map`), so a
        reader can tell "nothing changed" by identity (the property monitor skips such steps)."""
        controller = self.controller
        views = self._partition_views
        partitions: dict[TopicPartition, PartitionView] = {}
        for key, state in controller.partitions.items():
            cached = views.get(key)
            if cached is None or cached[0] is not state:
                cached = views[key] = (state, PartitionView(
                    key[0], key[1], state.replicas, state.isr, state.leader, state.leader_epoch, state.partition_epoch,
                    state.elr, state.leader_recovery_state.name, controller.change_rules(key[0]).min_isr,
                ))
            partitions[key] = cached[1]
        registration_views = self._registration_views
        registrations: dict[int, RegistrationView] = {}
        for b, r in controller.brokers.items():
            seen = registration_views.get(b)
            if seen is None or seen[0] is not r:
                seen = registration_views[b] = (r, RegistrationView(b, r.epoch, r.fenced, r.in_controlled_shutdown))
            registrations[b] = seen[1]
        brokers: dict[int, BrokerView] = {}
        replicas: dict[tuple[int, str, int], ReplicaView] = {}
        broker_views = self._broker_views
        replica_views = self._replica_views
        disks = self.disks
        for broker, process in self.brokers.items():
            alive = process.alive
            manager = process.manager
            serial = process.serial
            outstanding = manager.outstanding() if alive else ()
            requests = manager.inflight_requests() if alive else 0
            signature: tuple[object, ...] = (
                serial, process.status, process.epoch, process.cache.offset, requests, outstanding,
            )
            cached_broker = broker_views.get(broker)
            if cached_broker is None or cached_broker[0] != signature:
                cached_broker = broker_views[broker] = (signature, BrokerView(
                    broker, process.status, process.incarnation, process.epoch, process.cache.offset,
                    requests, outstanding, process.config.replica_lag_time_max_ms,
                ))
            brokers[broker] = cached_broker[1]
            hosted = process.partitions if alive else None
            broker_replicas = replica_views.get(broker)
            if broker_replicas is None:
                broker_replicas = replica_views[broker] = {}
            for tp, log in disks[broker].logs.items():
                partition = None if hosted is None else hosted.get(tp)
                snapshot = log.snapshot()
                if partition is None:
                    signature = (serial, alive, snapshot, log.hw)
                else:
                    signature = (
                        serial, partition.role, partition.leader, partition.leader_epoch,
                        partition.partition_epoch, snapshot, log.hw, partition.state, partition.epoch_start_offset,
                        partition.state_since_ms, partition.behind_followers(),
                    )
                cached_replica = broker_replicas.get(tp)
                if cached_replica is None or cached_replica[0] != signature:
                    cached_replica = broker_replicas[tp] = (signature, self._replica_view(
                        broker, tp, log.hw, snapshot, partition, alive,
                    ), (broker, tp[0], tp[1]))
                replicas[cached_replica[2]] = cached_replica[1]
        shutting = frozenset(
            b for b, serial in self.controlled_shutdowns.items()
            if b in self.brokers and self.brokers[b].serial == serial
        )
        last = self._last_maps
        if last is not None:
            partitions = _same_map(partitions, last[0])
            registrations = _same_map(registrations, last[1])
            brokers = _same_map(brokers, last[2])
            replicas = _same_map(replicas, last[3])
            shutting = last[4] if shutting == last[4] else shutting
        self._last_maps = (partitions, registrations, brokers, replicas, shutting)
        return ClusterObservation(
            self.steps, self.now_ms, partitions, registrations, brokers, replicas, self._frozen("acked", self.acked),
            self._frozen("admissions", self.admissions), self._frozen("data_loss", self.data_loss), shutting,
            self._frozen_map("epoch_leaders", self.epoch_leaders), self._frozen_keys("unclean", self.unclean),
            len(self.pending_produces), len(self.network.inflight), self.metadata_end(),
            self._frozen_keys("leader_branches", self.leader_branches),
            self._frozen_keys("alter_partition_outcomes", self.alter_partition_outcomes),
            self._frozen_map("epoch_isrs", self.epoch_isrs),
            self._frozen("produce_decisions", self.produce_decisions),
        )

    @staticmethod
    def _replica_view(
        broker: int, tp: TopicPartition, hw: int, snapshot: tuple[tuple[int, int], ...], partition: Partition | None,
        alive: bool,
    ) -> ReplicaView:
        if partition is None:
            return ReplicaView(broker, tp[0], tp[1], "none" if alive else "offline", -1, -1, -1, snapshot, hw)
        state = partition.state
        leading = partition.role == LEADER
        return ReplicaView(
            broker, tp[0], tp[1], partition.role, partition.leader, partition.leader_epoch,
            partition.partition_epoch, snapshot, hw,
            state.isr if leading else (), state.maximal_isr if leading else (), state.kind,
            () if isinstance(state, CommittedPartitionState) else state.sent.isr_ids,
            partition.epoch_start_offset,
            partition.state_since_ms if leading else -1,
            tuple(FollowerProgress(r, *progress) for r, progress in partition.behind_followers()) if leading else (),
        )

    def _frozen(self, name: str, items: list[Any]) -> tuple[Any, ...]:
        """An immutable copy of an append-only list, rebuilt only when it grew."""
        cached = self._frozen_lists.get(name)
        if cached is None or len(cached) != len(items):
            cached = self._frozen_lists[name] = tuple(items)
        return cached

    def _frozen_keys(self, name: str, items: dict[Key, None]) -> frozenset[Key]:
        """An immutable copy of a grow-only set, rebuilt only when it grew (the observation
        keeps the same object otherwise, which tells its readers nothing new was reached)."""
        cached = self._frozen_sets.get(name)
        if cached is None or len(cached) != len(items):
            cached = self._frozen_sets[name] = frozenset(items)
        return cached

    def _frozen_map(self, name: str, items: dict[Key, Any]) -> dict[Key, Any]:
        """A copy of a grow-only map (entries are added, never changed), rebuilt only when it grew."""
        cached = self._frozen_maps.get(name)
        if cached is None or len(cached) != len(items):
            cached = self._frozen_maps[name] = dict(items)
        return cached


def proposal_at_acceptance(sender: Broker | None, key: TopicPartition, request: AlterPartitionRequest,
                           controller_epoch: int) -> str:
    """What the sending leader held of the proposal this request carries for `key` when the
    controller, at partition epoch `controller_epoch`, accepted it (`IsrAdmission.proposal`):
    PROPOSAL_PENDING, the pending ISR change it still counts; PROPOSAL_REPLACED_AT_EQUAL_EPOCH, the
    proposal that metadata of equal partition epoch replaced while its request was queued or in
    flight (leader.md §10, `Partition.makeLeader`), accepted at that same partition epoch;
    PROPOSAL_OTHER otherwise (e.g. a proposal the leader itself replaced or reverted)."""
    held: str = PROPOSAL_OTHER
    partition = None if sender is None else sender.partitions.get(key)
    item = next((item for topic in request.topics for item in topic.partitions if item.partition == key[1]), None)
    if partition is None or item is None:
        return held

    carried = (item.leader_epoch, item.partition_epoch, tuple(m.broker for m in item.new_isr))

    def carries(sent: LeaderAndIsr | None) -> bool:
        return sent is not None and carried == (sent.leader_epoch, sent.partition_epoch, sent.isr_ids)

    state = partition.state
    if not isinstance(state, CommittedPartitionState) and carries(state.sent):
        held = PROPOSAL_PENDING
    elif carries(partition.replaced_at_equal_epoch) and item.partition_epoch == controller_epoch:
        held = PROPOSAL_REPLACED_AT_EQUAL_EPOCH
    return held
