"""server.properties and command lines for real KRaft nodes (controller.md §9.3), as plain data.

Rendering is separate from launching so it is tested without Docker or a Kafka distribution:
`isrcheck.adapters.real_kafka.kafka_launcher` and `isrcheck.adapters.real_kafka.cluster_processes`
only write these files and run these commands, in processes or containers alike. A
controller-only node is formatted with the release/metadata.version under test
(`--release-version`), the ELR feature decided explicitly on 4.x (`--feature
eligible.leader.replicas.version=0|1`), `auto.leader.rebalance.enable=false` (no asynchronous
preferred elections) and the session timeout chosen by the harness.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.reference_impl.release import profile_named

DEFAULT_IMAGE = "apache/kafka"
DEFAULT_TAGS = {"3.7": "3.7.2", "3.8": "3.8.1", "3.9": "3.9.1", "4.0": "4.0.0", "4.1": "4.1.0"}
"""apache/kafka images exist from 3.7.0 (KIP-975); older releases need KAFKA_HOME."""
KAFKA_ROOT = "/opt/kafka"
CONTROLLER_PORT = 9093
DATA_DIR = "/var/lib/kafka/data"


def random_cluster_id() -> str:
    """Kafka's `Uuid.randomUuid().toString()` form, never starting with '-' (Kafka's own
    `Uuid.randomUuid` draws again too): `kafka-storage.sh format -t -…` takes it for an option and
    the node does not start (1 run in 64 did not)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def image_for(release: str, options: Mapping[str, str]) -> str:
    if "image" in options:
        return options["image"]
    tag = options.get("version") or DEFAULT_TAGS.get(profile_named(release).name)
    if tag is None:
        raise ValueError(f"no apache/kafka image for Kafka {release} (images start at 3.7); use kafka-local")
    return f"{DEFAULT_IMAGE}:{tag}"


@dataclass(frozen=True)
class NodeConfig:
    """One KRaft node's properties, rendered in a stable order."""

    node_id: int
    roles: str
    quorum_voters: str
    listeners: str
    advertised_listeners: str | None = None
    data_dir: str = DATA_DIR
    session_timeout_ms: int = 9000
    heartbeat_interval_ms: int = 2000
    extra: Mapping[str, str] = field(default_factory=dict)

    def properties(self) -> dict[str, str]:
        props = {
            "process.roles": self.roles,
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.quorum_voters,
            "controller.listener.names": "CONTROLLER",
            "listeners": self.listeners,
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": self.data_dir,
            "metadata.log.dir": self.data_dir,
            "auto.leader.rebalance.enable": "false",
            "broker.session.timeout.ms": str(self.session_timeout_ms),
            "broker.heartbeat.interval.ms": str(self.heartbeat_interval_ms),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
        }
        if "broker" in self.roles:
            props["inter.broker.listener.name"] = "PLAINTEXT"
        if self.advertised_listeners is not None:
            props["advertised.listeners"] = self.advertised_listeners
        props.update(self.extra)
        return props

    def render(self) -> str:
        return "".join(f"{key}={value}\n" for key, value in self.properties().items())


def controller_node(settings: ControllerSettings, session_timeout_ms: int, node_id: int = 1,
                    host: str = "localhost") -> NodeConfig:
    """§9.3's controller-only node: static single voter, cluster defaults from the settings."""
    extra = {"unclean.leader.election.enable": str(settings.unclean_leader_election_enable).lower(),
             "min.insync.replicas": str(settings.min_insync_replicas)}
    return NodeConfig(node_id, "controller", f"{node_id}@{host}:{CONTROLLER_PORT}",
                      f"CONTROLLER://0.0.0.0:{CONTROLLER_PORT}", session_timeout_ms=session_timeout_ms,
                      heartbeat_interval_ms=max(100, session_timeout_ms // 4), extra=extra)


def format_command(settings: ControllerSettings, cluster_id: str, properties_path: str,
                   kafka_root: str = KAFKA_ROOT) -> list[str]:
    """`kafka-storage.sh format` with the metadata.version and (4.x) the ELR feature under test."""
    command = [f"{kafka_root}/bin/kafka-storage.sh", "format", "--ignore-formatted", "-t", cluster_id,
               "-c", properties_path, "--release-version", settings.metadata_version]
    if not profile_named(settings.release).is_3x:
        command += ["--feature", f"eligible.leader.replicas.version={1 if settings.eligible_leader_replicas else 0}"]
    return command


def start_script(node: NodeConfig, cluster_id: str, settings: ControllerSettings | None = None,
                 kafka_root: str = KAFKA_ROOT, properties_path: str = "/tmp/isrcheck.properties") -> str:
    """A shell script that writes the properties, formats the storage and execs the server; a
    `.isrcheck-wipe` marker in the data directory makes the next start begin from an empty log
    directory (the "restart with an empty log dir" fault)."""
    if settings is not None:
        formatting = " ".join(format_command(settings, cluster_id, properties_path, kafka_root))
    else:
        formatting = f"{kafka_root}/bin/kafka-storage.sh format --ignore-formatted -t {cluster_id} -c {properties_path}"
    return (
        "set -e\n"
        f"if [ -e {node.data_dir}/.isrcheck-wipe ]; then rm -rf {node.data_dir}/* {node.data_dir}/.isrcheck-wipe; fi\n"
        f"cat > {properties_path} <<'PROPERTIES'\n{node.render()}PROPERTIES\n"
        f"{formatting}\n"
        f"exec {kafka_root}/bin/kafka-server-start.sh {properties_path}\n"
    )
