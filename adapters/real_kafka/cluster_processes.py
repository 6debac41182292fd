"""A real KRaft cluster on loopback: 1 or 3 controllers and 3–5 brokers started from a
``KAFKA_HOME`` (an unpacked release), with a TCP proxy (`tcp_proxy.TcpProxy`) in front of every
listener a fault can be put on, and the same interface over containers where Docker exists.

Layout of one cluster (``base`` is the first of a block of 100 ports, 23000–23999 by default):

* controller ``c`` (node id c, 1..3) listens on ``base + c``; controllers reach each other directly;
* broker ``b`` (node id 100+b) has a CLIENT listener on ``base + 10 + b`` (kafka-python, direct) and a
  REPLICATION listener on ``base + 20 + b``, advertised as its proxy ``base + 30 + b``: followers
  fetch from a leader through that proxy, so cutting it cuts the leader off from its followers;
* broker ``b`` reaches controller ``c`` through its own proxy ``base + 50 + 3(b-1) + (c-1)``
  (``controller.quorum.voters`` in the broker's file names the proxies), so one broker can be
  cut off from the controllers, or have its AlterPartition held in flight, alone.

Processes: every node is ``kafka-server-start.sh`` (which execs java) in its own session/process
group, stopped by PID (SIGTERM = clean shutdown, SIGKILL = crash), never ``kafka-server-stop.sh``
(it signals every Kafka on the machine: /work/shared/kafka/README.md). ``LOG_DIR`` is per node
and kept until `stop` (and after it when the run failed: the path is printed); data directories
are removed. A watchdog process kills every process group of the cluster and removes its
directory when the Python process that started it dies (SIGKILL included); the JVMs also get
PR_SET_PDEATHSIG.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from isrcheck.adapters.real_kafka.tcp_proxy import TcpProxy

PORT_RANGE = (23000, 23999)
BROKER_HEAP = "-Xmx256m -Xms128m"
CONTROLLER_HEAP = "-Xmx256m -Xms128m"
JVM_OPTS = "-server -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=2 -Djava.awt.headless=true"
STARTED = "Kafka Server started"


class ClusterStartError(RuntimeError):
    """A node did not come up; the message names the log directory."""


@dataclass(frozen=True)
class ClusterLayout:
    """How many nodes, which ports, which timings (all of them Kafka configuration keys)."""

    controllers: int = 1
    brokers: int = 3
    base_port: int = 23000
    session_timeout_ms: int = 6000
    heartbeat_interval_ms: int = 500
    replica_lag_time_max_ms: int = 3000
    min_insync_replicas: int = 2
    controller_socket_timeout_ms: int = 60000
    """How long a broker waits for a controller's answer (AlterPartition, heartbeat) before it
    retries — long, so a held AlterPartition stays the same request."""

    def __post_init__(self) -> None:
        if self.controllers not in (1, 3):
            raise ValueError("controllers must be 1 or 3")
        if not 1 <= self.brokers <= 5:
            raise ValueError("brokers must be 1..5")

    def controller_port(self, c: int) -> int:
        return self.base_port + c

    def client_port(self, b: int) -> int:
        return self.base_port + 10 + b

    def replication_port(self, b: int) -> int:
        return self.base_port + 20 + b

    def replication_proxy_port(self, b: int) -> int:
        return self.base_port + 30 + b

    def controller_proxy_port(self, b: int, c: int) -> int:
        return self.base_port + 50 + 3 * (b - 1) + (c - 1)

    @property
    def node_names(self) -> list[str]:
        return [f"controller-{c}" for c in range(1, self.controllers + 1)] + \
               [f"broker-{b}" for b in range(1, self.brokers + 1)]

    def properties(self, name: str, data_dir: Path) -> dict[str, str]:
        kind, number = name.split("-")
        n = int(number)
        common = {
            "controller.listener.names": "CONTROLLER",
            "log.dirs": str(data_dir),
            "auto.leader.rebalance.enable": "false",
            "unclean.leader.election.enable": "false",
            "broker.session.timeout.ms": str(self.session_timeout_ms),
            "broker.heartbeat.interval.ms": str(self.heartbeat_interval_ms),
            "min.insync.replicas": str(self.min_insync_replicas),
            "default.replication.factor": str(min(3, self.brokers)),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "1",
            "num.io.threads": "2",
            "background.threads": "2",
            "log.flush.interval.messages": "1",
        }
        if kind == "controller":
            voters = ",".join(f"{c}@127.0.0.1:{self.controller_port(c)}" for c in range(1, self.controllers + 1))
            return {"process.roles": "controller", "node.id": str(n), "controller.quorum.voters": voters,
                    "listeners": f"CONTROLLER://127.0.0.1:{self.controller_port(n)}",
                    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT", **common}
        voters = ",".join(f"{c}@127.0.0.1:{self.controller_proxy_port(n, c)}" for c in range(1, self.controllers + 1))
        return {
            "process.roles": "broker", "node.id": str(100 + n), "controller.quorum.voters": voters,
            "listeners": f"CLIENT://127.0.0.1:{self.client_port(n)},REPLICATION://127.0.0.1:{self.replication_port(n)}",
            "advertised.listeners": f"CLIENT://127.0.0.1:{self.client_port(n)},"
                                    f"REPLICATION://127.0.0.1:{self.replication_proxy_port(n)}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT",
            "inter.broker.listener.name": "REPLICATION",
            "replica.lag.time.max.ms": str(self.replica_lag_time_max_ms),
            "controller.socket.timeout.ms": str(self.controller_socket_timeout_ms),
            "replica.fetch.wait.max.ms": "200",
            **common,
        }


def resolve_kafka_home(release: str, option: str | None = None) -> Path | None:
    """``kafka-home=DIR``, else ``$KAFKA_HOME``, else ``../shared/kafka/<release>`` next to the
    checkout (the releases of /work/shared/kafka/README.md), if it exists."""
    if option:
        return Path(option)
    if os.environ.get("KAFKA_HOME"):
        return Path(os.environ["KAFKA_HOME"])
    profile = ".".join(release.split(".")[:2])
    checkout = Path(__file__).resolve().parents[2]
    candidate = checkout.parent / "shared" / "kafka" / profile
    return candidate if (candidate / "bin" / "kafka-server-start.sh").exists() else None


def port_free(port: int) -> bool:
    """Whether a listener could bind the port now — with SO_REUSEADDR, as Kafka's (Java) and the
    proxies' sockets do: a port whose last connections are in TIME_WAIT is free."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_base_port(first: int = PORT_RANGE[0], last: int = PORT_RANGE[1]) -> int:
    """The first block of 100 ports in [first, last] of which the 80 this layout may use are free."""
    for base in range(first, last - 99, 100):
        if all(port_free(base + offset) for offset in range(1, 80)):
            return base
    raise ClusterStartError(f"no free block of 100 ports in {first}-{last}")


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL this child when the thread that started it dies (Linux prctl)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


WATCHDOG = r"""
import os, signal, shutil, sys, time
parent, pids_file, workdir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
while True:
    time.sleep(1)
    if os.getppid() != parent:
        break
    if os.path.exists(pids_file + ".done"):
        sys.exit(0)
try:
    pids = [int(line) for line in open(pids_file) if line.strip()]
except OSError:
    pids = []
for pid in pids:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
time.sleep(1)
shutil.rmtree(workdir, ignore_errors=True)
"""


@dataclass
class Node:
    name: str
    properties: Path
    data_dir: Path
    log_dir: Path
    process: subprocess.Popen[bytes] | None = None
    paused: bool = False
    started_mark: int = 0
    """How many 'started' lines its server logs held when it was last launched: one more means it
    started again. Counted over server.log and its rolled copies (server.log.<hour>): both
    log4j 1 (3.x, DailyRollingFileAppender) and log4j 2 (4.x, config/log4j2.yaml's hourly
    TimeBasedTriggeringPolicy) roll server.log at the hour, so an offset into it can point past
    the end of a new, shorter file, and a restart across the hour was never seen to start."""

    @property
    def pid(self) -> int | None:
        return None if self.process is None or self.process.poll() is not None else self.process.pid


@dataclass
class LocalKafkaCluster:
    """The cluster of `ClusterLayout`, from ``kafka_home``. `start` → bootstrap servers."""

    kafka_home: Path
    layout: ClusterLayout = field(default_factory=ClusterLayout)
    cluster_id: str = field(default_factory=lambda: _random_cluster_id())
    workdir: Path | None = None
    nodes: dict[str, Node] = field(default_factory=dict)
    proxies: dict[str, TcpProxy] = field(default_factory=dict)
    watchdog: subprocess.Popen[bytes] | None = None
    failed: bool = False

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout_s: float = 120.0) -> str:
        self.workdir = Path(tempfile.mkdtemp(prefix=f"isrcheck-cluster-{self.layout.base_port}-"))
        self.start_watchdog()
        try:
            for name in self.layout.node_names:
                data, logs = self.workdir / "data" / name, self.workdir / "logs" / name
                logs.mkdir(parents=True)
                props = self.workdir / f"{name}.properties"
                props.write_text("".join(f"{k}={v}\n" for k, v in self.layout.properties(name, data).items()))
                self.nodes[name] = Node(name, props, data, logs)
            self.start_proxies()
            self.format_nodes(list(self.nodes))
            for name in self.nodes:
                self.launch(name)
            self.wait_started(list(self.nodes), timeout_s)
        except BaseException:
            self.failed = True
            self.stop()
            raise
        return self.bootstrap

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.layout.client_port(b)}" for b in range(1, self.layout.brokers + 1))

    def start_watchdog(self) -> None:
        assert self.workdir is not None
        (self.workdir / "pids").write_text("")
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG, str(os.getpid()), str(self.workdir / "pids"), str(self.workdir)],
            start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start_proxies(self) -> None:
        layout = self.layout
        for b in range(1, layout.brokers + 1):
            self.proxies[f"replication-{b}"] = TcpProxy(layout.replication_proxy_port(b), layout.replication_port(b))
            for c in range(1, layout.controllers + 1):
                self.proxies[f"broker-{b}->controller-{c}"] = TcpProxy(layout.controller_proxy_port(b, c),
                                                                       layout.controller_port(c))

    def env(self, node: Node) -> dict[str, str]:
        heap = CONTROLLER_HEAP if node.name.startswith("controller") else BROKER_HEAP
        return {**os.environ, "KAFKA_HOME": str(self.kafka_home), "LOG_DIR": str(node.log_dir),
                "KAFKA_HEAP_OPTS": heap, "KAFKA_JVM_PERFORMANCE_OPTS": JVM_OPTS}

    def format_nodes(self, names: list[str]) -> None:
        """``kafka-storage.sh format`` each node's log directory (two JVMs at a time)."""
        storage = str(self.kafka_home / "bin" / "kafka-storage.sh")
        for i in range(0, len(names), 2):
            running = []
            for name in names[i:i + 2]:
                node = self.nodes[name]
                env = {**self.env(node), "KAFKA_HEAP_OPTS": "-Xmx128m"}
                running.append((name, subprocess.Popen(
                    [storage, "format", "-t", self.cluster_id, "-c", str(node.properties)], env=env,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                    preexec_fn=_die_with_parent)))
            for name, process in running:
                output, _ = process.communicate(timeout=120)
                if process.returncode != 0:
                    raise ClusterStartError(f"format of {name} failed: {output.decode(errors='replace')[-800:]}")

    def launch(self, name: str) -> None:
        node = self.nodes[name]
        node.started_mark = self.started_lines(name)  # before the child can write its first line
        out = open(node.log_dir / "stdout.log", "ab")  # noqa: SIM115 - the child owns it
        node.process = subprocess.Popen(
            [str(self.kafka_home / "bin" / "kafka-server-start.sh"), str(node.properties)], env=self.env(node),
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=_die_with_parent)
        out.close()
        node.paused = False
        assert self.workdir is not None
        with open(self.workdir / "pids", "a") as pids:
            pids.write(f"{node.process.pid}\n")

    def started_lines(self, name: str) -> int:
        """'started' lines in the node's server.log and its rolled copies."""
        count = 0
        for path in self.nodes[name].log_dir.glob("server.log*"):
            with contextlib.suppress(OSError), open(path, "rb") as log:
                count += log.read().count(STARTED.encode())
        return count

    def started(self, name: str) -> bool:
        return self.started_lines(name) > self.nodes[name].started_mark

    def wait_started(self, names: list[str], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        waiting = list(names)
        while waiting:
            for name in list(waiting):
                node = self.nodes[name]
                if node.process is not None and node.process.poll() is not None:
                    raise ClusterStartError(f"{name} exited with {node.process.returncode}; logs: {node.log_dir}")
                if self.started(name):
                    waiting.remove(name)
            if waiting and time.monotonic() > deadline:
                raise ClusterStartError(f"{', '.join(waiting)} not started within {timeout_s:g} s; "
                                        f"logs: {self.workdir}/logs")
            if waiting:
                time.sleep(0.3)

    def stop(self, keep_logs: bool | None = None) -> None:
        """Kill every node (SIGKILL: the run is over), stop the proxies and the watchdog, remove the
        data; keep the logs (and print where) when the run failed."""
        for node in self.nodes.values():
            self.kill_group(node)
        for proxy in self.proxies.values():
            proxy.stop()
        self.proxies.clear()
        keep = self.failed if keep_logs is None else keep_logs
        if self.workdir is not None:
            (self.workdir / "pids.done").write_text("")
            if self.watchdog is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.watchdog.wait(timeout=3)
                if self.watchdog.poll() is None:
                    self.watchdog.kill()
                    self.watchdog.wait()
            if keep:
                shutil.rmtree(self.workdir / "data", ignore_errors=True)
                print(f"isrcheck: kafka logs kept in {self.workdir / 'logs'}", file=sys.stderr)
            else:
                shutil.rmtree(self.workdir, ignore_errors=True)
        self.nodes.clear()
        self.workdir = None

    def kill_group(self, node: Node) -> None:
        process = node.process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGCONT)
                os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=15)
        node.process = None
        node.paused = False

    # ------------------------------------------------------------------ faults

    def running(self, name: str) -> bool:
        return self.nodes[name].pid is not None

    def kill(self, name: str) -> None:
        """SIGKILL (a crash: no controlled shutdown, unflushed page cache survives on a real OS)."""
        self.kill_group(self.nodes[name])

    def terminate(self, name: str, timeout_s: float = 60.0) -> None:
        """SIGTERM: a clean shutdown (controlled shutdown for a broker); SIGKILL if it hangs."""
        node = self.nodes[name]
        if node.process is None or node.process.poll() is not None:
            node.process = None
            return
        if node.paused:
            self.resume(name)
        os.kill(node.process.pid, signal.SIGTERM)
        try:
            node.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill_group(node)
        node.process = None

    def pause(self, name: str) -> None:
        """SIGSTOP (a GC pause / frozen VM)."""
        node = self.nodes[name]
        if node.pid is not None and not node.paused:
            os.killpg(node.pid, signal.SIGSTOP)
            node.paused = True

    def resume(self, name: str) -> None:
        node = self.nodes[name]
        if node.pid is not None and node.paused:
            os.killpg(node.pid, signal.SIGCONT)
        node.paused = False

    def restart(self, name: str, wipe: bool = False, wait: bool = True, timeout_s: float = 90.0) -> None:
        """Start a stopped node again (killing it first if it runs); `wipe` empties its log
        directory and formats it again, same cluster id and node id (disk loss)."""
        node = self.nodes[name]
        if node.pid is not None:
            self.kill(name)
        if wipe:
            shutil.rmtree(node.data_dir, ignore_errors=True)
            self.format_nodes([name])
        self.launch(name)
        if wait:
            self.wait_started([name], timeout_s)

    def proxy(self, key: str) -> TcpProxy:
        return self.proxies[key]

    def broker_proxies(self, b: int) -> list[TcpProxy]:
        """Every proxy on a path of broker b: its replication listener and its controller links."""
        return [self.proxies[f"replication-{b}"]] + [
            self.proxies[f"broker-{b}->controller-{c}"] for c in range(1, self.layout.controllers + 1)]

    def log_dirs(self) -> dict[str, str]:
        return {name: str(node.log_dir) for name, node in self.nodes.items()}


def _random_cluster_id() -> str:
    """Kafka's `Uuid.randomUuid().toString()` form, never starting with '-' (Kafka's own
    `Uuid.randomUuid` draws again too): `kafka-storage.sh format -t -…` takes it for an option and
    the cluster does not start (1 run in 64 did not)."""
    import base64

    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


class ContainerKafkaCluster:
    """The same interface over Docker containers (`kafka_containers.KafkaClusterContainers`),
    where Docker exists: kill/pause/resume/terminate/restart(wipe) map to container operations;
    there are no proxies (network faults are Docker network disconnects of a whole broker)."""

    def __init__(self, image: str, layout: ClusterLayout) -> None:
        from isrcheck.adapters.real_kafka.kafka_containers import KafkaClusterContainers

        self.layout = layout
        ports = [layout.client_port(b) for b in range(1, layout.brokers + 1)]
        self.containers = KafkaClusterContainers(image, brokers=layout.brokers, controllers=layout.controllers,
                                                 session_timeout_ms=layout.session_timeout_ms, host_ports=ports)
        self.proxies: dict[str, TcpProxy] = {}
        self.failed = False
        self.down: set[str] = set()

    def start(self, timeout_s: float = 120.0) -> str:
        return str(self.containers.start())

    @property
    def bootstrap(self) -> str:
        return str(self.containers.bootstrap)

    def running(self, name: str) -> bool:
        return name not in self.down

    def kill(self, name: str) -> None:
        self.containers.fault("kill", name)
        self.down.add(name)

    def terminate(self, name: str, timeout_s: float = 60.0) -> None:
        self.containers.fault("stop", name)
        self.down.add(name)

    def pause(self, name: str) -> None:
        self.containers.fault("pause", name)

    def resume(self, name: str) -> None:
        with contextlib.suppress(Exception):  # not paused
            self.containers.fault("unpause", name)

    def restart(self, name: str, wipe: bool = False, wait: bool = True, timeout_s: float = 90.0) -> None:
        self.containers.fault("restart_empty" if wipe else ("start" if name in self.down else "restart"), name)
        self.down.discard(name)

    def proxy(self, key: str) -> TcpProxy:
        raise KeyError(f"no proxy {key!r}: containers have no per-link proxies (use disconnect)")

    def broker_proxies(self, b: int) -> list[TcpProxy]:
        return []

    def log_dirs(self) -> dict[str, str]:
        return {}

    def stop(self, keep_logs: bool | None = None) -> None:
        self.containers.stop()
