"""kafka-cluster: a real KRaft cluster (1 or 3 controllers, 3–5 brokers) driven as clients and an
operator would — kafka-python producing with acks=all and acks=1, consuming, describing — and a
nemesis acting on processes and on the TCP proxies in front of the listeners
(`isrcheck.adapters.real_kafka.cluster_processes`). It never judges itself: the engine records
every operation and observation into a history, and the black-box properties
(the black-box forms of `isrcheck.conformance.properties`) are judged on that history.

Operations (`execute`; broker numbers are 1..n, node ids 101..100+n):

* workload — `create_topic` {topic, partitions=1, replication=3, replicas=[b, ...]?, configs={}};
  `produce` {topic, partition=0, records=1, acks="all"|"1"} → {status, offsets, values, error};
  `consume` {topic} → {records: {"partition": {"offset": value}}};
* nemesis — `crash` {broker} (SIGKILL, stays down); `restart` {broker, lose: none|disk} (start a
  down broker; `disk` empties and reformats its log directory first: disk loss); `clean_restart`
  {broker} (SIGTERM = controlled shutdown, then start); `pause`/`resume` {broker} (SIGSTOP/SIGCONT);
  `fail_over_controller` {} (SIGKILL the controller, restart it: with 3 the quorum elects another);
  `net` {broker, link: replication|controller, mode: cut|delay|hold|pass, ms} (the broker's
  replication listener, or its links to the controllers); `hold_alter_partition` {broker}
  (its next AlterPartition is held in flight), `hold_api`/`release_api` {broker, api: AlterPartition|
  Fetch|BrokerHeartbeat} (Fetch on a controller link = the broker's metadata log), `wait_held`
  {broker, api, timeout_ms} → {held}; `hold_follower`/`release_follower` {broker, follower} (the
  follower's replication fetches to leader `broker` stall at the leader's replication proxy, both
  directions; the follower still heartbeats, so it stays registered and unfenced: a slow or
  partitioned replication path, not a stopped broker); `shutdown` {broker} (SIGTERM, stays down);
  `wait_isr` {topic, isr: [b, ...] | without: [b, ...], timeout_ms} → {reached} (wall time passes until
  the ISR is exactly `isr`, or holds none of `without`);
  `tick` {ms} (wall time passes), or {align: NAME, period_ms, at_ms} (until `at_ms` past a multiple
  of `period_ms` since the op marked NAME returned: a broker's periodic task — the leader's
  ISR-expiration check, every replica.lag.time.max.ms / 2 at a fixed rate — is met at a chosen
  phase; any op with `mark: NAME` marks the time it returned); `heal` {timeout_ms} (everything
  back, then wait until every partition's ISR is its replica set or the bound passes);
* observation — `observe("partition", {topic, partition})` → exists, leader, isr, replicas,
  leader_epoch (Metadata v7+), brokers (the unfenced brokers listed in the same Metadata answer),
  metadata_after_s (seconds from the call to that answer), hw (ListOffsets latest, asked after
  the Metadata: the consumer-visible high watermark; a paused leader makes it wait its timeout).

Options: `kafka-home=DIR` (else $KAFKA_HOME, else ../shared/kafka/<release>); `containers=1`
(Docker `apache/kafka`, `image=`/`version=`); `brokers=3..5`, `controllers=1|3`,
`session-timeout-ms`, `base-port`; `kafka-defaults=1` (the release's own timing defaults:
`cluster_processes.KAFKA_DEFAULT_TIMINGS`); `classpath=PATH[:PATH]` (class directories or jars put
first on every node's class path: a patched broker or controller class, `patched_classpath`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import (
    CLUSTER,
    Args,
    Result,
    Target,
    TargetUnavailable,
    UnsupportedConfiguration,
)
from isrcheck.adapters.real_kafka.cluster_processes import (
    KAFKA_SESSION_TIMEOUT_MS,
    ClusterLayout,
    ClusterStartError,
    RealKafkaCluster,
    free_base_port,
    resolve_kafka_home,
)
from isrcheck.adapters.real_kafka.node_hosts import ContainerHost, NodeHost, NodeStartError, ProcessHost
from isrcheck.adapters.real_kafka.patched_classpath import classpath_first
from isrcheck.adapters.real_kafka.tcp_proxy import ALTER_PARTITION, PASS
from isrcheck.contract.errors import UsageError

API_KEYS = {"AlterPartition": ALTER_PARTITION, "Fetch": 1, "BrokerHeartbeat": 63}
"""Requests a broker sends its controllers that a nemesis may hold (Fetch = the metadata log)."""
MESSAGE_LEVEL = frozenset({"deliver", "hold", "release", "drop", "duplicate", "fetch", "lag_metadata",
                           "sync_metadata", "flush", "check_leader", "check_replica", "check_messages", "events"})


class KafkaClusterTarget(Target):
    name = "kafka-cluster"
    levels = frozenset({CLUSTER})
    unsupported_operations = MESSAGE_LEVEL
    observable_fields = frozenset({"leader", "isr", "replicas", "leader_epoch"})
    black_box_history = True
    """The engine judges it on its history (conformance/engine/history_campaign.py)."""

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options = dict(options or {})
        self.classpath = classpath_first(self.options["classpath"], self.name) if "classpath" in self.options else ""
        if self.options.get("kafka-defaults") and "session-timeout-ms" in self.options:
            raise UsageError("kafka-cluster: kafka-defaults=1 and session-timeout-ms= contradict each other")
        self.cluster: RealKafkaCluster | None = None
        self.admin: Any = None
        self.producers: dict[str, Any] = {}
        self.offsets_consumer: Any = None
        self.counter = 0
        self.marks: dict[str, float] = {}
        """monotonic time at which an op with `mark: NAME` returned (see `tick` with `align`)."""
        self.release = ""
        self.keep_logs = False
        """Set by the engine when the run found something: `close` keeps the nodes' logs."""

    # ------------------------------------------------------------------ lifecycle

    def layout(self) -> ClusterLayout:
        o = self.options
        base = int(o["base-port"]) if "base-port" in o else free_base_port()
        if o.get("kafka-defaults"):
            return ClusterLayout(controllers=int(o.get("controllers", 1)), brokers=int(o.get("brokers", 3)),
                                 base_port=base, session_timeout_ms=KAFKA_SESSION_TIMEOUT_MS, kafka_defaults=True,
                                 min_insync_replicas=int(o.get("min-insync-replicas", 2)))
        return ClusterLayout(controllers=int(o.get("controllers", 1)), brokers=int(o.get("brokers", 3)),
                             base_port=base, session_timeout_ms=int(o.get("session-timeout-ms", 6000)),
                             min_insync_replicas=int(o.get("min-insync-replicas", 2)))

    def node_host(self, release: str) -> NodeHost:
        """Containers of the release's image (`containers=1`) or processes of its KAFKA_HOME; what
        is missing for either is an UnsupportedConfiguration (one line, exit 2)."""
        if self.options.get("containers"):
            from isrcheck.adapters.real_kafka.docker_engine import docker_unavailable, missing_image
            from isrcheck.adapters.real_kafka.kafka_properties import image_for

            reason = docker_unavailable()
            if reason is not None:
                raise UnsupportedConfiguration(reason)
            try:
                image = image_for(release, self.options)
            except ValueError as error:
                raise UnsupportedConfiguration(str(error)) from None
            reason = missing_image(image)
            if reason is not None:
                raise UnsupportedConfiguration(reason)
            return ContainerHost(image)
        home = resolve_kafka_home(release, self.options.get("kafka-home"))
        if home is None:
            raise UnsupportedConfiguration(f"no KAFKA_HOME for Kafka {release}: give kafka-home=DIR, set "
                                           "KAFKA_HOME, or put the release in ../shared/kafka/<release>")
        if not (home / "bin" / "kafka-server-start.sh").exists():
            raise UnsupportedConfiguration(f"{home} is not a Kafka distribution (no bin/kafka-server-start.sh)")
        return ProcessHost(home)

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        self.release = release
        try:
            layout = self.layout()
        except ClusterStartError as error:
            raise TargetUnavailable(f"the cluster did not start: {error}") from None
        host = self.node_host(release)
        self.cluster = RealKafkaCluster(host, layout, classpath=self.classpath)
        try:
            bootstrap = self.cluster.start()
        except (ClusterStartError, NodeStartError) as error:
            self.cluster = None
            raise TargetUnavailable(f"the cluster ({host.description}) did not start: {error}") from None
        from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        for acks in ("all", "1"):
            self.producers[acks] = KafkaProducer(
                bootstrap_servers=bootstrap, acks="all" if acks == "all" else 1, retries=0, linger_ms=0,
                request_timeout_ms=5000, max_block_ms=15000, metadata_max_age_ms=1000)
        self.offsets_consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                              request_timeout_ms=6000, metadata_max_age_ms=1000)
        self.counter = 0

    def close(self) -> None:
        for client in (*self.producers.values(), self.offsets_consumer, self.admin):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close(timeout=1) if hasattr(client, "send") else client.close()
        self.producers, self.offsets_consumer, self.admin = {}, None, None
        if self.cluster is not None:
            self.cluster.failed = self.cluster.failed or self.keep_logs
            self.cluster.stop()
            self.cluster = None
        self.keep_logs = False

    def shutdown(self) -> None:
        self.close()

    # ------------------------------------------------------------------ operations

    def execute(self, op: str, args: Args) -> Result:
        result = self.execute_op(op, args)
        if "mark" in args:
            self.marks[str(args["mark"])] = time.monotonic()
        return result

    def execute_op(self, op: str, args: Args) -> Result:
        cluster = self.cluster
        if cluster is None:
            raise RuntimeError("kafka-cluster: no cluster is open")
        broker = f"broker-{int(args.get('broker', 1))}"
        match op:
            case "create_topic":
                return self.create_topic(args)
            case "produce":
                return self.produce(args)
            case "consume":
                return {"records": self.consume(str(args["topic"]))}
            case "crash":
                cluster.kill(broker)
            case "restart":
                if cluster.running(broker):
                    cluster.kill(broker)
                cluster.restart(broker, wipe=args.get("lose") == "disk")
            case "clean_restart":
                cluster.terminate(broker)
                cluster.restart(broker)
            case "pause":
                cluster.pause(broker)
            case "resume":
                cluster.resume(broker)
            case "fail_over_controller":
                name = f"controller-{int(args.get('controller', 1))}"
                cluster.kill(name)
                cluster.restart(name)
            case "net":
                self.net(int(args.get("broker", 1)), str(args.get("link", "replication")),
                         str(args.get("mode", PASS)), int(args.get("ms", 0)))
            case "hold_alter_partition" | "hold_api":
                key = API_KEYS[str(args.get("api", "AlterPartition"))]
                for proxy in self.controller_proxies(int(args["broker"])):
                    proxy.hold_api(key)
            case "release_api":
                for proxy in self.controller_proxies(int(args["broker"])):
                    proxy.release_api(API_KEYS[str(args["api"])])
            case "hold_follower" | "release_follower":
                proxy = cluster.proxy(f"replication-{int(args['broker'])}")
                prefix = f"broker-{100 + int(args['follower'])}-fetcher-"  # ReplicaFetcherManager's client id
                if op == "hold_follower":
                    proxy.hold_client(prefix)
                else:
                    proxy.release_client(prefix)
            case "shutdown":
                cluster.terminate(broker)
            case "wait_held":
                deadline = time.monotonic() + int(args.get("timeout_ms", 10000)) / 1000
                proxies = self.controller_proxies(int(args["broker"]))
                key = API_KEYS[str(args.get("api", "AlterPartition"))]
                while time.monotonic() < deadline:
                    if any(p.held(key) for p in proxies):
                        return {"held": True}
                    time.sleep(0.1)
                return {"held": False}
            case "wait_isr":
                if "without" in args:
                    return self.wait_isr_without(str(args["topic"]), {100 + int(b) for b in args["without"]},
                                                 int(args.get("timeout_ms", 20000)))
                return self.wait_isr(str(args["topic"]), sorted(100 + int(b) for b in args["isr"]),
                                     int(args.get("timeout_ms", 20000)))
            case "tick" if "align" in args:
                period, at = int(args["period_ms"]) / 1000, int(args["at_ms"]) / 1000
                elapsed = time.monotonic() - self.marks[str(args["align"])]
                time.sleep((at - elapsed) % period)
                return {"phase_s": round((time.monotonic() - self.marks[str(args["align"])]) % period, 3)}
            case "tick":
                time.sleep(int(args.get("ms", 0)) / 1000)
            case "heal":
                return self.heal(int(args.get("timeout_ms", 60000)))
            case _:
                raise ValueError(f"kafka-cluster: unsupported operation {op!r}")
        return {}

    def wait_isr(self, topic: str, isr: list[int], timeout_ms: int) -> Result:
        deadline = time.monotonic() + timeout_ms / 1000
        view: Result = {}
        while time.monotonic() < deadline:
            view = self.observe("partition", {"topic": topic, "partition": 0})
            if sorted(view.get("isr", [])) == isr:
                return {"reached": True}
            time.sleep(0.3)
        return {"reached": False, "isr": view.get("isr")}

    def wait_isr_without(self, topic: str, brokers: set[int], timeout_ms: int) -> Result:
        """Until none of `brokers` is in the ISR (the others may be in it or not)."""
        deadline = time.monotonic() + timeout_ms / 1000
        view: Result = {}
        while time.monotonic() < deadline:
            view = self.observe("partition", {"topic": topic, "partition": 0})
            if view.get("exists") and view.get("isr") and not brokers & set(view["isr"]):
                return {"reached": True}
            time.sleep(0.3)
        return {"reached": False, "isr": view.get("isr")}

    def controller_proxies(self, b: int) -> list[Any]:
        assert self.cluster is not None
        return [self.cluster.proxy(f"broker-{b}->controller-{c}")
                for c in range(1, self.cluster.layout.controllers + 1)]

    def net(self, b: int, link: str, mode: str, ms: int) -> None:
        assert self.cluster is not None
        proxies = [self.cluster.proxy(f"replication-{b}")] if link == "replication" else self.controller_proxies(b)
        for proxy in proxies:
            proxy.set_mode(mode, delay_ms=ms)

    def create_topic(self, args: Args) -> Result:
        from kafka.admin import NewTopic

        topic = str(args["topic"])
        replicas = args.get("replicas")
        configs = {str(k): str(v) for k, v in dict(args.get("configs") or {}).items()}
        if replicas:
            new = NewTopic(topic, -1, -1, replica_assignments={0: [100 + int(b) for b in replicas]},
                           topic_configs=configs)
        else:
            new = NewTopic(topic, int(args.get("partitions", 1)), int(args.get("replication", 3)),
                           topic_configs=configs)
        self.admin.create_topics([new], timeout_ms=10000)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # until every partition has a leader
            view = self.observe("partition", {"topic": topic, "partition": 0})
            if view.get("exists") and view.get("leader", -1) >= 0 and view.get("hw") is not None:
                self.learn_topic(topic)
                return {"error": "NONE"}
            time.sleep(0.3)
        return {"error": "TIMEOUT"}

    def learn_topic(self, topic: str) -> None:
        """Every producer learns the new topic's metadata now, while every broker answers. A
        producer that first sends to a topic later, when a step has stopped some brokers, asks
        whichever broker it picks for the metadata; a stopped one never answers, and after
        `max_block_ms` the record fails unsent (KafkaTimeoutError) — a harness failure that
        looked like the cluster's (the acks=1 record of `equal_epoch_steps` on 3.7.1, three times)."""
        for producer in self.producers.values():
            with contextlib.suppress(Exception):
                producer.partitions_for(topic)

    def produce(self, args: Args) -> Result:
        topic, partition = str(args["topic"]), int(args.get("partition", 0))
        acks = str(args.get("acks", "all"))
        offsets, values = [], []
        for _ in range(int(args.get("records", 1))):
            self.counter += 1
            value = f"isrcheck-{self.counter}"
            try:
                metadata = self.producers[acks].send(topic, value=value.encode(), partition=partition).get(timeout=8)
            except Exception as error:  # kafka-python raises a KafkaError subclass per error code
                return {"status": "failed", "error": type(error).__name__, "offsets": offsets, "values": values,
                        "failed_value": value}
            offsets.append(int(metadata.offset))
            values.append(value)
        return {"status": "acked", "error": "NONE", "offsets": offsets, "values": values}

    def consume(self, topic: str) -> dict[str, dict[str, str]]:
        """Everything a consumer reads from the beginning to the high watermark, per partition."""
        from kafka import KafkaConsumer, TopicPartition

        assert self.cluster is not None
        consumer = KafkaConsumer(bootstrap_servers=self.cluster.bootstrap, enable_auto_commit=False,
                                 auto_offset_reset="earliest", consumer_timeout_ms=4000, request_timeout_ms=8000)
        try:
            partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            seen: dict[str, dict[str, str]] = {str(tp.partition): {} for tp in partitions}
            for message in consumer:
                seen[str(message.partition)][str(message.offset)] = message.value.decode(errors="replace")
            return seen
        finally:
            consumer.close()

    def heal(self, timeout_ms: int) -> Result:
        """Every proxy passes, every node runs and is resumed; then wait (bounded) until every
        partition's ISR is its whole replica set. Whether that happened is for the checker."""
        cluster = self.cluster
        assert cluster is not None
        started = time.monotonic()
        for proxy in cluster.proxies.values():
            proxy.set_mode(PASS)
        for name in cluster.layout.node_names:
            cluster.resume(name)
            if not cluster.running(name):
                cluster.restart(name)
        deadline = time.monotonic() + timeout_ms / 1000
        while time.monotonic() < deadline:
            views = self.all_partitions()
            if views and all(v["leader"] >= 0 and sorted(v["isr"]) == sorted(v["replicas"]) for v in views.values()):
                return {"settled": True, "seconds": round(time.monotonic() - started, 2)}
            time.sleep(0.5)
        return {"settled": False}

    # ------------------------------------------------------------------ observation

    def all_partitions(self) -> dict[str, dict[str, Any]]:
        views = {}
        with contextlib.suppress(Exception):  # a cluster without a controller answers nothing
            for topic in self.admin.describe_topics():
                if topic["name"].startswith("__"):
                    continue
                for p in topic.get("partitions", ()):
                    views[f"{topic['name']}-{p['partition_index']}"] = {
                        "leader": int(p["leader_id"]), "isr": [int(b) for b in p["isr_nodes"]],
                        "replicas": [int(b) for b in p["replica_nodes"]], "leader_epoch": int(p["leader_epoch"])}
        return views

    def observe(self, what: str, args: Args) -> Result:
        if what != "partition":
            raise ValueError(f"kafka-cluster cannot observe {what!r}")
        topic, partition = str(args["topic"]), int(args.get("partition", 0))
        started = time.monotonic()
        metadata: dict[str, Any] = {}
        for attempt in range(2):  # one broker not answering (paused, restarting) is not "no partition"
            try:
                metadata = self.metadata(topic)
                break
            except Exception as error:  # no controller, no broker answering: nothing to see now
                if attempt == 1:
                    return {"exists": False, "error": type(error).__name__}
                time.sleep(0.5)
        answered = round(time.monotonic() - started, 3)
        for t in metadata.get("topics", ()):
            for p in t.get("partitions", ()):
                if int(p["partition_index"]) == partition and int(t.get("error_code", 0)) == 0:
                    view = {"exists": True, "leader": int(p["leader_id"]), "isr": [int(b) for b in p["isr_nodes"]],
                            "replicas": [int(b) for b in p["replica_nodes"]],
                            "leader_epoch": int(p["leader_epoch"]), "metadata_after_s": answered}
                    if "brokers" in metadata:
                        view["brokers"] = sorted(int(b["node_id"]) for b in metadata["brokers"])
                    view["hw"] = self.high_watermark(topic, partition)  # after: the leader may take its timeout
                    return view
        return {"exists": False, "metadata_after_s": answered}

    def metadata(self, topic: str) -> dict[str, Any]:
        """One Metadata answer: the topic's partitions and the brokers listed with them. A KRaft
        broker lists only unfenced brokers (`KRaftMetadataCache.getAliveBrokerNodes`), so the
        answer shows the controller's fencing as of the same metadata image as the ISR. Uses
        kafka-python's own Metadata call (`describe_topics` keeps only the topics); falls back to
        `describe_topics` (no broker list) where that is not there."""
        call = getattr(self.admin, "_get_cluster_metadata", None)
        manager = getattr(self.admin, "_manager", None)
        if call is None or manager is None:
            return {"topics": self.admin.describe_topics([topic])}
        return dict(manager.run(call, [topic]))

    def high_watermark(self, topic: str, partition: int) -> int | None:
        """ListOffsets(latest) from the leader: the high watermark a consumer sees, or None when
        no leader answers within the request timeout."""
        from kafka import TopicPartition

        try:
            tp = TopicPartition(topic, partition)
            return int(self.offsets_consumer.end_offsets([tp])[tp])
        except Exception:  # kafka-python raises KafkaTimeoutError and others
            return None


def cluster_target(options: dict[str, str]) -> Target:
    return KafkaClusterTarget(options)
