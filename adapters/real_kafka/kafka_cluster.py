"""kafka-cluster: real brokers (1 controller + 3 brokers in Docker) driven as a client would —
kafka-python producing with acks=all, consuming and describing — with fault injection, judged by
the black-box properties of `isrcheck.conformance.properties.black_box_cluster`.

Surface (a cluster-level `Target`, `levels = {"cluster"}`):

* operations — `create_topic` {topic, partitions=1, replication=3}; `produce` {topic,
  partition=0, records=1, acks="all"} → {error, offset, status}; `crash` {broker, lose:
  none|disk} (SIGKILL; `disk` restarts it with an empty log directory); `restart` {broker};
  `pause`/`unpause`/`disconnect`/`connect`/`stop` {broker}; `tick` {ms} (wall time passes);
  `heal` {} (every broker back, then wait for the ISR to settle); `consume` {topic}
  → {records};
* `observe("partition", {topic, partition})` → leader, isr, replicas (Metadata: no epochs);
  `observable_fields` names exactly those, so a differential engine compares nothing else;
* `unsupported_operations` — the message-level operations of the reference cluster
  (deliver, hold, drop, ...) a real network cannot perform on request;
* what it records for the checker: `acked` (acknowledged writes), `down_since` (when each
  broker went down), `partitions()` (what Metadata shows); the checks and the small random
  campaign are `isrcheck.conformance.engine.black_box_cluster`.

Broker ids are 101..103 (`broker: 1` means 101). Needs Docker (`docker_unavailable()`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import CLUSTER, Args, Result, Target, UnsupportedConfiguration
from isrcheck.adapters.real_kafka.kafka_containers import KafkaClusterContainers, docker_unavailable
from isrcheck.adapters.real_kafka.kafka_properties import image_for

from isrcheck.operations.black_box import Acked, PartitionView

MESSAGE_LEVEL = frozenset({"deliver", "hold", "release", "drop", "duplicate", "fetch", "lag_metadata",
                           "sync_metadata", "flush", "fail_over_controller", "check_leader", "check_replica",
                           "check_messages"})


class KafkaClusterTarget(Target):
    name = "kafka-cluster"
    levels = frozenset({CLUSTER})
    unsupported_operations = MESSAGE_LEVEL
    observable_fields = frozenset({"leader", "isr", "replicas"})

    def __init__(self, options: Mapping[str, str], session_timeout_ms: int = 6000) -> None:
        self.options = dict(options)
        self.session_timeout_ms = session_timeout_ms
        self.cluster: KafkaClusterContainers | None = None
        self.acked: list[Acked] = []
        self.down_since: dict[int, float] = {}
        self.admin: Any = None
        self.producer: Any = None
        self.counter = 0

    # ------------------------------------------------------------------ lifecycle

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        reason = docker_unavailable()
        if reason is not None:
            raise UnsupportedConfiguration(reason)
        try:
            image = image_for(release, self.options)
        except ValueError as error:
            raise UnsupportedConfiguration(str(error)) from None
        from kafka import KafkaAdminClient, KafkaProducer

        self.cluster = KafkaClusterContainers(image, session_timeout_ms=self.session_timeout_ms)
        bootstrap = self.cluster.start()
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=0, linger_ms=0,
                                      request_timeout_ms=5000, max_block_ms=5000)
        self.acked, self.down_since = [], {}

    def close(self) -> None:
        for client in (self.producer, self.admin):
            if client is not None:
                client.close()
        self.producer = self.admin = None
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None

    # ------------------------------------------------------------------ operations

    def node(self, broker: int) -> str:
        return f"broker-{broker if broker < 100 else broker - 100}"

    def execute(self, op: str, args: Args) -> Result:
        if self.cluster is None:
            raise RuntimeError("kafka-cluster: no cluster is open")
        broker = int(args.get("broker", 0))
        match op:
            case "create_topic":
                from kafka.admin import NewTopic

                self.admin.create_topics([NewTopic(str(args["topic"]), int(args.get("partitions", 1)),
                                                   int(args.get("replication", 3)))])
                return {"error": "NONE"}
            case "produce":
                return self.produce(args)
            case "consume":
                records = self.consume(str(args["topic"]))
                return {"records": sum(len(v) for v in records.values())}
            case "crash":
                lose = str(args.get("lose", "none"))
                self.cluster.fault("restart_empty" if lose == "disk" else "kill", self.node(broker))
                self.down_since.setdefault(broker + 100 if broker < 100 else broker, time.time())
                return {}
            case "restart" | "unpause" | "connect":
                self.cluster.fault({"restart": "start"}.get(op, op), self.node(broker))
                self.down_since.pop(broker + 100 if broker < 100 else broker, None)
                return {}
            case "pause" | "disconnect" | "stop":
                self.cluster.fault(op, self.node(broker))
                self.down_since.setdefault(broker + 100 if broker < 100 else broker, time.time())
                return {}
            case "tick":
                time.sleep(int(args.get("ms", 0)) / 1000)
                return {}
            case "heal":
                return self.heal()
        raise ValueError(f"kafka-cluster: unsupported operation {op!r}")

    def produce(self, args: Args) -> Result:
        topic, partition = str(args["topic"]), int(args.get("partition", 0))
        offsets = []
        for _ in range(int(args.get("records", 1))):
            self.counter += 1
            value = f"isrcheck-{self.counter}".encode()
            try:
                metadata = self.producer.send(topic, value=value, partition=partition).get(timeout=10)
            except Exception as error:  # kafka-python raises a KafkaError subclass per error code
                return {"error": type(error).__name__, "status": "failed", "offset": None}
            self.acked.append(Acked(topic, partition, int(metadata.offset), value))
            offsets.append(int(metadata.offset))
        return {"error": "NONE", "status": "acked", "offset": offsets[0] if offsets else None}

    def consume(self, topic: str) -> dict[tuple[str, int], dict[int, bytes]]:
        from kafka import KafkaConsumer, TopicPartition

        assert self.cluster is not None
        consumer = KafkaConsumer(bootstrap_servers=self.cluster.bootstrap, enable_auto_commit=False,
                                 auto_offset_reset="earliest", consumer_timeout_ms=3000)
        try:
            partitions = [TopicPartition(topic, p) for p in (consumer.partitions_for_topic(topic) or ())]
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            seen: dict[tuple[str, int], dict[int, bytes]] = {}
            for message in consumer:
                seen.setdefault((message.topic, message.partition), {})[message.offset] = message.value
            return seen
        finally:
            consumer.close()

    def heal(self) -> Result:
        assert self.cluster is not None
        for node in list(self.cluster.nodes):
            if node.startswith("broker-"):
                for fault in ("unpause", "connect", "start"):
                    try:
                        self.cluster.fault(fault, node)
                    except Exception:  # the node was not in that state
                        continue
        self.down_since.clear()
        time.sleep(self.session_timeout_ms / 1000 + 5)
        return {}

    # ------------------------------------------------------------------ observation and checks

    def partitions(self) -> dict[tuple[str, int], PartitionView]:
        views = {}
        for topic in self.admin.describe_topics():
            for p in topic.get("partitions", ()):
                views[(topic["topic"], int(p["partition"]))] = PartitionView(
                    int(p["leader"]), tuple(int(b) for b in p["isr"]), tuple(int(b) for b in p["replicas"]))
        return views

    def observe(self, what: str, args: Args) -> Result:
        if what != "partition":
            raise ValueError(f"kafka-cluster cannot observe {what!r}")
        view = self.partitions().get((str(args["topic"]), int(args.get("partition", 0))))
        if view is None:
            return {"exists": False}
        return {"exists": True, "leader": view.leader, "isr": list(view.isr), "replicas": list(view.replicas)}


def cluster_target(options: dict[str, str]) -> Target:
    from isrcheck.adapters.options import int_option

    return KafkaClusterTarget(options, int_option(options, "session-timeout-ms", 6000))
