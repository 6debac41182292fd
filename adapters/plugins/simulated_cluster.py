"""The reference cluster model behind the black-box cluster interface: a third-party-shaped target
that answers the operations of `isrcheck.adapters.real_kafka.kafka_cluster` (docs/plugins.md, "A
cluster, judged on its history") from the simulation of `reference_impl/cluster.py`, and is judged
only on its recorded history, as a real cluster is. It has the timings `kafka-cluster` runs with
(broker.session.timeout.ms 6000, replica.lag.time.max.ms 3000, heartbeats every 500 ms), so a
generated fault means the same thing here and on real brokers. Two variants:

* `SimulatedCluster` — the reference: nothing is lost.
* `DeposedControllerCluster` — the same with one rule changed, shaped after KAFKA-1188 and
  KAFKA-6082: a controller deposed by a fail-over goes on deciding from the partition states it had
  when it lost office, and its decisions are applied (as a zombie controller's ZooKeeper writes
  were before the controller epoch fenced them). When a broker that led a partition in its frozen
  view is fenced or shuts down, it elects the first member of *its* ISR that is still the
  registration it knew (same broker epoch) and unfenced, and writes that ISR.
  A follower the active controller had removed from the ISR since (its fetches stalled past the
  lag time) is then elected with a log that lacks records acknowledged after it left: lost.

    isrcheck run --adapter isrcheck.adapters.plugins.simulated_cluster:DeposedControllerCluster --level cluster

Faults, in model terms: `net` cut/hold of a broker's replication link holds the Fetch requests sent
to it and its answers (its followers stall); of its controller link, everything between it and the
controller. `pause` holds everything to and from the broker (its timers still run, but nothing it
sends arrives); a produce to a paused leader fails. `tick` lets model time pass. A `delay` is
treated as `pass` (the model delivers in order without latency).

When an incarnation dies (crash, restart), what it sent is delivered as `kafka-cluster`'s proxies
would deliver it (adapters/real_kafka/tcp_proxy.py): held by a `hold` (a held link, a held API),
it still arrives at the release — the proxy forwards what it held of a connection whose client
has closed, as a kernel retransmits an orphaned socket's unacknowledged bytes; held by a `cut`,
it is lost — the proxy closed those connections; sent while `pause`d, it never existed — a
SIGSTOPped process sends nothing (`forget_dead_sends`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from isrcheck.adapters.base import CLUSTER, Args, Result, Target, TargetFailure, UnsupportedConfiguration
from isrcheck.adapters.reference.controller_target import build_config
from isrcheck.reference_impl.broker_config import BrokerConfig
from isrcheck.reference_impl.cluster import Cluster, QuiescenceError
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.release import profile_named
from isrcheck.reference_impl.rpc import ALTER_PARTITION, CONTROLLER_NODE, FETCH, FETCH_RESPONSE
from isrcheck.reference_impl.state import MetadataRecord, PartitionChangeRecord, PartitionState

BROKERS = (1, 2, 3)
SESSION_TIMEOUT_MS = 6000
"""kafka-cluster's broker.session.timeout.ms (cluster_processes.ClusterLayout)."""
BROKER_CONFIG = BrokerConfig(replica_lag_time_max_ms=3000, broker_heartbeat_interval_ms=500, request_timeout_ms=3000)
"""kafka-cluster's replica.lag.time.max.ms and heartbeat interval; a produce waits at most 3 s."""
WAIT_STEP_MS = 100
TERMINATE_TIMEOUT_MS = 60000
"""How long kafka-cluster lets a SIGTERMed broker shut down before it SIGKILLs it
(`RealKafkaCluster.terminate`, timeout_s 60)."""


class SimulatedCluster(Target):
    name = "simulated-cluster"
    levels = frozenset({CLUSTER})
    black_box_history = True
    controller_class: type[Controller] = Controller

    def __init__(self) -> None:
        self.options: dict[str, Any] = {"brokers": len(BROKERS), "session-timeout-ms": SESSION_TIMEOUT_MS}
        self._cluster: Cluster | None = None
        self.holds: dict[tuple[str, int], list[Selector]] = {}
        """What each fault holds back: (fault, broker) → the network selectors it added."""
        self.cuts: set[tuple[str, int]] = set()
        """The holds that stand for a `cut` link (the proxy closed its connections)."""
        self.paused_from: dict[int, int] = {}
        """Paused broker → the id of the first message it sent while paused."""

    @property
    def cluster(self) -> Cluster:
        if self._cluster is None:
            raise TargetFailure("error", "the simulated cluster was not opened")
        return self._cluster

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        try:
            profile = profile_named(release)
        except ValueError as error:
            raise UnsupportedConfiguration(str(error)) from None
        cluster_config = build_config(release, {"broker_session_timeout_ms": SESSION_TIMEOUT_MS,
                                                "min_insync_replicas": 2, **config})
        self._cluster = Cluster(profile, cluster_config, BROKER_CONFIG, controller_class=self.controller_class)
        self.holds = {}
        self.cuts = set()
        self.paused_from = {}
        self.cluster.start(BROKERS)

    def close(self) -> None:
        self._cluster = None

    # ---------------------------------------------------------------- operations

    def execute(self, op: str, args: Args) -> Result:
        try:
            return self.run(op, args)
        except (QuiescenceError, RecursionError) as error:
            raise TargetFailure("livelock", f"{op}: the cluster never went quiet ({type(error).__name__})") from None

    def run(self, op: str, args: Args) -> Result:
        cluster = self.cluster
        broker = int(args.get("broker", 1))
        match op:
            case "create_topic":
                configs = {str(k): str(v) for k, v in dict(args.get("configs") or {}).items()}
                error = cluster.create_topic(str(args["topic"]), [[int(b) for b in args["replicas"]]], configs)
                cluster.advance(WAIT_STEP_MS * 10)
                return {"error": error.name}
            case "produce":
                return self.produce(str(args["topic"]), int(args.get("records", 1)), str(args.get("acks", "all")))
            case "consume":
                return {"records": {"0": self.read_back(str(args["topic"]))}}
            case "crash":
                if cluster.alive(broker):
                    self.crash(broker)
            case "restart":
                if cluster.alive(broker):
                    self.crash(broker, "disk" if args.get("lose") == "disk" else "none")
                elif args.get("lose") == "disk":
                    cluster.disks[broker] = type(cluster.disks[broker])()
                self.start(broker)
            case "clean_restart" | "shutdown":
                killed = self.shut_down(broker)
                if op == "clean_restart":
                    self.start(broker)
                cluster.settle()
                return {"killed": True} if killed else {}
            case "pause":
                self.paused_from.setdefault(broker, cluster.network.next_id)
                self.hold("pause", broker, [Selector(None, broker, None), Selector(None, None, broker)])
            case "resume":
                self.resume(broker)
            case "net":
                self.net(broker, str(args.get("link", "replication")), str(args.get("mode", "pass")))
            case "hold_alter_partition" | "hold_api":
                if str(args.get("api", "AlterPartition")) == "AlterPartition":
                    self.hold("alter_partition", broker, [Selector(ALTER_PARTITION, broker, None)])
            case "release_api":
                self.release("alter_partition", broker)
            case "wait_held":
                return {"held": self.wait(int(args.get("timeout_ms", 20000)), lambda: bool(
                    cluster.network.matching(Selector(ALTER_PARTITION, broker, None))))}
            case "wait_isr":
                return {"reached": self.wait(int(args.get("timeout_ms", 20000)), lambda: self.isr_reached(args))}
            case "tick":
                cluster.advance(int(args.get("ms", 0)))
            case "fail_over_controller":
                cluster.fail_over_controller()
            case "heal":
                return {"settled": self.heal(int(args.get("timeout_ms", 60000)))}
            case _:
                raise ValueError(f"simulated-cluster: unsupported operation {op!r}")
        cluster.settle()
        return {}

    def produce(self, topic: str, records: int, acks: str) -> Result:
        """A client's produce: sent to the leader the controller names, answered once acknowledged
        or failed (acks=all waits for the in-sync replicas, at most the request timeout)."""
        cluster = self.cluster
        state = cluster.controller.partition(topic)
        leader = -1 if state is None else state.leader
        if leader in self.paused():
            cluster.advance(BROKER_CONFIG.request_timeout_ms)
            return {"status": "failed", "error": "REQUEST_TIMED_OUT", "offsets": [], "values": []}
        sent = cluster.produce(topic, 0, -1 if acks == "all" else 1, records)
        self.wait(BROKER_CONFIG.request_timeout_ms + WAIT_STEP_MS, lambda: sent.status != "pending")
        if sent.status != "acked":
            return {"status": "failed", "error": sent.error if sent.status == "failed" else "REQUEST_TIMED_OUT",
                    "offsets": [], "values": []}
        return {"status": "acked", "error": "NONE", "offsets": [sent.base_offset + n for n in range(records)],
                "values": [str(record) for record in sent.record_ids]}

    def read_back(self, topic: str) -> dict[str, str]:
        """What a consumer reads: the leader's log up to its high watermark."""
        state = self.cluster.controller.partition(topic)
        process = None if state is None else self.cluster.brokers.get(state.leader)
        if process is None or not process.alive or (topic, 0) not in process.disk.logs:
            return {}
        log = process.disk.logs[(topic, 0)]
        return {str(offset): str(record[1]) for offset, record in enumerate(log.records[:log.hw])}

    def start(self, broker: int) -> None:
        """A new incarnation, waited for as a Kafka broker's start is: `KafkaRaftServer` logs
        'started' once the broker is registered and unfenced (`BrokerServer.startup` waits for
        its lifecycle manager's unfencing) — a restarted broker's registration is refused while the
        old incarnation's session lives, so that wait spans it (bounded: a broker whose controller
        link is cut never gets there)."""
        self.resume(broker)
        self.cluster.start_broker(broker)
        self.cluster.wait_unfenced([broker], 2 * SESSION_TIMEOUT_MS)

    def shut_down(self, broker: int) -> bool:
        """A controlled shutdown, waited for as a SIGTERM'd broker is (then it is stopped); whether
        it had to be killed (the operation's result says `killed`, as kafka-cluster's does). A paused
        broker is resumed first, as `kafka-cluster` does (`ProcessNode.terminate`: SIGCONT, then
        SIGTERM): it shuts down cleanly, not killed for hanging. It is killed only when it has not
        stopped within kafka-cluster's terminate timeout (60 s; the broker itself waits up to 5
        minutes for the controller's approval, `BrokerServer.shutdown`, 4.1.1). The approval can
        take a session timeout: the controller lets a broker stop once every other active
        broker's metadata reached its controlled-shutdown offset (`BrokerHeartbeatManager
        .calculateNextBrokerState`, lowestActiveOffset), and a broker whose controller link is cut
        counts as active until it is fenced. The model waited 6 s and killed such a broker: an
        unclean shutdown where the real broker shuts down cleanly and keeps its ELR place
        (SimulatedCluster 4.1 run af3c0495-w0-017160 lost records that way). A broker whose own
        controller link is cut or held never gets that approval: it is killed, an unclean shutdown
        the judge must know of (run 9ca63220-w0-014410: killed so, broker 1 left the ELR at its
        re-registration and the emptied last known leader was elected)."""
        cluster = self.cluster
        if not cluster.alive(broker):
            return False
        self.resume(broker)
        cluster.controlled_shutdown(broker)
        if self.wait(TERMINATE_TIMEOUT_MS, lambda: not cluster.alive(broker)):
            return False
        self.crash(broker)  # the shutdown never completed (its controller link is cut): killed
        return True

    def crash(self, broker: int, lose: str = "none") -> None:
        """SIGKILL (and, for a restart, the disk it loses): the incarnation dies."""
        serial = self.cluster.brokers[broker].serial
        self.cluster.crash(broker, lose)
        self.forget_dead_sends(broker, serial)

    def forget_dead_sends(self, broker: int, serial: int) -> None:
        """Of what the dead incarnation `serial` of `broker` sent that is still in flight, drop
        what never reaches anyone on real brokers: what a `cut` of its links holds (the proxy
        closed those connections, `TcpProxy.set_mode`) and what it sent while paused (a SIGSTOPped
        process sends nothing). What a `hold` keeps stays in flight: the proxy forwards it at the
        release although its client closed (`TcpProxy.pump` forwards a held frame, then reads the
        end of the stream), and the controller still processes a request received on a connection
        its peer closed (`Selector.close` keeps the channel "so that all received records may be
        processed", clients 4.1.1) — a dead incarnation's held heartbeat arrives."""
        cluster = self.cluster
        paused_from = self.paused_from.get(broker)
        cut = [selector for key in self.cuts if key[1] == broker for selector in self.holds.get(key, [])]
        for message in list(cluster.network.inflight.values()):
            if message.src != broker or message.src_serial != serial:
                continue
            if (paused_from is not None and message.id >= paused_from) or any(s.matches(message) for s in cut):
                cluster.drop(message)

    def net(self, broker: int, link: str, mode: str) -> None:
        if mode == "cut" and (link, broker) in self.holds:
            self.cuts.add((link, broker))  # a held link cut: the proxy closes what it held
            return
        self.release(link, broker)
        if mode not in ("cut", "hold"):
            return  # pass, or delay (no latency in the model)
        if mode == "cut":
            self.cuts.add((link, broker))
        if link == "replication":
            self.hold(link, broker, [Selector(FETCH, None, broker), Selector(FETCH_RESPONSE, broker, None)])
        else:
            self.hold(link, broker, [Selector(None, broker, CONTROLLER_NODE), Selector(None, CONTROLLER_NODE, broker)])

    def hold(self, fault: str, broker: int, selectors: list[Selector]) -> None:
        if (fault, broker) in self.holds:
            return
        self.holds[(fault, broker)] = selectors
        for selector in selectors:
            self.cluster.hold(selector)

    def release(self, fault: str, broker: int) -> None:
        self.cuts.discard((fault, broker))
        if fault == "pause":
            self.paused_from.pop(broker, None)
        for selector in self.holds.pop((fault, broker), []):
            self.cluster.release(selector)

    def resume(self, broker: int) -> None:
        self.release("pause", broker)

    def paused(self) -> set[int]:
        return {broker for fault, broker in self.holds if fault == "pause"}

    def wait(self, timeout_ms: int, condition: Any) -> bool:
        cluster = self.cluster
        deadline = cluster.now_ms + timeout_ms
        while not condition():
            if cluster.now_ms >= deadline:
                return False
            cluster.advance(WAIT_STEP_MS)
        return True

    def isr_reached(self, args: Args) -> bool:
        state = self.cluster.controller.partition(str(args["topic"]))
        if state is None:
            return False
        if "without" in args:
            return bool(state.isr) and not set(state.isr) & {int(b) for b in args["without"]}
        return sorted(state.isr) == sorted(int(b) for b in args["isr"])

    def heal(self, timeout_ms: int) -> bool:
        """Every fault ends, stopped brokers start; then time passes until every broker is registered
        (its running incarnation) and unfenced and every partition's ISR is its replica set (or the
        bound passes), as kafka-cluster's heal waits."""
        cluster = self.cluster
        for fault, broker in list(self.holds):
            self.release(fault, broker)
        for broker in BROKERS:
            if not cluster.alive(broker):
                cluster.start_broker(broker)
        return self.wait(timeout_ms, lambda: cluster.wait_unfenced(BROKERS, 0) and all(
            sorted(state.isr) == sorted(state.replicas) and state.leader >= 0
            for state in cluster.controller.partitions.values()))

    # ---------------------------------------------------------------- observation

    def observe(self, what: str, args: Args) -> Result:
        if what != "partition":
            raise ValueError(f"simulated-cluster: cannot observe {what!r}")
        cluster = self.cluster
        state = cluster.controller.partition(str(args["topic"]), int(args.get("partition", 0)))
        if state is None:
            return {"exists": False}
        return {"exists": True, "leader": 100 + state.leader if state.leader >= 0 else -1,
                "isr": [100 + b for b in state.isr], "replicas": [100 + b for b in state.replicas],
                "leader_epoch": state.leader_epoch, "hw": self.high_watermark(str(args["topic"]), state.leader)}

    def high_watermark(self, topic: str, leader: int) -> int | None:
        """What ListOffsets(latest) answers: the leader's high watermark, or None (no answer) when
        no live broker leads or a new leader's high watermark is still below the start offset of its
        epoch (`Partition.fetchOffsetForTimestamp` answers OFFSET_NOT_AVAILABLE then, 3.9.0)."""
        process = self.cluster.brokers.get(leader)
        partition = None if process is None or not process.alive else process.partitions.get((topic, 0))
        if partition is None or partition.role != "leader" or partition.log.hw < partition.epoch_start_offset:
            return None
        return int(partition.log.hw)


class DeposedController(Controller):
    """The reference controller, except that after a fail-over the deposed controller's decisions
    are applied too (see the module docstring): the one changed rule."""

    deposed: dict[tuple[str, int], PartitionState] | None = None
    """The partition states the deposed controller decides from (None: no deposed controller)."""
    deposed_brokers: Mapping[int, int] = MappingProxyType({})
    """The unfenced brokers it knew, with their broker epochs: a broker registered since (a new
    epoch) is unknown to it, and it never elects one."""

    def fail_over(self) -> None:
        self.deposed = dict(self.partitions)
        self.deposed_brokers = {b: r.epoch for b, r in self.brokers.items() if not r.fenced}
        super().fail_over()

    def fence_records(self, broker: int) -> list[MetadataRecord]:
        return self.with_deposed_decisions(super().fence_records(broker), broker)

    def controlled_shutdown_records(self, broker: int) -> list[MetadataRecord]:
        return self.with_deposed_decisions(super().controlled_shutdown_records(broker), broker)

    def with_deposed_decisions(self, records: list[MetadataRecord], broker: int) -> list[MetadataRecord]:
        """The active controller's records, then the deposed one's election for every partition
        `broker` led in its frozen view: the first member of its ISR other than `broker` that it
        knew (same broker epoch) and that is unfenced leads, with that ISR less `broker`."""
        if self.deposed is None:
            return records
        decisions: list[MetadataRecord] = []
        for key, state in self.deposed.items():
            if state.leader != broker or key not in self.partitions:
                continue
            isr = tuple(r for r in state.isr if r != broker)
            live = [r for r in isr if self.is_active(r) and self.brokers[r].epoch == self.deposed_brokers.get(r)]
            if not live:
                continue
            decisions.append(PartitionChangeRecord(key[0], key[1], leader=live[0], isr=isr))
            self.deposed[key] = PartitionState(state.replicas, isr, live[0], state.leader_epoch + 1,
                                               state.partition_epoch + 1)
        return records + decisions


class DeposedControllerCluster(SimulatedCluster):
    name = "simulated-cluster-deposed-controller"
    controller_class = DeposedController

    def heal(self, timeout_ms: int) -> bool:
        """The deposed controller learns it was deposed when the faults end."""
        controller = self.cluster.controller
        if isinstance(controller, DeposedController):
            controller.deposed = None
        return super().heal(timeout_ms)
