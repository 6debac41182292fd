"""Real Kafka in Docker via testcontainers: a controller-only node, and multi-broker clusters with
fault injection (landscape.md §4, controller.md §9.3).

testcontainers' own KafkaContainer cannot run `apache/kafka` (it relies on Confluent's scripts,
landscape.md §4), so nodes are plain `DockerContainer`s running the start script of
`isrcheck.adapters.real_kafka.kafka_properties` (write properties, format with the release under test, exec the
server). Readiness is "the listener answers ApiVersions", not a log line.

Faults (`KafkaClusterContainers.fault`): pause/unpause (SIGSTOP-like freeze), stop/start,
kill (SIGKILL) then start, restart, restart with an empty log directory, network
disconnect/connect. Everything here needs a reachable Docker engine; `docker_unavailable()`
says why not in one line, which is what the docker-marked tests skip with.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.real_kafka.kafka_properties import (
    CONTROLLER_PORT,
    DATA_DIR,
    NodeConfig,
    cluster_nodes,
    controller_node,
    dump_log_command,
    start_script,
)
from isrcheck.adapters.wire import KafkaConnection, WireError

FAULTS = ("pause", "unpause", "stop", "start", "kill", "restart", "restart_empty", "disconnect", "connect")


def docker_unavailable() -> str | None:
    """None when a Docker engine answers; otherwise the reason, in one line."""
    try:
        import docker
    except ImportError as error:
        return f"docker SDK not installed: {error}"
    try:
        docker.from_env(timeout=5).ping()
    except Exception as error:  # the SDK raises many types for "no engine"
        return f"no Docker engine reachable: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    return None


def random_cluster_id() -> str:
    """Kafka's `Uuid.randomUuid().toString()` form, never starting with '-' (which
    `kafka-storage.sh format -t` would take for an option — the node then never starts)."""
    import base64

    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def wait_for_api_versions(host: str, port: int, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            KafkaConnection(host, port, 5.0).close()
            return
        except (WireError, OSError) as error:
            last = error
            time.sleep(0.5)
    raise TimeoutError(f"{host}:{port} did not answer ApiVersions within {timeout_s:g} s: {last}")


def _container(image: str, node: NodeConfig, cluster_id: str, settings: ControllerSettings | None) -> Any:
    from testcontainers.core.container import DockerContainer

    script = start_script(node, cluster_id, settings)
    return DockerContainer(image).with_command(["sh", "-c", script]).with_kwargs(entrypoint=[])


@dataclass
class ControllerContainer:
    """A controller-only KRaft node (§9.3) formatted with `settings`; `dump()` reads its log."""

    image: str
    settings: ControllerSettings
    session_timeout_ms: int
    cluster_id: str = field(default_factory=random_cluster_id)
    container: Any = None

    def start(self) -> tuple[str, int]:
        node = controller_node(self.settings, self.session_timeout_ms)
        self.container = _container(self.image, node, self.cluster_id, self.settings).with_exposed_ports(
            CONTROLLER_PORT)
        self.container.start()
        host, port = self.address
        wait_for_api_versions(host, port)
        return host, port

    @property
    def address(self) -> tuple[str, int]:
        return self.container.get_container_host_ip(), int(self.container.get_exposed_port(CONTROLLER_PORT))

    def dump(self) -> str:
        result = self.container.exec(["sh", "-c", dump_log_command()])
        output = result.output if hasattr(result, "output") else result[1]
        return bytes(output or b"").decode("utf-8", errors="replace")

    def stop(self) -> None:
        if self.container is not None:
            self.container.stop()
            self.container = None


@dataclass
class KafkaClusterContainers:
    """Controllers + brokers on one Docker network; brokers published on fixed host ports."""

    image: str
    brokers: int = 3
    controllers: int = 1
    session_timeout_ms: int = 6000
    host_ports: list[int] = field(default_factory=lambda: [29092, 29093, 29094])
    cluster_id: str = field(default_factory=random_cluster_id)
    nodes: dict[str, Any] = field(default_factory=dict)
    network: Any = None

    def start(self) -> str:
        from testcontainers.core.network import Network

        self.network = Network().__enter__()
        configs = cluster_nodes(self.controllers, self.brokers, self.session_timeout_ms, self.host_ports)
        for node in configs:
            name = f"controller-{node.node_id}" if node.roles == "controller" else f"broker-{node.node_id - 100}"
            container = _container(self.image, node, self.cluster_id, None).with_network(
                self.network).with_network_aliases(name)
            if node.roles == "broker":
                port = self.host_ports[node.node_id - 101]
                container = container.with_bind_ports(port, port)
            self.nodes[name] = container.start()
        for port in self.host_ports[: self.brokers]:
            wait_for_api_versions("localhost", port)
        return self.bootstrap

    @property
    def bootstrap(self) -> str:
        return ",".join(f"localhost:{p}" for p in self.host_ports[: self.brokers])

    def fault(self, kind: str, node: str) -> None:
        """Inject one fault into the node called `node` (e.g. `broker-2`)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r} (known: {', '.join(FAULTS)})")
        wrapped = self.nodes[node].get_wrapped_container()
        if kind == "pause":
            wrapped.pause()
        elif kind == "unpause":
            wrapped.unpause()
        elif kind == "stop":
            wrapped.stop(timeout=10)
        elif kind == "start":
            wrapped.start()
        elif kind == "kill":
            wrapped.kill()
        elif kind == "restart":
            wrapped.restart(timeout=10)
        elif kind == "restart_empty":
            wrapped.exec_run(["sh", "-c", f"touch {DATA_DIR}/.isrcheck-wipe"])
            wrapped.kill()
            wrapped.start()
        elif kind == "disconnect":
            self.network._network.disconnect(wrapped)  # testcontainers' Network wraps the SDK's
        elif kind == "connect":
            self.network._network.connect(wrapped, aliases=[node])

    def stop(self) -> None:
        for container in self.nodes.values():
            with contextlib.suppress(Exception):  # best-effort teardown
                container.stop()
        self.nodes.clear()
        if self.network is not None:
            self.network.__exit__(None, None, None)
            self.network = None
