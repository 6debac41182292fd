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
  {broker} (SIGTERM = controlled shutdown, then start; → {killed: true} when the broker had not
  stopped within 60 s and was SIGKILLed, an unclean shutdown to Kafka); `pause`/`resume` {broker} (SIGSTOP/SIGCONT);
  `fail_over_controller` {} (SIGKILL the controller, restart it: with 3 the quorum elects another);
  `net` {broker, link: replication|controller, mode: cut|delay|hold|pass, ms} (the broker's
  replication listener, or its links to the controllers); `hold_alter_partition` {broker}
  (its next AlterPartition is held in flight), `hold_api`/`release_api` {broker, api: AlterPartition|
  Fetch|BrokerHeartbeat} (Fetch on a controller link = the broker's metadata log), `wait_held`
  {broker, api, timeout_ms} → {held}; `hold_follower`/`release_follower` {broker, follower} (the
  follower's replication fetches to leader `broker` stall at the leader's replication proxy, both
  directions; the follower still heartbeats, so it stays registered and unfenced: a slow or
  partitioned replication path, not a stopped broker); `shutdown` {broker} (SIGTERM, stays down;
  `killed` as for `clean_restart`);
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
  the Metadata: the consumer-visible high watermark; None, unasked, with no leader or a paused one);
  `observe("replica_logs", {topic, partition})` → {replicas: {"<node id>": [[offset, leader_epoch,
  key, value], ...]}}: every broker's log of the partition, read from the segment files in its
  log directory (`segment_files`: why the files), for P-LOG after the heal.

Reuse across runs (`reuse`, set by a campaign that calls `shutdown` at its end: `history_campaign`):
`close` keeps the cluster when the run healed and found nothing, and the next `open` runs on it
after `prepare_kept_cluster` — proxies cleared, every node running and resumed, every broker
listed unfenced and the controller answering (a broker that does not come back, or a controller
that does not answer, restarted alone; still not healthy: a fresh cluster). Each run has topics of
its own: the run's `n`-th on a cluster maps topic `T` to `T-r<n>` (the first keeps `T`), so its
history — read back, observed and healed only on its own topics — is what it would be on a fresh
cluster; the previous run's topics are deleted. `create_topic`'s result says which cluster the run
ran on (`cluster`: id, fresh or reused, what was restarted, seconds the open took). A run with a
finding, an unsettled heal or no heal ends its cluster (its logs kept when it found something).

Options: `reuse=0` (one fresh cluster per run, as without a campaign); `kafka-home=DIR` (else
$KAFKA_HOME, else ../shared/kafka/<release>); `containers=1`
(Docker `apache/kafka`, `image=`/`version=`); `brokers=3..5`, `controllers=1|3`,
`session-timeout-ms`, `base-port`; `kafka-defaults=1` (the release's own timing defaults:
`cluster_processes.KAFKA_DEFAULT_TIMINGS`); `classpath=PATH[:PATH]` (class directories or jars put
first on every node's class path: a patched broker or controller class, `patched_classpath`).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import (
    CLUSTER,
    REPLICA_LOGS,
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
    PortsTaken,
    RealKafkaCluster,
    free_base_port,
    resolve_kafka_home,
)
from isrcheck.adapters.real_kafka.node_hosts import ContainerHost, NodeHost, NodeStartError, ProcessHost
from isrcheck.adapters.real_kafka.patched_classpath import classpath_first
from isrcheck.adapters.real_kafka.segment_files import read_partition
from isrcheck.adapters.real_kafka.tcp_proxy import ALTER_PARTITION, PASS
from isrcheck.contract.errors import UsageError

API_KEYS = {"AlterPartition": ALTER_PARTITION, "Fetch": 1, "BrokerHeartbeat": 63}
"""Requests a broker sends its controllers that a nemesis may hold (Fetch = the metadata log)."""
PORT_BLOCK_ATTEMPTS = 5
"""Blocks tried when another process takes the chosen one before the cluster binds it (a port
race with other campaigns, clusters or services on the machine: not the target's failure)."""
TOPIC_ALREADY_EXISTS = 36
"""CreateTopics error code (`Errors.TOPIC_ALREADY_EXISTS`): an answer from the controller all the same."""
MESSAGE_LEVEL = frozenset({"deliver", "hold", "release", "drop", "duplicate", "fetch", "lag_metadata",
                           "sync_metadata", "flush", "check_leader", "check_replica", "check_messages", "events"})


def close_producer(producer: Any) -> None:
    """Close a run's producer even when a send is still pending (a broker that a fault stopped
    never answers it): kafka-python's `close` flushes first and raises on time-out, leaving the
    producer open, and its `__del__` then prints that traceback on stderr at collection. The run is
    over, so the pending batches are failed as kafka-python's own forced close does
    (`RecordAccumulator.abort_incomplete_batches`) and the producer closed without waiting."""
    try:
        producer.close(timeout=1)
    except Exception:  # KafkaTimeoutError from the flush: batches that will never complete
        with contextlib.suppress(Exception):
            producer._accumulator.abort_incomplete_batches()
            producer.close(timeout=0)


class KafkaClusterTarget(Target):
    name = "kafka-cluster"
    levels = frozenset({CLUSTER})
    unsupported_operations = MESSAGE_LEVEL
    observable_fields = frozenset({"leader", "isr", "replicas", "leader_epoch"})
    black_box_history = True
    """The engine judges it on its history (conformance/engine/history_campaign.py)."""
    observes_replica_logs = True

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
        self.reuse = False
        """Set by a campaign that calls `shutdown` at its end: `close` may keep a healthy cluster for
        the next `open`. Option `reuse=0` refuses."""
        self.run_on_cluster = 0
        """Runs opened on the current cluster, this one included (1 = the cluster is fresh)."""
        self.created: set[str] = set()
        """The cluster's names of the topics this run created: what heal waits for and close deletes."""
        self.healed = False
        """The run's last heal settled: the cluster can be separated from the next run."""
        self.opening: dict[str, Any] = {}
        """How this run got its cluster (reported in its first `create_topic` result)."""

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
        started = time.monotonic()
        restarted: list[str] | None = None
        if self.cluster is not None and release == self.release:
            restarted = self.prepare_kept_cluster()
            if restarted is None:  # not healthy after restarting what failed: a fresh cluster
                print("isrcheck: the kept cluster was not healthy between runs; a fresh one starts", file=sys.stderr)
                self.stop_cluster(keep_logs=False)
        elif self.cluster is not None:
            self.stop_cluster(keep_logs=False)
        self.release = release
        if self.cluster is None:
            self.start_cluster(release)
            self.run_on_cluster = 0
        assert self.cluster is not None
        self.open_clients(self.cluster.bootstrap)
        self.run_on_cluster += 1
        self.counter, self.marks, self.created, self.healed = 0, {}, set(), False
        self.opening = {"cluster_id": self.cluster.cluster_id, "run_on_cluster": self.run_on_cluster,
                        "fresh": self.run_on_cluster == 1, "restarted": restarted or [],
                        "open_s": round(time.monotonic() - started, 2)}

    def start_cluster(self, release: str) -> None:
        host = self.node_host(release)
        attempts = 1 if "base-port" in self.options else PORT_BLOCK_ATTEMPTS
        for attempt in range(1, attempts + 1):
            try:
                self.cluster = RealKafkaCluster(host, self.layout(), classpath=self.classpath)
                self.cluster.start()
                return
            except PortsTaken as error:  # another process took the block meanwhile: another block
                self.cluster = None
                if attempt == attempts:
                    raise TargetUnavailable(f"the cluster ({host.description}) did not start: {error}") from None
            except (ClusterStartError, NodeStartError) as error:
                self.cluster = None
                raise TargetUnavailable(f"the cluster ({host.description}) did not start: {error}") from None

    def open_clients(self, bootstrap: str) -> None:
        """New clients for every run: nothing a client learnt or got stuck on in one run (metadata,
        a failed connection, a batch) carries into the next."""
        from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        for acks in ("all", "1"):
            self.producers[acks] = KafkaProducer(
                bootstrap_servers=bootstrap, acks="all" if acks == "all" else 1, retries=0, linger_ms=0,
                request_timeout_ms=5000, max_block_ms=15000, metadata_max_age_ms=1000)
        self.offsets_consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                              request_timeout_ms=6000, metadata_max_age_ms=1000)

    def close_clients(self) -> None:
        for producer in self.producers.values():
            close_producer(producer)
        for client in (self.offsets_consumer, self.admin):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()
        self.producers, self.offsets_consumer, self.admin = {}, None, None

    def close(self) -> None:
        """End the run: keep the cluster for the next run when reuse is on, the run healed and
        found nothing (its topics deleted); otherwise stop it (logs kept when it found something)."""
        keep = (self.reuse and self.options.get("reuse", "1") != "0" and self.healed and not self.keep_logs
                and self.cluster is not None)
        if keep:
            self.delete_run_topics()
        self.close_clients()
        if self.cluster is not None and not keep:
            self.stop_cluster(keep_logs=self.keep_logs)
        self.keep_logs = False

    def shutdown(self) -> None:
        """The campaign is over: whatever cluster is kept stops."""
        self.reuse = False
        self.close()

    def stop_cluster(self, keep_logs: bool) -> None:
        if self.cluster is not None:
            self.cluster.failed = self.cluster.failed or keep_logs
            self.cluster.stop()
            self.cluster = None
        self.run_on_cluster = 0

    def delete_run_topics(self) -> None:
        """The run's topics go, so the next run's cluster carries no partition of it (a later run
        never names them: its topics are its own, `kafka_topic`)."""
        if self.created:
            with contextlib.suppress(Exception):  # left behind, they are ignored: heal waits only for the run's own
                self.admin.delete_topics(sorted(self.created), timeout_ms=10000)

    def prepare_kept_cluster(self, timeout_s: float = 30.0) -> list[str] | None:
        """Make the kept cluster what a fresh one is, and check it: every proxy passing with nothing
        held, every node running and not stopped, every broker registered and unfenced (listed in
        a Metadata answer: `KRaftMetadataCache.getAliveBrokerNodes`) and the controller answering
        (a validate-only CreateTopics, which a KRaft broker forwards to the controller:
        `ControllerApis.handleCreateTopics`). What fails is restarted alone — a broker not listed,
        the controllers when they do not answer — and checked again. Returns the nodes restarted,
        or None when the cluster is still not healthy (the caller starts a fresh one)."""
        cluster = self.cluster
        assert cluster is not None
        cluster.clear_proxies()
        cluster.resume_all()
        restarted = [name for name in cluster.layout.node_names if not cluster.running(name)]
        try:
            for name in restarted:
                cluster.restart(name)
        except (ClusterStartError, NodeStartError):
            return None
        self.open_clients(cluster.bootstrap)
        try:
            missing = self.unhealthy(timeout_s)
            if missing:
                again = [n for n in cluster.layout.node_names if n in missing or
                         ("controller" in missing and n.startswith("controller"))]
                for name in again:
                    cluster.restart(name)
                restarted += [n for n in again if n not in restarted]
                self.close_clients()
                self.open_clients(cluster.bootstrap)
                if self.unhealthy(timeout_s):
                    return None
        except (ClusterStartError, NodeStartError):
            return None
        finally:
            self.close_clients()
        return restarted

    def unhealthy(self, timeout_s: float) -> set[str]:
        """What is not healthy after waiting up to `timeout_s`: brokers ("broker-b") not listed
        unfenced, "controller" when no validate-only CreateTopics was answered. Empty: healthy."""
        from kafka.admin import NewTopic

        assert self.cluster is not None
        brokers = {100 + b: f"broker-{b}" for b in range(1, self.cluster.layout.brokers + 1)}
        deadline = time.monotonic() + timeout_s
        missing = {"controller", *brokers.values()}
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                listed = {int(b["node_id"]) for b in self.metadata(None).get("brokers", ())}
                missing = {name for node, name in brokers.items() if node not in listed} | (missing & {"controller"})
            if "controller" in missing:
                with contextlib.suppress(Exception):
                    answer = self.admin.create_topics([NewTopic("isrcheck-probe", 1, 1)], timeout_ms=5000,
                                                      validate_only=True, raise_errors=False)
                    if all(int(t["error_code"]) in (0, TOPIC_ALREADY_EXISTS) for t in answer["topics"]):
                        missing.discard("controller")
            if not missing:
                return missing
            time.sleep(0.5)
        return missing

    def kafka_topic(self, topic: str) -> str:
        """The cluster's name for the run's topic: the run's own (its first run keeps the name)."""
        return topic if self.run_on_cluster <= 1 else f"{topic}-r{self.run_on_cluster}"

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
                return {"records": self.consume(self.kafka_topic(str(args["topic"])))}
            case "crash":
                cluster.kill(broker)
            case "restart":
                if cluster.running(broker):
                    cluster.kill(broker)
                cluster.restart(broker, wipe=args.get("lose") == "disk")
            case "clean_restart":
                killed = cluster.terminate(broker)
                cluster.restart(broker)
                return {"killed": True} if killed else {}
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
                return {"killed": True} if cluster.terminate(broker) else {}
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

        topic = self.kafka_topic(str(args["topic"]))
        replicas = args.get("replicas")
        configs = {str(k): str(v) for k, v in dict(args.get("configs") or {}).items()}
        if replicas:
            new = NewTopic(topic, -1, -1, replica_assignments={0: [100 + int(b) for b in replicas]},
                           topic_configs=configs)
        else:
            new = NewTopic(topic, int(args.get("partitions", 1)), int(args.get("replication", 3)),
                           topic_configs=configs)
        self.admin.create_topics([new], timeout_ms=10000)
        self.created.add(topic)
        answer: Result = {"kafka_topic": topic}
        if self.opening:  # the run's first topic says which cluster the run ran on
            answer["cluster"], self.opening = self.opening, {}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # until every partition has a leader
            view = self.observe("partition", {"topic": str(args["topic"]), "partition": 0})
            if view.get("exists") and view.get("leader", -1) >= 0 and view.get("hw") is not None:
                self.learn_topic(topic)
                return {"error": "NONE", **answer}
            time.sleep(0.3)
        return {"error": "TIMEOUT", **answer}

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
        topic, partition = self.kafka_topic(str(args["topic"])), int(args.get("partition", 0))
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
        """Everything a consumer reads from the beginning to the high watermark, per partition. It
        stops once every partition is read to the high watermark it had when reading began (a
        consumer is never given more: `Partition.fetchRecords` reads to the HW), or after 4 s
        without a record (no leader answering) — not 4 s after the last record, which was the
        same read-back 4 s later in every run."""
        from kafka import KafkaConsumer, TopicPartition

        assert self.cluster is not None
        consumer = KafkaConsumer(bootstrap_servers=self.cluster.bootstrap, enable_auto_commit=False,
                                 auto_offset_reset="earliest", consumer_timeout_ms=4000, request_timeout_ms=8000)
        try:
            partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            seen: dict[str, dict[str, str]] = {str(tp.partition): {} for tp in partitions}
            ends: dict[Any, int] = {}
            with contextlib.suppress(Exception):  # no answer: read until the idle timeout instead
                ends = consumer.end_offsets(partitions)

            def read_to_end() -> bool:
                try:
                    return bool(ends) and all(consumer.position(tp) >= ends[tp] for tp in partitions)
                except Exception:  # kafka-python raises a KafkaError subclass: keep reading to the idle timeout
                    return False

            if not read_to_end():
                for message in consumer:
                    seen[str(message.partition)][str(message.offset)] = message.value.decode(errors="replace")
                    if read_to_end():
                        break
            return seen
        finally:
            consumer.close()

    def heal(self, timeout_ms: int) -> Result:
        """Every proxy passes, every node runs and is resumed; then wait (bounded) until every
        partition of the run's topics has its whole replica set as ISR. Whether that happened is for
        the checker (and decides whether the cluster may serve the next run: `close`)."""
        cluster = self.cluster
        assert cluster is not None
        started = time.monotonic()
        self.healed = False
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
                self.healed = True
                return {"settled": True, "seconds": round(time.monotonic() - started, 2)}
            time.sleep(0.5)
        return {"settled": False}

    # ------------------------------------------------------------------ observation

    def all_partitions(self) -> dict[str, dict[str, Any]]:
        """Every partition of the run's topics (another run's, on a kept cluster, are not its own)."""
        views = {}
        with contextlib.suppress(Exception):  # a cluster without a controller answers nothing
            for topic in self.admin.describe_topics():
                if topic["name"] not in self.created:
                    continue
                for p in topic.get("partitions", ()):
                    views[f"{topic['name']}-{p['partition_index']}"] = {
                        "leader": int(p["leader_id"]), "isr": [int(b) for b in p["isr_nodes"]],
                        "replicas": [int(b) for b in p["replica_nodes"]], "leader_epoch": int(p["leader_epoch"])}
        return views

    def observe(self, what: str, args: Args) -> Result:
        if what == REPLICA_LOGS:
            return self.replica_logs(self.kafka_topic(str(args["topic"])), int(args.get("partition", 0)))
        if what != "partition":
            raise ValueError(f"kafka-cluster cannot observe {what!r}")
        topic, partition = self.kafka_topic(str(args["topic"])), int(args.get("partition", 0))
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
                    view["hw"] = self.leader_high_watermark(topic, partition, int(p["leader_id"]))
                    return view
        return {"exists": False, "metadata_after_s": answered}

    def replica_logs(self, topic: str, partition: int) -> Result:
        """Every broker's log of the partition, from its log directory's segment files (a broker
        with no directory for it holds nothing: not a replica, or emptied by a disk loss)."""
        assert self.cluster is not None
        return {"replicas": {
            str(100 + b): read_partition(self.cluster.nodes[f"broker-{b}"].data_dir / f"{topic}-{partition}")
            for b in range(1, self.cluster.layout.brokers + 1)}}

    def metadata(self, topic: str | None) -> dict[str, Any]:
        """One Metadata answer: the topic's partitions and the brokers listed with them. A KRaft
        broker lists only unfenced brokers (`KRaftMetadataCache.getAliveBrokerNodes`), so the
        answer shows the controller's fencing as of the same metadata image as the ISR. Uses
        kafka-python's own Metadata call (`describe_topics` keeps only the topics); falls back to
        `describe_topics` (no broker list) where that is not there. `topic` None: no topic, the
        brokers alone (kafka-python's `describe_cluster` fails on brokers before 3.x's newest
        Metadata versions)."""
        call = getattr(self.admin, "_get_cluster_metadata", None)
        manager = getattr(self.admin, "_manager", None)
        if call is None or manager is None:
            return {"topics": self.admin.describe_topics([] if topic is None else [topic])}
        return dict(manager.run(call, [] if topic is None else [topic]))

    def leader_high_watermark(self, topic: str, partition: int, leader: int) -> int | None:
        """The high watermark the partition's leader answers, asked after the Metadata — or None at
        once when nothing can answer: no leader (-1: ListOffsets needs one, and the client would
        wait its request timeout for a leader to appear) or a leader this cluster paused (SIGSTOP:
        the kernel accepts the request, no one reads it). Either way the answer would have been
        None after the 6 s timeout, a quarter of the history of runs with a pause (docs/real-kafka.md)."""
        if leader < 0 or (self.cluster is not None and self.cluster.paused(f"broker-{leader - 100}")):
            return None
        return self.high_watermark(topic, partition)

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
