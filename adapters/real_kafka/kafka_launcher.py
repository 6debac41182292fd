"""One launcher for real KRaft controllers: a local `KAFKA_HOME` or `apache/kafka` containers.

`KafkaControllers` is the `EndpointProvider` of `kafka-local` and `kafka-docker`: it starts a
controller-only quorum of 1 or 3 nodes formatted with the run's settings (controller.md §9.3,
`isrcheck.adapters.real_kafka.kafka_properties`), waits until every node answers ApiVersions, and hands out a
`ControllerEndpoint` whose metadata source reads the committed log by Raft Fetch
(`isrcheck.adapters.kafka_wire.metadata_fetch`) with the release's own record schemas
(`isrcheck.adapters.kafka_wire.metadata_schema`).
What differs between a process and a container is only the `NodeRunner` (start a node, signal
it, where its address and the `kafka-metadata` jar are).

Clean-up (docs/real-kafka.md): every local node runs under `adapters/real_kafka/kafka_watchdog.py`, which
stops the node's process group and removes the run's directory when isrcheck's pipe closes —
after a normal end, SIGINT or SIGKILL alike. When a node fails to start or dies on its own, the
directory (each node's `server.log`, `controller.log`, console output) is kept and its path is
printed and put in the failure message.

Controller fail-over (`fail_over`): SIGKILL the active controller, wait until the survivors elect
a leader (the Raft Fetch answers name it), then restart the killed node so the quorum has three
voters again for the next fail-over.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from isrcheck.adapters.base import TargetFailure, TargetUnavailable
from isrcheck.adapters.kafka_wire.controller_endpoints import ControllerEndpoint
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.metadata_fetch import MetadataFetchError, RaftFetchSource
from isrcheck.adapters.kafka_wire.metadata_schema import RecordDecoder
from isrcheck.adapters.real_kafka.docker_engine import remove_with_session
from isrcheck.adapters.real_kafka.kafka_properties import NodeConfig, controller_node, random_cluster_id, start_script
from isrcheck.adapters.real_kafka.node_hosts import ContainerHost, NodeHandle, NodeStartError
from isrcheck.adapters.wire import KafkaConnection, WireError

WATCHDOG = Path(__file__).with_name("kafka_watchdog.py")
PORTS_VARIABLE = "ISRCHECK_KAFKA_PORTS"
DEFAULT_PORTS = "20000-29999"
"""Below the usual ephemeral range (32768+), so no client socket holds a chosen port."""
STARTUP_TIMEOUT_S = 120.0
LATENCY_SETTINGS = {"controller.quorum.append.linger.ms": "1"}
"""The controller batches writes for up to 25 ms by default before it appends them; every ghost
RPC waits for its commit, so a test controller appends at once (≈12 ms → ≈3 ms per write)."""
QUORUM_SETTINGS = {
    "controller.quorum.election.timeout.ms": "1000",
    "controller.quorum.fetch.timeout.ms": "1500",
    "controller.quorum.election.backoff.max.ms": "500",
}
"""A little quicker elections after a fail-over (defaults 1000 / 2000 / 1000 ms); shorter ones made
the leader change by itself on a loaded machine."""


def port_range() -> range:
    low, high = (int(p) for p in os.environ.get(PORTS_VARIABLE, DEFAULT_PORTS).split("-"))
    return range(low, high + 1)


def free_ports(count: int, taken: set[int] | None = None) -> list[int]:
    """`count` loopback ports of ISRCHECK_KAFKA_PORTS (default 20000-29999) nobody listens on."""
    candidates = list(port_range())
    random.shuffle(candidates)
    chosen: list[int] = []
    for port in candidates:
        if port in chosen or (taken and port in taken):
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        chosen.append(port)
        if len(chosen) == count:
            return chosen
    raise TargetFailure("error", f"no {count} free ports in {PORTS_VARIABLE}={os.environ.get(PORTS_VARIABLE)}")


class RunningNode(Protocol):
    node_id: int
    address: tuple[str, int]

    def alive(self) -> bool: ...

    def stop(self, crash: bool = False) -> None:
        """SIGTERM (clean shutdown) or SIGKILL (crash), then wait until it is gone."""
        ...


class NodeRunner(Protocol):
    description: str

    def start(self, node: NodeConfig, cluster_id: str, settings: ControllerSettings) -> RunningNode: ...

    def decoder(self) -> RecordDecoder: ...

    def close(self, keep_logs: bool) -> str | None:
        """Remove what was made for the nodes; with keep_logs, keep the logs and return where."""
        ...


# ---------------------------------------------------------------------------------------- local


@dataclass
class LocalNode:
    node_id: int
    address: tuple[str, int]
    process: subprocess.Popen[bytes]
    log_dir: str
    stopped: bool = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, line: str) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.write(line.encode() + b"\n")
                self.process.stdin.flush()
            except BrokenPipeError:
                pass

    def stop(self, crash: bool = False) -> None:
        self.stopped = True
        if self.alive():
            self.send("KILL" if crash else "TERM")
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.send("KILL")
                self.process.wait(10)
        if self.process.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()


def data_base() -> str | None:
    """Where the nodes' log directories go: $ISRCHECK_KAFKA_DATA, else /dev/shm when writable. The
    controller fsyncs its log before it commits, and every ghost RPC waits for a commit: on tmpfs
    an fsync is free (≈0.002 ms here, ≈7 ms on the disk), which is most of a request's latency."""
    chosen = os.environ.get("ISRCHECK_KAFKA_DATA")
    if chosen:
        return chosen
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def prepare_node(node: NodeConfig, cluster_id: str, settings: ControllerSettings, work: str, data: str,
                 kafka_root: str, heap: str, classpath: str = "") -> tuple[str, str, NodeConfig, str, dict[str, str]]:
    """What starting one controller node needs, the same for a process and a container: its name,
    its log directory (made), the node with its data directory, the start script (properties,
    format, exec) and the environment the script runs in."""
    name = f"node{node.node_id}"
    log_dir = f"{work}/{name}-logs"
    os.makedirs(log_dir, exist_ok=True)
    node = replace(node, data_dir=f"{data}/{name}")
    script = start_script(node, cluster_id, settings, kafka_root=kafka_root,
                          properties_path=f"{work}/{name}.properties")
    env = {"LOG_DIR": log_dir, "KAFKA_HEAP_OPTS": os.environ.get("KAFKA_HEAP_OPTS", heap)}
    if classpath:  # kafka-run-class.sh appends libs/* after the CLASSPATH it inherits
        env["CLASSPATH"] = classpath
    return name, log_dir, node, script, env


class LocalRunner:
    """Nodes as processes of an unpacked distribution (`KAFKA_HOME`), one directory per run
    (properties, logs, console output) plus one for the nodes' data (`data_base()`)."""

    def __init__(self, home: str, heap: str = "-Xmx512m", classpath: str = "") -> None:
        self.home = home
        self.heap = heap
        self.classpath = classpath
        """Entries put first on the nodes' class path (`patched_classpath.classpath_first`)."""
        self.description = f"KAFKA_HOME={home}"
        self.work = tempfile.mkdtemp(prefix="isrcheck-kafka-")
        self.data = tempfile.mkdtemp(prefix="isrcheck-kafka-data-", dir=data_base())
        self.nodes: list[LocalNode] = []
        self.starts = 0

    def start(self, node: NodeConfig, cluster_id: str, settings: ControllerSettings) -> LocalNode:
        self.starts += 1
        _, log_dir, node, script, launch_env = prepare_node(node, cluster_id, settings, self.work, self.data,
                                                            self.home, self.heap, self.classpath)
        env = {**os.environ, **launch_env}
        with open(f"{log_dir}/console-{self.starts}.out", "wb") as console:
            process = subprocess.Popen(
                [sys.executable, str(WATCHDOG), "--remove", self.work, "--remove", self.data, "--", "sh", "-c", script],
                stdin=subprocess.PIPE, stdout=console, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        host, _, port = node.listeners.partition("://")[2].rpartition(":")
        running = LocalNode(node.node_id, (host, int(port)), process, log_dir)
        self.nodes.append(running)
        return running

    def decoder(self) -> RecordDecoder:
        return RecordDecoder.for_kafka_home(self.home)

    def close(self, keep_logs: bool) -> str | None:
        for node in self.nodes:
            if keep_logs:
                node.send("KEEP")
            node.stop()
        self.nodes.clear()
        shutil.rmtree(self.data, ignore_errors=True)
        if keep_logs:
            return self.work
        shutil.rmtree(self.work, ignore_errors=True)
        return None


# ---------------------------------------------------------------------------------------- docker


@dataclass
class HostedNode:
    """A controller started on a `NodeHost` (a container of the image under test)."""

    node_id: int
    address: tuple[str, int]
    handle: NodeHandle

    def alive(self) -> bool:
        return self.handle.alive()

    def stop(self, crash: bool = False) -> None:
        if crash:
            self.handle.kill()
        else:
            self.handle.terminate(30)


class DockerRunner:
    """Nodes as containers of an `apache/kafka` image on the host's network (`node_hosts`): the same
    properties, 127.0.0.1 listeners, start script and directories as `LocalRunner` (bind-mounted at
    their own paths), so logs are kept and read alike; the schemas come from the image's own
    `kafka-metadata` jar. Containers are removed at `close`, and by the session reaper
    (`docker_engine`) whenever isrcheck ends."""

    def __init__(self, image: str, heap: str = "-Xmx512m") -> None:
        self.image = image
        self.heap = heap
        self.description = f"image {image}"
        self.work = tempfile.mkdtemp(prefix="isrcheck-docker-")
        self.data = tempfile.mkdtemp(prefix="isrcheck-docker-data-", dir=data_base())
        self.host = ContainerHost(image, [self.work, self.data])
        for directory in (self.work, self.data):
            remove_with_session(directory)
        self.nodes: list[HostedNode] = []
        self.starts = 0

    def start(self, node: NodeConfig, cluster_id: str, settings: ControllerSettings) -> HostedNode:
        self.starts += 1
        name, log_dir, node, script, env = prepare_node(node, cluster_id, settings, self.work, self.data,
                                                        self.host.kafka_root, self.heap)
        handle = self.host.start(name, ["sh", "-c", script], env, Path(log_dir) / f"console-{self.starts}.out")
        host, _, port = node.listeners.partition("://")[2].rpartition(":")
        running = HostedNode(node.node_id, (host, int(port)), handle)
        self.nodes.append(running)
        return running

    def decoder(self) -> RecordDecoder:
        from isrcheck.adapters.kafka_wire.metadata_schema import load_schemas

        jar = Path(self.work) / "kafka-metadata.jar"
        code, output = self.host.run_tool(
            ["sh", "-c", f"cp {self.host.kafka_root}/libs/kafka-metadata-*.jar {jar}"], {}, 60)
        if code != 0 or not jar.exists():
            raise TargetFailure("error", f"{self.image}: no kafka-metadata jar in {self.host.kafka_root}/libs: "
                                         f"{output.strip()[-300:]}")
        return RecordDecoder(load_schemas(jar))

    def close(self, keep_logs: bool) -> str | None:
        for node in self.nodes:
            node.stop(crash=True)
        self.nodes.clear()
        self.host.remove_all()
        shutil.rmtree(self.data, ignore_errors=True)
        if keep_logs:
            remove_with_session(self.work, keep=True)
            return self.work
        shutil.rmtree(self.work, ignore_errors=True)
        return None


# ---------------------------------------------------------------------------------------- quorum


def wait_until_serving(node: RunningNode, deadline: float) -> None:
    host, port = node.address
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not node.alive():
            raise TargetFailure("crash", f"controller {node.node_id} exited while starting")
        try:
            KafkaConnection(host, port, 5.0).close()
            return
        except (WireError, OSError) as error:
            last = error
            time.sleep(0.25)
    raise TargetFailure("timeout", f"controller {node.node_id} on {host}:{port} did not answer ApiVersions: {last}")


class KafkaControllers:
    """EndpointProvider: a controller-only quorum (1 or 3 voters) for the latest settings."""

    def __init__(self, runner_factory: Any, session_timeout_ms: int, controllers: int = 1) -> None:
        if controllers not in (1, 3):
            raise ValueError("controllers must be 1 or 3")
        self.runner_factory = runner_factory
        self.session_timeout_ms = session_timeout_ms
        self.controllers = controllers
        self.runner: NodeRunner | None = None
        self.settings: ControllerSettings | None = None
        self.configs: dict[int, NodeConfig] = {}
        self.nodes: dict[int, RunningNode] = {}
        self.endpoint: ControllerEndpoint | None = None
        self.cluster_id = ""
        self.decoder: RecordDecoder | None = None
        self.failed = False
        atexit.register(self.close)

    @property
    def voters(self) -> Mapping[int, tuple[str, int]]:
        return {node_id: node.address for node_id, node in self.nodes.items()}

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        if (self.endpoint is not None and settings == self.settings
                and all(node.alive() for node in self.nodes.values())):
            return self.endpoint
        if self.nodes and not all(node.alive() for node in self.nodes.values()):
            self.failed = True
        self.close()
        self.failed = False
        runner: NodeRunner = self.runner_factory()
        self.runner, self.settings = runner, settings
        ports = free_ports(self.controllers)
        voters = ",".join(f"{i + 1}@127.0.0.1:{port}" for i, port in enumerate(ports))
        self.cluster_id = random_cluster_id()
        try:
            for index, port in enumerate(ports):
                base = controller_node(settings, self.session_timeout_ms, node_id=index + 1)
                extra = {**base.extra, **LATENCY_SETTINGS, **(QUORUM_SETTINGS if self.controllers > 1 else {})}
                self.configs[index + 1] = replace(base, quorum_voters=voters,
                                                  listeners=f"CONTROLLER://127.0.0.1:{port}", extra=extra)
                self.nodes[index + 1] = runner.start(self.configs[index + 1], self.cluster_id, settings)
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            for node in self.nodes.values():
                wait_until_serving(node, deadline)
            self.decoder = runner.decoder()
            leader = self.leader_address(deadline)
        except (TargetFailure, OSError, MetadataFetchError, NodeStartError) as error:
            self.failed = True
            kept = self.close()
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise TargetUnavailable(
                f"{runner.description} did not start: {first} (node logs kept in {kept})") from error
        decoder = self.decoder
        self.endpoint = ControllerEndpoint(
            leader[0], leader[1], lambda: RaftFetchSource(leader[0], leader[1], decoder, voters=self.voters),
            self.session_timeout_ms, settings, self.cluster_id,
            f"{runner.description}: {self.controllers} controller(s) on "
            + ", ".join(f"{h}:{p}" for h, p in self.voters.values()),
            voters=dict(self.voters), fail_over=self.fail_over if self.controllers > 1 else None)
        return self.endpoint

    def leader_address(self, deadline: float) -> tuple[str, int]:
        """Ask any live voter by Raft Fetch who leads (an observer's first fetch is redirected)."""
        assert self.decoder is not None
        live = [node for node in self.nodes.values() if node.alive()]
        while time.monotonic() < deadline:
            for node in live:
                source = RaftFetchSource(*node.address, self.decoder, voters=self.voters, timeout_s=5.0)
                try:
                    source.poll()
                    return source.address
                except (WireError, OSError, MetadataFetchError):
                    continue
                finally:
                    source.close()
            time.sleep(0.2)
        raise TargetFailure("timeout", "the controller quorum elected no leader")

    def fail_over(self, current: tuple[str, int]) -> tuple[str, int]:
        """Crash the active controller (SIGKILL), wait for a new leader, restart the old one;
        returns the new leader's address."""
        assert self.runner is not None and self.settings is not None
        victim = next((n for n in self.nodes.values() if n.address == current), None)
        if victim is None:
            raise TargetFailure("error", f"no controller at {current[0]}:{current[1]}")
        victim.stop(crash=True)
        deadline = time.monotonic() + 30
        survivors = {i: n for i, n in self.nodes.items() if n is not victim}
        saved, self.nodes = self.nodes, survivors
        try:
            leader = self.leader_address(deadline)
        finally:
            self.nodes = saved
        self.nodes[victim.node_id] = self.runner.start(self.configs[victim.node_id], self.cluster_id, self.settings)
        return leader

    def close(self) -> str | None:
        runner, self.runner = self.runner, None
        self.nodes, self.configs, self.endpoint = {}, {}, None
        if runner is None:
            return None
        kept = runner.close(keep_logs=self.failed)
        if kept is not None:
            print(f"isrcheck: Kafka node logs kept in {kept}", file=sys.stderr)
        return kept

    def mark_failed(self) -> None:
        """Keep the node logs at close (a run on this quorum failed)."""
        self.failed = True


class RunningController:
    """EndpointProvider for a real controller someone else runs (`kafka-wire,bootstrap=HOST:PORT,
    kafka-home=DIR`): observed by Raft Fetch with the schemas of DIR's (or a jar's) kafka-metadata;
    runs whose settings it cannot serve are skipped by the target's check (controller_settings)."""

    def __init__(self, host: str, port: int, schemas: str, session_timeout_ms: int,
                 cluster_id: str | None = None) -> None:
        from isrcheck.adapters.kafka_wire.metadata_schema import load_schemas, metadata_jar

        jar = Path(schemas) if schemas.endswith(".jar") else metadata_jar(schemas)
        self.decoder = RecordDecoder(load_schemas(jar))
        self.host, self.port = host, port
        self.session_timeout_ms = session_timeout_ms
        self.cluster_id = cluster_id
        self.endpoint: ControllerEndpoint | None = None

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        """The same endpoint for every run, so the target keeps its connection and metadata image
        (a new one each run made it reconnect and re-read the whole log: FixedEndpoint)."""
        if self.endpoint is None:
            decoder = self.decoder
            self.endpoint = ControllerEndpoint(
                self.host, self.port, lambda: RaftFetchSource(self.host, self.port, decoder),
                self.session_timeout_ms, None, self.cluster_id, f"{self.host}:{self.port}")
        return self.endpoint

    def close(self) -> None:
        pass
