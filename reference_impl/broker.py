"""A broker process — one incarnation — and the disk that outlives it.

The broker registers with the controller, heartbeats, applies the metadata log up to the offset
it has been sent (leader.md §10), hosts its partitions in leader or follower role, runs one
fetch session per leader (§13), the isr-expiration task (§6) and one AlterPartitionManager (§12).
A crash ends the process; `Disk` keeps the logs (minus what the crash loses); a restart is a new
`Broker` with a new incarnation and, once registered, a new broker epoch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .alter_partition_manager import AlterPartitionManager
from .broker_config import BrokerConfig
from .errors import Error
from .follower import FetchSession, FollowerRules
from .leader_rules import LeaderRules
from .messages import (
    AlterPartitionResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    HeartbeatRequest,
    HeartbeatResponse,
)
from .metadata_cache import MetadataCache, TopicPartition
from .partition import FOLLOWER, LEADER, Partition
from .release import MetadataVersion, ReleaseProfile
from .replica_log import ReplicaLog
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
    FetchPartitionResponse,
    FetchRequest,
    FetchResponse,
    Message,
    Node,
)
from .state import PartitionState
from .timers import Timer

if TYPE_CHECKING:
    from .cluster import Cluster

RUNNING = "running"
SHUTTING_DOWN = "shutting_down"
STOPPED = "stopped"
CRASHED = "crashed"


class Disk:
    """What survives a broker process: its logs, and the epoch it shut down cleanly with."""

    def __init__(self) -> None:
        self.logs: dict[TopicPartition, ReplicaLog] = {}
        self.clean_shutdown_epoch = -1
        """`PreviousBrokerEpoch` for the next registration (controller.md §4.7); -1 after a crash."""

    def log(self, tp: TopicPartition) -> ReplicaLog:
        log = self.logs.get(tp)
        if log is None:
            log = self.logs[tp] = ReplicaLog()
        return log


class Broker:
    def __init__(self, cluster: Cluster, broker_id: int, incarnation: str, serial: int, disk: Disk) -> None:
        self.cluster = cluster
        self.id = broker_id
        self.incarnation = incarnation
        self.serial = serial
        self.disk = disk
        self.alive = True
        """Running or shutting down: kept by the `status` setter, read on every delivery and timer."""
        self._status = RUNNING
        self.epoch = -1
        """The broker epoch of this incarnation's registration; -1 until registered."""
        self.cache = MetadataCache()
        self.partitions: dict[TopicPartition, Partition] = {}
        self.sessions: dict[int, FetchSession] = {}
        self.manager: AlterPartitionManager = cluster.manager_class(self)
        self.leader_rules: LeaderRules = cluster.leader_rules
        self.follower_rules: FollowerRules = cluster.follower_rules
        self.config: BrokerConfig = cluster.broker_config
        self.profile: ReleaseProfile = cluster.profile
        self.metadata_version: MetadataVersion = cluster.config.metadata_version
        self.default_min_isr = cluster.config.min_insync_replicas
        self.fenced = True
        """As the last heartbeat response said."""
        self.registering = False
        self.catch_up_heartbeat = False
        self.caught_up = False
        """The cache has reached this incarnation's registration; partitions may be touched."""
        self.last_heartbeat: HeartbeatResponse | None = None
        self._heartbeat_request: HeartbeatRequest | None = None
        """The last heartbeat sent: a frozen value, sent again while nothing in it changed."""
        self.registration_error: Error | None = None
        self.produce_partitions: dict[int, TopicPartition] = {}
        low, high = self.profile.alter_partition_versions
        limit = self.config.alter_partition_max_version
        self.alter_partition_version = high if limit is None else max(low, min(high, limit))

    # ---------------------------------------------------------------- context

    @property
    def now_ms(self) -> int:
        return self.cluster.now_ms

    @property
    def status(self) -> str:
        """running | shutting_down | stopped | crashed."""
        return self._status

    @status.setter
    def status(self, status: str) -> None:
        self._status = status
        self.alive = status in (RUNNING, SHUTTING_DOWN)

    @property
    def shutting_down(self) -> bool:
        return self.status == SHUTTING_DOWN

    def next_item_id(self) -> int:
        return self.cluster.next_id()

    def send(self, kind: str, dst: Node, payload: object, correlation: int = 0, dst_serial: int = 0) -> Message:
        return self.cluster.send(kind, self.id, dst, payload, correlation, self.serial, dst_serial)

    def schedule(self, delay_ms: int, kind: str, key: int = 0, generation: int = 0) -> None:
        cluster = self.cluster
        cluster.timers.schedule(Timer(cluster.now_ms + delay_ms, kind, self.id, self.serial, key, generation))

    def partition(self, tp: TopicPartition) -> Partition:
        partition = self.partitions.get(tp)
        if partition is None:
            partition = self.partitions[tp] = self.cluster.partition_class(self, tp[0], tp[1], self.disk.log(tp))
        return partition

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        self.register()
        self.schedule(self.config.broker_heartbeat_interval_ms, "heartbeat")
        self.schedule(self.config.isr_expiration_interval_ms, "isr_expiration")
        if self.config.log_flush_interval_ms is not None:
            self.schedule(self.config.log_flush_interval_ms, "flush")

    def register(self) -> None:
        version = self.profile.broker_registration_versions[1]
        self.registering = True
        self.send(REGISTRATION, CONTROLLER_NODE, BrokerRegistrationRequest(
            self.id, self.incarnation, self.disk.clean_shutdown_epoch, version
        ))

    def heartbeat(self) -> None:
        """controller.md §4.2: every interval; WantShutDown while shutting down."""
        if self.epoch < 0:
            if not self.registering:
                self.register()
            return
        request = self._heartbeat_request
        shutting_down = self._status == SHUTTING_DOWN
        if (
            request is None or request.broker_epoch != self.epoch
            or request.current_metadata_offset != self.cache.offset or request.want_shut_down != shutting_down
        ):
            request = self._heartbeat_request = HeartbeatRequest(
                self.id, self.epoch, self.cache.offset, want_fence=False, want_shut_down=shutting_down
            )
        self.send(HEARTBEAT, CONTROLLER_NODE, request)

    def begin_controlled_shutdown(self) -> None:
        if self.status == RUNNING:
            self.status = SHUTTING_DOWN
            self.heartbeat()

    def flush(self) -> None:
        for log in self.disk.logs.values():
            log.flush()

    def end(self, status: str) -> None:
        """The process stops (clean shutdown or crash); pending produce requests fail."""
        self.status = status
        for partition in self.partitions.values():
            partition.fail_produces(Error.NETWORK_EXCEPTION)

    # ---------------------------------------------------------------- inbound

    def receive(self, message: Message) -> None:
        kind = message.kind
        if kind == FETCH_RESPONSE:
            self.on_fetch_response(message)
        elif kind == FETCH:
            self.on_fetch(message)
        elif kind == ALTER_PARTITION_RESPONSE:
            payload = message.payload
            assert isinstance(payload, AlterPartitionResponse)
            self.manager.on_response(message.correlation, payload)
        elif kind == HEARTBEAT_RESPONSE:
            self.on_heartbeat_response(message)
        elif kind == REGISTRATION_RESPONSE:
            self.on_registration_response(message)
        elif kind == METADATA:
            self.apply_metadata(self.cluster.metadata_end())

    def on_disconnect(self, kind: str, correlation: int) -> None:
        """A request of ours, or its response, was lost (dropped, or the peer was down)."""
        if kind == FETCH:
            for session in self.sessions.values():
                if session.inflight == correlation:
                    session.inflight = None
                    self.schedule(self.config.replica_fetch_backoff_ms, "fetch", session.leader, session.generation)
        elif kind == ALTER_PARTITION:
            self.manager.on_disconnect(correlation)
        elif kind == REGISTRATION:
            self.registering = False
        elif kind == HEARTBEAT:
            self.catch_up_heartbeat = False

    def on_timer(self, timer: Timer) -> None:
        kind = timer.kind
        if kind == "fetch":
            session = self.sessions.get(timer.key)
            if session is not None and session.generation == timer.generation and session.inflight is None:
                self.fetch_from(timer.key)
        elif kind == "heartbeat":
            self.heartbeat()
            self.schedule(self.config.broker_heartbeat_interval_ms, "heartbeat")
        elif kind == "isr_expiration":
            for partition in list(self.partitions.values()):
                if partition.role == LEADER:
                    partition.maybe_shrink_isr()
            self.schedule(self.config.isr_expiration_interval_ms, "isr_expiration")
        elif kind == "alter_partition_retry":
            self.manager.on_retry_timer(timer.generation)
        elif kind == "produce_timeout":
            tp = self.produce_partitions.pop(timer.key, None)
            if tp is not None and tp in self.partitions:
                self.partitions[tp].expire_produce(timer.key)
        elif kind == "flush":
            self.flush()
            interval = self.config.log_flush_interval_ms
            if interval is not None:
                self.schedule(interval, "flush")

    def schedule_alter_partition_retry(self, generation: int) -> None:
        self.schedule(self.config.alter_partition_retry_backoff_ms, "alter_partition_retry", 0, generation)

    # ---------------------------------------------------------------- controller RPCs

    def on_registration_response(self, message: Message) -> None:
        response = message.payload
        assert isinstance(response, BrokerRegistrationResponse)
        self.registering = False
        self.registration_error = response.error
        if response.error is Error.NONE:
            self.epoch = response.broker_epoch
            self.disk.clean_shutdown_epoch = -1
            self.heartbeat()

    def on_heartbeat_response(self, message: Message) -> None:
        response = message.payload
        assert isinstance(response, HeartbeatResponse)
        self.catch_up_heartbeat = False
        self.last_heartbeat = response
        if response.error is Error.STALE_BROKER_EPOCH:
            if not self.registering:
                self.register()
            return
        if response.error is not Error.NONE:
            return
        self.fenced = response.is_fenced
        if response.should_shut_down and self.shutting_down:
            self.cluster.stop_broker(self.id)

    # ---------------------------------------------------------------- metadata (§10)

    def apply_metadata(self, up_to: int) -> None:
        """Replay the controller's log up to `up_to`, then move every changed partition into its role.
        A process replays only once registered, and touches partitions only once its cache has
        reached its own registration (KRaft's initial metadata catch-up before the replica
        manager starts): a restarted broker never acts on the partition state of its past."""
        cache = self.cache
        if up_to <= cache.offset or self.epoch < 0:
            return
        changed: dict[TopicPartition, None] = {}
        for offset, record in self.cluster.metadata_records(cache.offset, up_to):
            tp = cache.replay(offset, record)
            if tp is not None:
                changed[tp] = None
        if not self.caught_up:
            registration = cache.brokers.get(self.id)
            if registration is not None and registration.epoch == self.epoch:
                self.caught_up = True
                changed = dict.fromkeys(cache.partitions)
        if self.caught_up:
            for tp in changed:
                self.on_partition_change(tp, cache.partitions[tp])
        if self.fenced and self.epoch >= 0 and not self.catch_up_heartbeat:
            self.catch_up_heartbeat = True
            self.heartbeat()

    def on_partition_change(self, tp: TopicPartition, registration: PartitionState) -> None:
        if self.id not in registration.replicas:
            if tp in self.partitions:
                self.partitions[tp].stop()
            return
        partition = self.partition(tp)
        if registration.leader == self.id:
            partition.make_leader(registration)
        elif partition.make_follower(registration) and self.follower_rules.should_fetch(partition):
            self.start_fetching(partition.leader)

    # ---------------------------------------------------------------- fetching (§13)

    def start_fetching(self, leader: int) -> None:
        session = self.sessions.get(leader)
        if session is None:
            session = self.sessions[leader] = FetchSession(leader)
        if session.inflight is None:
            self.fetch_from(leader)

    def fetch_from(self, leader: int) -> bool:
        """Send one Fetch to `leader` for every partition this broker follows there."""
        session = self.sessions.get(leader)
        if session is None:
            session = self.sessions[leader] = FetchSession(leader)
        rules = self.follower_rules
        entries = [
            partition.fetch_entry()
            for partition in self.partitions.values()
            if partition.role == FOLLOWER and partition.leader == leader and rules.should_fetch(partition)
        ]
        if not entries:
            session.inflight = None
            return False
        message = self.send(FETCH, leader, FetchRequest(self.id, rules.fetch_broker_epoch(self), tuple(entries)))
        session.inflight = message.id
        session.generation += 1
        return True

    def on_fetch(self, message: Message) -> None:
        """Leader side of a follower Fetch (§4)."""
        request = message.payload
        assert isinstance(request, FetchRequest)
        responses = []
        for entry in request.partitions:
            partition = self.partitions.get((entry.topic, entry.partition))
            if partition is None or partition.role != LEADER:
                responses.append(FetchPartitionResponse(
                    entry.topic, entry.partition, Error.NOT_LEADER_OR_FOLLOWER, fetch_offset=entry.fetch_offset,
                    leader_epoch=entry.current_leader_epoch,
                ))
            else:
                responses.append(partition.handle_follower_fetch(entry, request.replica_id, request.broker_epoch))
        self.send(FETCH_RESPONSE, message.src, FetchResponse(tuple(responses)), message.id, message.src_serial)

    def on_fetch_response(self, message: Message) -> None:
        leader = message.src
        assert isinstance(leader, int)
        session = self.sessions.get(leader)
        if session is None or session.inflight != message.correlation:
            return
        session.inflight = None
        response = message.payload
        assert isinstance(response, FetchResponse)
        again = False
        error = False
        for entry in response.partitions:
            partition = self.partitions.get((entry.topic, entry.partition))
            if (
                partition is None or partition.role != FOLLOWER or partition.leader != leader
                or partition.leader_epoch != entry.leader_epoch
            ):
                continue
            if entry.error is not Error.NONE:
                error = True
            if partition.handle_fetch_response(entry):
                again = True
        delay = self.follower_rules.next_fetch_delay_ms(self, again, error)
        if delay == 0:
            self.fetch_from(leader)
        else:
            self.schedule(delay, "fetch", leader, session.generation)

    # ---------------------------------------------------------------- produce (§8)

    def produce(self, tp: TopicPartition, record_ids: tuple[int, ...], acks: int, request: int) -> tuple[Error, int]:
        partition = self.partitions.get(tp)
        if partition is None:
            return Error.NOT_LEADER_OR_FOLLOWER, -1
        if acks == -1:
            self.produce_partitions[request] = tp
        error, base = partition.append_as_leader(record_ids, acks, request)
        if error is not Error.NONE:
            self.produce_partitions.pop(request, None)
        elif acks == -1 and request in self.produce_partitions:
            self.schedule(self.config.request_timeout_ms, "produce_timeout", request)
        return error, base

    def produce_decided(self, tp: TopicPartition, acks: int, isr_size: int, min_isr: int, error: Error) -> None:
        """Harness ground truth: this leader's §8 admission decision, for P-ADM."""
        self.cluster.on_produce_decided(self.id, tp, acks, isr_size, min_isr, error)

    def produce_appended(self, request: int, base_offset: int) -> None:
        self.cluster.on_produce_appended(request, base_offset)

    def complete_produce(self, request: int, error: Error) -> None:
        self.produce_partitions.pop(request, None)
        self.cluster.on_produce_complete(request, error)

