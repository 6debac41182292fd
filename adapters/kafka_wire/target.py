"""kafka-wire: a controller-level Target that plays ghost brokers against a KRaft controller.

Every scenario/engine operation becomes the RPCs a broker or an admin client would send
(controller.md §9.2): BrokerRegistration, BrokerHeartbeat, UnregisterBroker, CreateTopics,
CreatePartitions, AlterPartition (v0/v1 by topic name, v2/v3 by topic id), ElectLeaders and
AlterPartitionReassignments. State is observed by replaying the controller's metadata log
(`isrcheck.adapters.kafka_wire.metadata_image`), never by asking the controller (docs/wire.md).

What makes a real-time controller mean what the logical-time reference means:

* **fresh system per run** — each `open` takes a new `RunNamespace` (broker ids, topic names)
  and registers one extra *anchor* broker; `close` deletes the run's topics (DeleteTopics) and
  unregisters every ghost of the run, so a long-lived controller does not grow with the campaign;
* **sessions** — the reference never lets time pass, so no session expires on its own; the
  ghosts heartbeat in the background without changing state (UNFENCED: same flags and offset;
  FENCED: WantFence; CONTROLLED_SHUTDOWN: only while the anchor reports an offset below every
  shutdown offset, so the shutdown cannot complete, §4.2 — then the anchor is restored);
* **fence_broker** ("its session expires, it alone", §4.3) — an unfenced broker sends WantFence
  (the same `handleBrokerFenced` records); one in controlled shutdown completes it (lagging
  brokers' offsets raised for that one heartbeat and restored), except on 3.3/3.5, where its
  session is left to expire (an expiry keeps the shutdown state there: K2); one already fenced is left to
  expire for real on 4.x, where expiry writes a redundant FENCE the reference writes too (not
  waited for: it changes nothing observed). Its heartbeats stop; a later new-incarnation
  registration that gets DUPLICATE_BROKER_REGISTRATION (§4.1 check 3, 4.x) waits until the
  controller has expired the old session and retries.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from isrcheck.adapters.base import (
    BROKER_FIELDS,
    CONTROLLER,
    PARTITION_FIELDS,
    Args,
    Result,
    Target,
    TargetFailure,
    UnsupportedConfiguration,
)
from isrcheck.adapters.kafka_wire.controller_endpoints import ControllerEndpoint, EndpointProvider
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.ghost_broker import (
    CAUGHT_UP_OFFSET,
    FinalizedFeatures,
    GhostBroker,
    Session,
    SoftState,
    next_soft_state,
)
from isrcheck.adapters.kafka_wire.metadata_image import LRS_NAMES, MetadataImage
from isrcheck.adapters.kafka_wire.metadata_log import MetadataSource
from isrcheck.adapters.kafka_wire.metadata_records import parse_kafka_uuid
from isrcheck.adapters.kafka_wire.metadata_versions import ELR_FEATURE, METADATA_VERSION_FEATURE, level_of
from isrcheck.adapters.kafka_wire.run_namespace import ANCHOR, NamespaceError, RunNamespace, new_session
from isrcheck.adapters.wire import KafkaConnection, WireError, WireTimeoutError
from isrcheck.adapters.wire.apis import (
    ALTER_PARTITION,
    ALTER_PARTITION_REASSIGNMENTS,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
    ELECT_LEADERS,
    UNREGISTER_BROKER,
    nested_class,
)
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.release import ReleaseProfile, profile_named
from isrcheck.reference_impl.state import LeaderRecoveryState
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32Timedelta

T = TypeVar("T")
SYNC_REUSE_S = 0.02
"""A look within this long after the previous one, with no request sent in between, reuses it: the
log only grows by what requests cause, plus NoOps and session expiries, which nothing needs to see
within 20 ms (waits for an expiry look again every 50 ms)."""
NULL_TOPIC_ID = uuid.UUID(int=0)
"""A DeleteTopics v6 entry that names its topic carries the zero id (`ControllerApis.deleteTopics`)."""
REQUEST_TIMEOUT = i32Timedelta.parse(datetime.timedelta(seconds=30))
"""The admin RPCs' own timeout field (the controller answers long before)."""
UNKNOWN_TOPIC_ID = uuid.UUID("0badc0de-0000-4000-8000-000000000000")
"""Sent for a topic the run never created: the controller answers UNKNOWN_TOPIC_ID (§2.3)."""


def error_name(code: Any) -> str:
    value = int(code)
    try:
        return Error(value).name
    except ValueError:
        try:
            return ErrorCode(value).name.upper()
        except ValueError:
            return f"ERROR_{value}"


class KafkaWireTarget(Target):
    name = "kafka-wire"
    levels = frozenset({CONTROLLER})
    unsupported_operations = frozenset({"fail_over_controller"})
    observable_fields = frozenset(PARTITION_FIELDS) | frozenset(BROKER_FIELDS)
    """Everything the reference reports is observed exactly (from the metadata log)."""

    def __init__(self, provider: EndpointProvider, *, timeout_s: float = 10.0, name: str = "kafka-wire") -> None:
        self.name = name
        self.provider = provider
        self.timeout_s = timeout_s
        self.lock = threading.RLock()
        self.endpoint: ControllerEndpoint | None = None
        self.connection: KafkaConnection | None = None
        self.source: MetadataSource | None = None
        self.image = MetadataImage()
        self.session_base, self.session_tag = new_session()
        self.runs = 0
        self.ns: RunNamespace | None = None
        self.profile: ReleaseProfile = profile_named("4.1")
        self.ghosts: dict[int, GhostBroker] = {}
        self.anchor: GhostBroker | None = None
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.features = FinalizedFeatures()
        self.cluster_id = ""
        self.session_timeout_ms = 9000
        self.keepalive_error: str | None = None
        self.sent_since_sync = True
        self.last_sync = 0.0
        self._stop = threading.Event()
        self._keepalive: threading.Thread | None = None

    # ================================================================== lifecycle

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        wanted = ControllerSettings.for_run(release, config)
        endpoint = self.provider.endpoint_for(wanted)
        with self.lock:
            self.wire(lambda: self.connect(endpoint))
            self.check_settings(endpoint, wanted)
            self.profile = profile_named(release)
            self.ns = self.next_namespace()
            self.ghosts, self.topic_ids = {}, {}
            self.keepalive_error = None
            self.anchor = GhostBroker(ANCHOR, self.ns.broker(ANCHOR))
            for op in (self.register, self.unfence, self.unfence):
                result = op(self.anchor, "anchor") if op == self.register else op(self.anchor)
                if result["error"] != "NONE":
                    raise TargetFailure("error", f"anchor broker {self.anchor.broker_id}: {result['error']}")
            # the second heartbeat makes the anchor count as caught up: the unfencing one's offset is
            # forgotten when its record replays (BrokerHeartbeatManager.register, §4.2 row 10)
        self.start_keepalive()

    def close(self) -> None:
        with self.lock:
            if self.ns is None:
                return
            ghosts = [*self.ghosts.values(), *([self.anchor] if self.anchor else [])]
            ns, self.ns = self.ns, None
            for ghost in ghosts:
                ghost.session = Session.NONE
            if self.connection is not None and not self.connection.closed:
                self.sync()
                with contextlib.suppress(TargetFailure):
                    self.delete_topics(sorted(t for t in self.image.topic_ids if t.startswith(ns.topic_prefix)))
                for ghost in ghosts:
                    if self.image.broker(ghost.broker_id) is not None:
                        try:
                            self.send(self.classes(UNREGISTER_BROKER).request(broker_id=ghost.broker_id))
                        except TargetFailure:
                            break
            self.ghosts, self.anchor = {}, None

    def delete_topics(self, names: list[str]) -> None:
        """The run cleans up after itself on a long-lived controller: its topics are deleted
        (DeleteTopics → `RemoveTopicRecord`, Kafka 3.9 `ReplicationControlManager.deleteTopic`)
        before its brokers are unregistered. Left behind, their partitions would go leaderless
        with the brokers, and every later unfencing walks every leaderless partition of the
        controller (`handleBrokerUnfenced`): a campaign would slow down with its length."""
        if not names:
            return
        classes = self.classes(DELETE_TOPICS)
        if classes.api_version >= 6:
            state_cls = nested_class(classes.request, "DeleteTopicState")
            request = classes.request(topics=tuple(state_cls(name=n, topic_id=NULL_TOPIC_ID) for n in names),
                                      timeout=_timeout())
        else:
            request = classes.request(topic_names=tuple(names), timeout=_timeout())
        self.send(request)

    def shutdown(self) -> None:
        """End the session: stop heartbeats, close the connection, stop what the provider started —
        the last even when unregistering the run's ghosts fails, so no controller is left running."""
        try:
            self.close()
        finally:
            self._stop.set()
            if self._keepalive is not None:
                self._keepalive.join(2)
            with self.lock:
                if self.connection is not None:
                    self.connection.close()
                if self.source is not None:
                    self.source.close()
            self.provider.close()

    def connect(self, endpoint: ControllerEndpoint) -> None:
        if endpoint != self.endpoint:
            if self.connection is not None:
                self.connection.close()
            if self.source is not None:
                self.source.close()
            self.connection, self.endpoint = None, endpoint
            self.source, self.image = endpoint.open_source(), MetadataImage()
            self.sent_since_sync = True
        if self.connection is None or self.connection.closed:
            self.connection = KafkaConnection(endpoint.host, endpoint.port, self.timeout_s)
            self.features = FinalizedFeatures.from_api_versions(self.connection.api_versions_response)
        self.sync()
        header = self.image.server or {}
        self.session_timeout_ms = int(header.get("session_timeout_ms", endpoint.session_timeout_ms))
        self.cluster_id = str(endpoint.cluster_id or header.get("cluster_id") or self.describe_cluster_id())

    def describe_cluster_id(self) -> str:
        classes = self.classes(DESCRIBE_CLUSTER)
        values: dict[str, Any] = {"include_cluster_authorized_operations": False}
        if classes.api_version >= 1:
            values["endpoint_type"] = 2  # KIP-919: the controller listener describes controllers
        if classes.api_version >= 2:
            values["include_fenced_brokers"] = False  # KIP-1073's v2 field has no default in kio
        return str(self.send(classes.request(**values)).cluster_id)

    def check_settings(self, endpoint: ControllerEndpoint, wanted: ControllerSettings) -> None:
        """Skip (UnsupportedConfiguration) a run this controller cannot serve (controller_settings)."""
        header = self.image.server
        running = endpoint.settings or (ControllerSettings.from_json(header) if header else None)
        if running is not None:
            running.require(wanted)
            return
        problems = []
        level = self.image.features.get(METADATA_VERSION_FEATURE, self.features.levels.get(METADATA_VERSION_FEATURE))
        if level is not None and level != level_of(wanted.metadata_version):
            problems.append(f"metadata.version level is {level}, the run needs {wanted.metadata_version}")
        elr = self.image.features.get(ELR_FEATURE, self.features.levels.get(ELR_FEATURE, 0)) > 0
        if elr != wanted.eligible_leader_replicas:
            problems.append(f"eligible leader replicas are {'on' if elr else 'off'}")
        if problems:
            raise UnsupportedConfiguration("the controller under test differs: " + "; ".join(problems))

    def next_namespace(self) -> RunNamespace:
        while True:
            ns = RunNamespace.for_run(self.session_base, self.session_tag, self.runs)
            self.runs += 1
            if not any(ns.owns(b) for b in self.image.brokers):
                return ns

    # ================================================================== transport

    def wire(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except WireTimeoutError as error:
            self.keep_node_logs()
            raise TargetFailure("timeout", f"{self.name}: {error}") from error
        except WireError as error:
            self.keep_node_logs()
            raise TargetFailure("crash", f"{self.name}: {error}") from error

    def keep_node_logs(self) -> None:
        """A controller that stopped answering: its launcher keeps every node's logs (kafka_launcher)."""
        mark_failed = getattr(self.provider, "mark_failed", None)
        if mark_failed is not None:
            mark_failed()

    def classes(self, api_key: int, cap: int | None = None) -> Any:
        assert self.connection is not None
        return self.wire(lambda: self.connection.classes_for(api_key, cap))  # type: ignore[union-attr]

    def send(self, request: Any) -> Any:
        connection = self.connection
        if connection is None:
            raise TargetFailure("error", f"{self.name}: not connected")
        self.sent_since_sync = True
        response = self.wire(lambda: connection.request(request))
        deadline = time.monotonic() + 30
        while (self.endpoint is not None and len(self.endpoint.voters) > 1
                and getattr(response, "error_code", None) == ErrorCode.not_controller):
            # a quorum of several: follow the active controller, as a broker does (§9.2); while an
            # election is under way the metadata source may still name the old leader, so retry
            if time.monotonic() > deadline:
                break
            self.follow_active_controller()
            response = self.wire(lambda: self.connection.request(request))  # type: ignore[union-attr]
            if getattr(response, "error_code", None) == ErrorCode.not_controller:
                time.sleep(0.2)
        return response

    def follow_active_controller(self) -> None:
        """Reconnect to the quorum leader, which the Raft Fetch of the metadata source names."""
        assert self.endpoint is not None and self.source is not None
        deadline = time.monotonic() + 30
        while True:
            try:
                self.sync()
                address = getattr(self.source, "address", (self.endpoint.host, self.endpoint.port))
                if self.connection is not None:
                    self.connection.close()
                self.connection = KafkaConnection(address[0], address[1], self.timeout_s)
                self.features = FinalizedFeatures.from_api_versions(self.connection.api_versions_response)
                return
            except (WireError, OSError) as error:
                if time.monotonic() > deadline:
                    raise TargetFailure("crash", f"{self.name}: no active controller: {error}") from error
                time.sleep(0.2)

    def sync(self) -> None:
        """Replay what the controller's metadata log gained since the last look."""
        if self.source is None:
            return
        now = time.monotonic()
        if not self.sent_since_sync and now - self.last_sync < SYNC_REUSE_S:
            return
        self.sent_since_sync, self.last_sync = False, now
        entries = self.source.poll()
        if self.source.reset_detected:
            self.source.reset_detected = False
            self.image = MetadataImage()
        self.image.apply_all(entries)

    # ================================================================== ghosts and sessions

    @property
    def namespace(self) -> RunNamespace:
        if self.ns is None:
            raise TargetFailure("error", f"{self.name}: no run is open")
        return self.ns

    def ghost(self, local: int) -> GhostBroker:
        ghost = self.ghosts.get(local)
        if ghost is None:
            try:
                ghost = GhostBroker(local, self.namespace.broker(local))
            except NamespaceError as error:
                raise TargetFailure("error", str(error)) from None
            self.ghosts[local] = ghost
        return ghost

    def current_epoch(self, ghost: GhostBroker) -> int:
        registration = self.image.broker(ghost.broker_id)
        return -1 if registration is None else registration.epoch

    def reconcile(self, ghost: GhostBroker) -> SoftState:
        """A persisted FENCE (e.g. a session expiry) means the soft state is FENCED too (§4.3);
        a FENCE after an ended session's mark is its expiry, so no contact is left to expire."""
        if ghost.session is Session.ENDED and self.image.fence_offsets.get(ghost.broker_id, -2) > ghost.fence_mark:
            ghost.contact_open = False
        registration = self.image.broker(ghost.broker_id)
        if registration is None or registration.fenced:
            ghost.soft = SoftState.FENCED
        return ghost.soft

    def heartbeat(self, ghost: GhostBroker, epoch: int, offset: int, *, want_fence: bool = False,
                  want_shut_down: bool = False) -> Any:
        assert self.connection is not None
        self.sync()  # a stale image would make `before` FENCED after an unfencing (docs/wire.md)
        current = self.current_epoch(ghost)
        before = self.reconcile(ghost)
        response = self.send(ghost.heartbeat_request(self.connection, epoch, offset, want_fence=want_fence,
                                                     want_shut_down=want_shut_down))
        if response.error_code == ErrorCode.none and epoch == current:
            ghost.soft = next_soft_state(before, want_shut_down, bool(response.is_fenced))
            # a state change writes a registration change record whose replay resets the
            # controller's copy of the offset to -1 (BrokerHeartbeatManager.register, §4.2)
            forgets = self.profile.replay_forgets_offset and ghost.soft is not before
            ghost.last_offset = -1 if forgets else offset
            ghost.session, ghost.contact_open, ghost.last_contact = Session.LIVE, True, time.monotonic()
        return response

    def register(self, ghost: GhostBroker, label: str, previous_epoch: int = -1) -> Result:
        assert self.connection is not None
        request = ghost.registration_request(self.connection, self.cluster_id, label, self.features, previous_epoch)
        self.reconcile(ghost)
        response = self.send(request)
        deadline = time.monotonic() + 30
        while response.error_code == ErrorCode.unsupported_version and time.monotonic() < deadline:
            # a controller that had not finalized metadata.version yet when we connected (a quorum
            # still electing its first leader) advertised no features: ask again, then re-register
            time.sleep(0.5)
            assert self.connection is not None
            host, port = self.connection.host, self.connection.port
            self.connection.close()
            self.connection = self.wire(lambda h=host, p=port: KafkaConnection(h, p, self.timeout_s))
            self.features = FinalizedFeatures.from_api_versions(self.connection.api_versions_response)
            request = ghost.registration_request(self.connection, self.cluster_id, label, self.features,
                                                 previous_epoch)
            response = self.send(request)
        if response.error_code == ErrorCode.duplicate_broker_registration and ghost.session is Session.ENDED:
            response = self.register_after_expiry(ghost, request)
        if response.error_code == ErrorCode.none:
            self.sync()
            ghost.epoch = int(response.broker_epoch)
            registration = self.image.broker(ghost.broker_id)
            ghost.soft = SoftState.FENCED if registration is None or registration.fenced else SoftState.UNFENCED
            ghost.last_offset = -1
            ghost.session, ghost.contact_open, ghost.last_contact = Session.LIVE, True, time.monotonic()
        return {"error": error_name(response.error_code), "broker_epoch": int(response.broker_epoch)}

    def register_after_expiry(self, ghost: GhostBroker, request: Any) -> Any:
        """§4.1 check 3 / §9.2: the old session still counts until the controller expires it;
        the reference ended it at `fence_broker`, so wait for the expiry and try again."""
        timeout_s = self.session_timeout_ms / 1000
        deadline = ghost.last_contact + timeout_s * 1.25 + 2.0
        self.sleep_until(ghost.last_contact + timeout_s)
        while True:
            response = self.send(request)
            if response.error_code != ErrorCode.duplicate_broker_registration or time.monotonic() > deadline:
                return response
            self.sleep(min(0.05, timeout_s / 16))

    def unfence(self, ghost: GhostBroker) -> Result:
        return heartbeat_result(self.heartbeat(ghost, self.current_epoch(ghost), CAUGHT_UP_OFFSET))

    def sleep(self, seconds: float) -> None:
        """Sleep without holding the lock, so the keepalive thread goes on (RLock: fully released)."""
        depth = 0
        while True:
            try:
                self.lock.release()
            except RuntimeError:
                break
            depth += 1
        try:
            time.sleep(max(0.0, seconds))
        finally:
            for _ in range(depth):
                self.lock.acquire()

    def sleep_until(self, when: float) -> None:
        self.sleep(when - time.monotonic())

    def fence(self, ghost: GhostBroker) -> None:
        """`fence_broker`: the broker's session expires, it alone (module docstring, §4.3)."""
        self.sync()
        registration = self.image.broker(ghost.broker_id)
        if registration is None:
            ghost.session = Session.ENDED if ghost.session is not Session.NONE else Session.NONE
            return
        state = self.reconcile(ghost)
        if state is SoftState.UNFENCED:
            self.heartbeat(ghost, registration.epoch, ghost.last_offset, want_fence=True)
            must_wait = False
        elif state is SoftState.CONTROLLED_SHUTDOWN and self.profile.fence_keeps_shutdown_state:
            # 3.3/3.5 (K2, docs/known-divergences.md): a session that expires in controlled shutdown
            # keeps the shutdown state (ReplicationControlManager.maybeFenceOneStaleBroker), which
            # completing the shutdown by heartbeat does not: let it expire for real
            must_wait = True
        elif state is SoftState.CONTROLLED_SHUTDOWN:
            must_wait = not self.complete_shutdown(ghost, registration.epoch)
        else:
            # already fenced: only 4.x expires (and re-fences) a fenced broker's session, and that
            # redundant FENCE changes nothing anyone observes — the broker is fenced already, and
            # handleBrokerFenced has no ISR left to shrink (a fenced broker is only ever the last
            # ISR member, which stays with ELR off, or was moved to the ELR at its first fence with
            # it on). So the expiry is left to happen while the run goes on (this ghost's heartbeats
            # have stopped); only a new incarnation's registration needs it, and waits for it
            # (register_after_expiry). Waiting here cost a 4.1 campaign a third of its time
            # (bench/kafka_local_ops.py).
            must_wait = False
        ghost.session = Session.ENDED
        self.sync()
        ghost.fence_mark = self.image.fence_offsets.get(ghost.broker_id, -2)
        if must_wait:
            self.wait_for_expiry(ghost)

    def complete_shutdown(self, ghost: GhostBroker, epoch: int) -> bool:
        """SHUTDOWN_NOW for a broker in controlled shutdown (§4.2): raise every lagging active
        broker's reported offset for this one heartbeat, then put it back."""
        raised = []
        for other in [*self.ghosts.values(), *([self.anchor] if self.anchor else [])]:
            if other is ghost or other.session is not Session.LIVE or self.reconcile(other) is not SoftState.UNFENCED:
                continue
            if other.last_offset < CAUGHT_UP_OFFSET:
                raised.append((other, other.last_offset))
                self.heartbeat(other, other.epoch, CAUGHT_UP_OFFSET)
        response = self.heartbeat(ghost, epoch, ghost.last_offset, want_shut_down=True)
        for other, offset in raised:
            self.heartbeat(other, other.epoch, offset)
        return bool(response.error_code == ErrorCode.none and response.is_fenced)

    def wait_for_expiry(self, ghost: GhostBroker) -> None:
        """Until the controller writes the FENCE of this broker's session expiry (§4.3)."""
        mark = self.image.fence_offsets.get(ghost.broker_id, -2)
        timeout_s = self.session_timeout_ms / 1000
        deadline = ghost.last_contact + timeout_s * 1.25 + 2.0
        self.sleep_until(ghost.last_contact + timeout_s)
        while self.image.fence_offsets.get(ghost.broker_id, -2) == mark:
            if time.monotonic() > deadline:
                raise TargetFailure("timeout", f"broker {ghost.local_id}: its session did not expire in time")
            self.sleep(min(0.05, timeout_s / 16))
            self.sync()
        ghost.contact_open = False

    def start_keepalive(self) -> None:
        if self._keepalive is None or not self._keepalive.is_alive():
            self._keepalive = threading.Thread(target=self.keepalive_loop, name=f"{self.name}-keepalive", daemon=True)
            self._keepalive.start()

    def keepalive_loop(self) -> None:
        while not self._stop.wait(min(2.0, max(0.01, self.session_timeout_ms / 4000))):
            try:
                self.keep_alive()
            except TargetFailure as failure:
                self.keepalive_error = str(failure)
            except (WireError, OSError) as error:  # the controller went away (a crash, or isrcheck ending)
                self.keepalive_error = f"{type(error).__name__}: {error}"

    def keep_alive(self) -> None:
        """One round of heartbeats that change nothing but the contact times (module docstring)."""
        with self.lock:
            if self.ns is None or self.connection is None or self.connection.closed:
                return
            self.sync()
            shutting_down = []
            for ghost in [*([self.anchor] if self.anchor else []), *self.ghosts.values()]:
                if ghost.session is not Session.LIVE or self.current_epoch(ghost) != ghost.epoch:
                    continue
                state = self.reconcile(ghost)
                if state is SoftState.CONTROLLED_SHUTDOWN:
                    shutting_down.append(ghost)
                else:
                    self.heartbeat(ghost, ghost.epoch, ghost.last_offset, want_fence=state is SoftState.FENCED)
            anchor = self.anchor
            if shutting_down and anchor is not None and anchor.soft is SoftState.UNFENCED:
                self.heartbeat(anchor, anchor.epoch, -1)
                for ghost in shutting_down:
                    self.heartbeat(ghost, ghost.epoch, ghost.last_offset)
                self.heartbeat(anchor, anchor.epoch, CAUGHT_UP_OFFSET)

    # ================================================================== operations

    def execute(self, op: str, args: Args) -> Result:
        with self.lock:
            if self.keepalive_error is not None:
                raise TargetFailure("crash", f"{self.name}: background heartbeats failed: {self.keepalive_error}")
            handler = getattr(self, f"op_{op}", None)
            if handler is None or op in self.unsupported_operations:
                raise ValueError(f"unknown operation {op!r}")
            result: Result = handler(args)
            return result

    def op_register_broker(self, args: Args) -> Result:
        ghost = self.ghost(int(args["broker"]))
        previous = args.get("previous_broker_epoch")
        return self.register(ghost, str(args["incarnation"]), -1 if previous is None else int(previous))

    def op_heartbeat(self, args: Args) -> Result:
        ghost = self.ghost(int(args["broker"]))
        self.sync()
        registration = self.image.broker(ghost.broker_id)
        if bool(args.get("caught_up", True)):
            offset = CAUGHT_UP_OFFSET
        else:
            offset = -1 if registration is None else registration.register_offset - 1
        epoch = int(args.get("broker_epoch", self.current_epoch(ghost)))
        return heartbeat_result(self.heartbeat(ghost, epoch, offset, want_fence=bool(args.get("want_fence", False)),
                                               want_shut_down=bool(args.get("want_shut_down", False))))

    def op_unfence_broker(self, args: Args) -> Result:
        self.sync()
        return self.unfence(self.ghost(int(args["broker"])))

    def op_controlled_shutdown(self, args: Args) -> Result:
        self.sync()
        ghost = self.ghost(int(args["broker"]))
        return heartbeat_result(self.heartbeat(ghost, self.current_epoch(ghost), CAUGHT_UP_OFFSET,
                                               want_shut_down=True))

    def op_fail_over_controller(self, args: Args) -> Result:
        """A new active controller (§4.5): the launcher crashes the active one (SIGKILL) and the
        survivors elect another; the ghosts follow it. The new controller rebuilds its soft state
        from the log (fenced as persisted, no controlled shutdown in progress, contacts now), so the
        ghosts' mirrors are reset the same way."""
        endpoint = self.endpoint
        if endpoint is None or endpoint.fail_over is None or self.connection is None:
            raise TargetFailure("error", f"{self.name}: fail_over_controller needs controllers=3")
        current = (self.connection.host, self.connection.port)
        self.connection.close()
        new_leader = self.wire(lambda: endpoint.fail_over(current))
        self.connection = self.wire(lambda: KafkaConnection(new_leader[0], new_leader[1], self.timeout_s))
        self.sync()
        for ghost in [*self.ghosts.values(), *([self.anchor] if self.anchor else [])]:
            registration = self.image.broker(ghost.broker_id)
            ghost.soft = SoftState.FENCED if registration is None or registration.fenced else SoftState.UNFENCED
            ghost.last_offset = -1
            if ghost.session is Session.LIVE:
                ghost.last_contact = time.monotonic()
        if self.anchor is not None and self.anchor.soft is SoftState.UNFENCED:
            self.heartbeat(self.anchor, self.anchor.epoch, CAUGHT_UP_OFFSET)
        return {}

    def op_fence_broker(self, args: Args) -> Result:
        self.fence(self.ghost(int(args["broker"])))
        return {}

    def op_unregister_broker(self, args: Args) -> Result:
        ghost = self.ghost(int(args["broker"]))
        response = self.send(self.classes(UNREGISTER_BROKER).request(broker_id=ghost.broker_id))
        if response.error_code == ErrorCode.none:
            ghost.session, ghost.contact_open, ghost.soft, ghost.epoch = Session.NONE, False, SoftState.FENCED, -1
        return {"error": error_name(response.error_code)}

    def op_create_topic(self, args: Args) -> Result:
        ns = self.namespace
        classes = self.classes(CREATE_TOPICS)
        topic_cls = nested_class(classes.request, "CreatableTopic")
        assignment_cls = nested_class(classes.request, "CreatableReplicaAssignment")
        config_cls = nested_class(classes.request, "CreatableTopicConfig")
        name = ns.topic(str(args["topic"]))
        configs = tuple(
            config_cls(name=str(k), value=str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in (args.get("configs") or {}).items()
        )
        topic = topic_cls(
            name=name, num_partitions=-1, replication_factor=-1, configs=configs,
            assignments=tuple(assignment_cls(partition_index=i, broker_ids=tuple(self.brokers(r)))
                              for i, r in enumerate(args["assignment"])),
        )
        response = self.send(classes.request(topics=(topic,), timeout=_timeout(), validate_only=False))
        result = response.topics[0]
        if result.error_code == ErrorCode.none and getattr(result, "topic_id", None) is not None:
            self.topic_ids[name] = result.topic_id
        return {"error": error_name(result.error_code)}

    def op_create_partitions(self, args: Args) -> Result:
        classes = self.classes(CREATE_PARTITIONS)
        topic_cls = nested_class(classes.request, "CreatePartitionsTopic")
        assignment_cls = nested_class(classes.request, "CreatePartitionsAssignment")
        topic = topic_cls(name=self.namespace.topic(str(args["topic"])), count=int(args["count"]),
                          assignments=tuple(assignment_cls(broker_ids=tuple(self.brokers(r)))
                                            for r in args["assignment"]))
        response = self.send(classes.request(topics=(topic,), timeout=_timeout(), validate_only=False))
        return {"error": error_name(response.results[0].error_code)}

    def op_alter_partition(self, args: Args) -> Result:
        version = int(args["version"])
        assert self.connection is not None
        advertised = self.connection.api_versions.get(ALTER_PARTITION)
        if advertised is None or version not in advertised:
            return {"top_level_error": "UNSUPPORTED_VERSION", "error": None}
        classes = self.classes(ALTER_PARTITION, version)
        if classes.api_version != version:
            return {"top_level_error": "UNSUPPORTED_VERSION", "error": None}
        partition_cls = nested_class(classes.request, "PartitionData")
        topic_cls = nested_class(classes.request, "TopicData")
        ns = self.namespace
        members = [(ns.broker(int(b)), int(e)) for b, e in args["isr"]]
        values: dict[str, Any] = {
            "partition_index": int(args["partition"]), "leader_epoch": int(args["leader_epoch"]),
            "partition_epoch": int(args["partition_epoch"]),
        }
        if version >= 3:
            state_cls = nested_class(classes.request, "BrokerState")
            values["new_isr_with_epochs"] = tuple(state_cls(broker_id=b, broker_epoch=e) for b, e in members)
        else:
            values["new_isr"] = tuple(b for b, _ in members)
        if version >= 1:
            values["leader_recovery_state"] = int(LeaderRecoveryState[str(args.get("leader_recovery_state",
                                                                                   "RECOVERED"))])
        name = ns.topic(str(args["topic"]))
        topic_key = {"topic_name": name} if version < 2 else {"topic_id": self.topic_id(name)}
        request = classes.request(broker_id=ns.broker(int(args["broker"])), broker_epoch=int(args["broker_epoch"]),
                                  topics=(topic_cls(partitions=(partition_cls(**values),), **topic_key),))
        response = self.send(request)
        if response.error_code != ErrorCode.none or not response.topics:
            return {"top_level_error": error_name(response.error_code), "error": None}
        result = response.topics[0].partitions[0]
        return {
            "top_level_error": "NONE",
            "error": error_name(result.error_code),
            "leader": ns.local_broker(int(result.leader_id)),
            "leader_epoch": int(result.leader_epoch),
            "isr": ns.local_brokers(tuple(result.isr)),
            "partition_epoch": int(result.partition_epoch),
            "leader_recovery_state": LRS_NAMES.get(int(getattr(result, "leader_recovery_state", 0)), "RECOVERED"),
        }

    def op_elect_leaders(self, args: Args) -> Result:
        ns = self.namespace
        classes = self.classes(ELECT_LEADERS)
        tp_cls = nested_class(classes.request, "TopicPartitions")
        wanted = [(str(t), int(p)) for t, p in args["partitions"]]
        grouped: dict[str, list[int]] = {}
        for topic, partition in wanted:
            grouped.setdefault(ns.topic(topic), []).append(partition)
        values: dict[str, Any] = {
            "topic_partitions": tuple(tp_cls(topic=t, partitions=tuple(ps)) for t, ps in grouped.items()),
            "timeout": _timeout(),
        }
        if classes.api_version >= 1:
            values["election_type"] = 0 if args["type"] == "preferred" else 1
        response = self.send(classes.request(**values))
        top = error_name(getattr(response, "error_code", 0))
        found = {(r.topic, int(p.partition_id)): error_name(p.error_code)
                 for r in response.replica_election_results for p in r.partition_result}
        return {"errors": [[t, p, found.get((ns.topic(t), p), top if top != "NONE" else "UNKNOWN_SERVER_ERROR")]
                           for t, p in wanted]}

    def op_reassign(self, args: Args) -> Result:
        ns = self.namespace
        classes = self.classes(ALTER_PARTITION_REASSIGNMENTS)
        topic_cls = nested_class(classes.request, "ReassignableTopic")
        partition_cls = nested_class(classes.request, "ReassignablePartition")
        topic = topic_cls(name=ns.topic(str(args["topic"])), partitions=(partition_cls(
            partition_index=int(args["partition"]), replicas=tuple(self.brokers(args["replicas"]))),))
        values: dict[str, Any] = {"timeout": _timeout(), "topics": (topic,)}
        if classes.api_version >= 1:
            values["allow_replication_factor_change"] = True
        response = self.send(classes.request(**values))
        if response.error_code != ErrorCode.none:
            return {"error": error_name(response.error_code)}
        return {"error": error_name(response.responses[0].partitions[0].error_code)}

    def brokers(self, ids: Any) -> list[int]:
        try:
            return self.namespace.brokers([int(b) for b in ids])
        except NamespaceError as error:
            raise TargetFailure("error", str(error)) from None

    def topic_id(self, name: str) -> uuid.UUID:
        known = self.topic_ids.get(name)
        if known is not None:
            return known
        self.sync()
        text = self.image.topic_ids.get(name)
        return UNKNOWN_TOPIC_ID if text is None else parse_kafka_uuid(text)

    # ================================================================== observation

    def observe(self, what: str, args: Args) -> Result:
        with self.lock:
            self.sync()
            ns = self.namespace
            if what == "broker":
                registration = self.image.broker(ns.broker(int(args["broker"])))
                if registration is None:
                    return {"registered": False, "fenced": True, "in_controlled_shutdown": False, "broker_epoch": -1}
                return {"registered": True, "fenced": registration.fenced,
                        "in_controlled_shutdown": registration.in_controlled_shutdown,
                        "broker_epoch": registration.epoch}
            if what == "partition":
                state = self.image.partition(ns.topic(str(args["topic"])), int(args.get("partition", 0)))
                if state is None:
                    return {"exists": False}
                local = ns.local_brokers
                return {
                    "exists": True, "leader": ns.local_broker(state.leader), "isr": local(state.isr),
                    "replicas": local(state.replicas), "leader_epoch": state.leader_epoch,
                    "partition_epoch": state.partition_epoch,
                    "leader_recovery_state": LRS_NAMES.get(state.leader_recovery_state, "RECOVERED"),
                    "elr": local(state.elr), "last_known_elr": local(state.last_known_elr),
                    "adding": local(state.adding), "removing": local(state.removing),
                }
        raise ValueError(f"cannot observe {what!r}")


def heartbeat_result(response: Any) -> Result:
    return {
        "error": error_name(response.error_code), "is_caught_up": bool(response.is_caught_up),
        "is_fenced": bool(response.is_fenced), "should_shut_down": bool(response.should_shut_down),
    }


def _timeout() -> Any:
    return REQUEST_TIMEOUT
