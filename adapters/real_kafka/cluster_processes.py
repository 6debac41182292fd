"""A real KRaft cluster on loopback: 1 or 3 controllers and 3–5 brokers, processes of a
``KAFKA_HOME`` (an unpacked release) or ``apache/kafka`` containers on the host's network
(`node_hosts`), with a TCP proxy (`tcp_proxy.TcpProxy`) in front of every listener a fault can be
put on — the same layout, properties, proxies and faults for both.

Layout of one cluster (``base`` is the first of a block of 100 ports, 23000–23999 by default):

* controller ``c`` (node id c, 1..3) listens on ``base + c``; controllers reach each other directly;
* broker ``b`` (node id 100+b) has a CLIENT listener on ``base + 10 + b`` (kafka-python, direct) and a
  REPLICATION listener on ``base + 20 + b``, advertised as its proxy ``base + 30 + b``: followers
  fetch from a leader through that proxy, so cutting it cuts the leader off from its followers;
* broker ``b`` reaches controller ``c`` through its own proxy ``base + 50 + 3(b-1) + (c-1)``
  (``controller.quorum.voters`` in the broker's file names the proxies), so one broker can be
  cut off from the controllers, or have its AlterPartition held in flight, alone.

Nodes: every node is ``kafka-server-start.sh`` (which execs java): a process in its own
session/process group, stopped by PID (SIGTERM = clean shutdown, SIGKILL = crash), never ``kafka-server-stop.sh``
(it signals every Kafka on the machine: /work/shared/kafka/README.md). ``LOG_DIR`` is per node
and kept until `stop` (and after it when the run failed: the path is printed); data directories
are removed. A watchdog process kills every process group of the cluster and removes its
directory when the Python process that started it dies (SIGKILL included); the JVMs also get
PR_SET_PDEATHSIG. A container node is signalled through the engine (`docker kill`/`stop`/`pause`)
and removed with the process's session (`docker_engine`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from isrcheck.adapters.real_kafka.kafka_properties import random_cluster_id
from isrcheck.adapters.real_kafka.node_hosts import NodeHandle, NodeHost, ProcessNode
from isrcheck.adapters.real_kafka.tcp_proxy import PASS, TcpProxy

PORT_RANGE = (23000, 23999)
BROKER_HEAP = "-Xmx256m -Xms128m"
CONTROLLER_HEAP = "-Xmx256m -Xms128m"
JVM_OPTS = "-server -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=2 -Djava.awt.headless=true"
STARTED = "Kafka Server started"
KAFKA_DEFAULT_TIMINGS = ("broker.session.timeout.ms", "broker.heartbeat.interval.ms", "replica.lag.time.max.ms",
                         "controller.socket.timeout.ms", "replica.fetch.wait.max.ms", "log.flush.interval.messages")
"""The keys `ClusterLayout.kafka_defaults` leaves out of the nodes' files, so the release's own
defaults apply (3.9.0: 9000, 2000, 30000, 30000, 500 ms and no forced flush —
`KRaftConfigs.BROKER_SESSION_TIMEOUT_MS_DEFAULT`, `BROKER_HEARTBEAT_INTERVAL_MS_DEFAULT`,
`ReplicationConfigs.REPLICA_LAG_TIME_MAX_MS_DEFAULT`, `CONTROLLER_SOCKET_TIMEOUT_MS_DEFAULT`,
`REPLICA_FETCH_WAIT_MAX_MS_DEFAULT`, `ServerLogConfigs.LOG_FLUSH_INTERVAL_MESSAGES_DEFAULT`)."""
KAFKA_SESSION_TIMEOUT_MS = 9000
"""`broker.session.timeout.ms` as shipped (3.3.2 to 4.1.1: `KRaftConfigs.BROKER_SESSION_TIMEOUT_MS_DEFAULT`
at 3.9.0), what the checker's clock-bound properties need to know under `kafka_defaults`."""


class ClusterStartError(RuntimeError):
    """A node did not come up; the message names the log directory."""


class PortsTaken(ClusterStartError):
    """Another process took a port of the block between `free_base_port`'s look and the bind (a
    proxy's, or a node's listener): the cluster may start on another block."""


BIND_FAILED = ("Address already in use", "BindException")
"""What a Kafka node logs when its listener's port is taken (`SocketServer` at every release)."""


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
    kafka_defaults: bool = False
    """Leave every timing key of `KAFKA_DEFAULT_TIMINGS` to the release's default (the fields above
    are then not written): a finding reproduced this way needs no tuned timeout."""

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
        if self.kafka_defaults:
            common = {k: v for k, v in common.items() if k not in KAFKA_DEFAULT_TIMINGS}
        if kind == "controller":
            voters = ",".join(f"{c}@127.0.0.1:{self.controller_port(c)}" for c in range(1, self.controllers + 1))
            return {"process.roles": "controller", "node.id": str(n), "controller.quorum.voters": voters,
                    "listeners": f"CONTROLLER://127.0.0.1:{self.controller_port(n)}",
                    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT", **common}
        voters = ",".join(f"{c}@127.0.0.1:{self.controller_proxy_port(n, c)}" for c in range(1, self.controllers + 1))
        broker = {
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
        if self.kafka_defaults:
            broker = {k: v for k, v in broker.items() if k not in KAFKA_DEFAULT_TIMINGS}
        return broker


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
    """A block of 100 ports in [first, last] of which the 80 this layout may use are free, tried
    in random order: clusters started at the same moment (test workers, campaign workers) would
    otherwise all see the first block free and collide in it."""
    bases = list(range(first, last - 99, 100))
    random.shuffle(bases)
    for base in bases:
        if all(port_free(base + offset) for offset in range(1, 80)):
            return base
    raise ClusterStartError(f"no free block of 100 ports in {first}-{last}")


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
"""Processes: kills the node groups and removes the run directory when the Python process dies.
Containers of the run are removed by the session reaper (`docker_engine`); this watchdog still
removes the directory they wrote in."""


@dataclass
class Node:
    name: str
    properties: Path
    data_dir: Path
    log_dir: Path
    handle: NodeHandle | None = None
    started_mark: int = 0
    """How many 'started' lines its server logs held when it was last launched: one more means it
    started again. Counted over server.log and its rolled copies (server.log.<hour>): both
    log4j 1 (3.x, DailyRollingFileAppender) and log4j 2 (4.x, config/log4j2.yaml's hourly
    TimeBasedTriggeringPolicy) roll server.log at the hour, so an offset into it can point past
    the end of a new, shorter file, and a restart across the hour was never seen to start."""

    @property
    def pid(self) -> int | None:
        """The process group of a running process node (None for a container or a stopped node)."""
        if isinstance(self.handle, ProcessNode) and self.handle.alive():
            return self.handle.pid
        return None

    def running(self) -> bool:
        return self.handle is not None and self.handle.alive()


@dataclass
class RealKafkaCluster:
    """The cluster of `ClusterLayout` on `host` — processes of a release or `apache/kafka`
    containers (`node_hosts`): same properties, ports, proxies and faults. `start` → bootstrap."""

    host: NodeHost
    layout: ClusterLayout = field(default_factory=ClusterLayout)
    cluster_id: str = field(default_factory=random_cluster_id)
    workdir: Path | None = None
    nodes: dict[str, Node] = field(default_factory=dict)
    proxies: dict[str, TcpProxy] = field(default_factory=dict)
    watchdog: subprocess.Popen[bytes] | None = None
    failed: bool = False
    classpath: str = ""
    """Entries put first on every node's class path (`patched_classpath.classpath_first`)."""

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout_s: float = 120.0) -> str:
        self.workdir = Path(tempfile.mkdtemp(prefix=f"isrcheck-cluster-{self.layout.base_port}-"))
        self.start_watchdog()
        for shared in (str(self.workdir), *filter(None, self.classpath.split(":"))):
            self.host.share(shared)  # a container sees the run directory and a patch where a process does
        try:
            for name in self.layout.node_names:
                data, logs = self.workdir / "data" / name, self.workdir / "logs" / name
                logs.mkdir(parents=True)
                props = self.workdir / f"{name}.properties"
                props.write_text("".join(f"{k}={v}\n" for k, v in self.layout.properties(name, data).items()))
                self.nodes[name] = Node(name, props, data, logs)
            try:
                self.start_proxies()
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise
                raise PortsTaken(f"a proxy port of block {self.layout.base_port} is taken: {error}") from None
            self.format_nodes(list(self.nodes))
            for name in self.nodes:
                self.launch(name)
            self.wait_started(list(self.nodes), timeout_s)
        except PortsTaken:
            self.stop(keep_logs=False)  # nothing of the target's failed: no logs to keep
            raise
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
        env = {"LOG_DIR": str(node.log_dir), "KAFKA_HEAP_OPTS": heap, "KAFKA_JVM_PERFORMANCE_OPTS": JVM_OPTS}
        if self.classpath:  # kafka-run-class.sh appends libs/* after the CLASSPATH it inherits
            env["CLASSPATH"] = self.classpath
        return env

    def format_nodes(self, names: list[str]) -> None:
        """``kafka-storage.sh format`` each node's log directory (two at a time)."""
        storage = f"{self.host.kafka_root}/bin/kafka-storage.sh"

        def format_one(name: str) -> tuple[str, int, str]:
            node = self.nodes[name]
            env = {**self.env(node), "KAFKA_HEAP_OPTS": "-Xmx128m"}
            code, output = self.host.run_tool([storage, "format", "-t", self.cluster_id, "-c", str(node.properties)],
                                              env, 120)
            return name, code, output

        with ThreadPoolExecutor(max_workers=2) as pool:
            for name, code, output in pool.map(format_one, names):
                if code != 0:
                    raise ClusterStartError(f"format of {name} failed: {output[-800:]}")

    def launch(self, name: str) -> None:
        node = self.nodes[name]
        node.started_mark = self.started_lines(name)  # before the child can write its first line
        node.handle = self.host.start(name, [f"{self.host.kafka_root}/bin/kafka-server-start.sh", str(node.properties)],
                                      self.env(node), node.log_dir / "stdout.log")
        assert self.workdir is not None
        if node.pid is not None:
            with open(self.workdir / "pids", "a") as pids:
                pids.write(f"{node.pid}\n")

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
                if node.handle is not None and not node.handle.alive() and not self.started(name):
                    if self.bind_failed(node):
                        raise PortsTaken(f"{name} could not bind a port of block {self.layout.base_port}; "
                                         f"logs: {node.log_dir}")
                    raise ClusterStartError(f"{name} exited while starting; logs: {node.log_dir}")
                if self.started(name):
                    waiting.remove(name)
            if waiting and time.monotonic() > deadline:
                raise ClusterStartError(f"{', '.join(waiting)} not started within {timeout_s:g} s; "
                                        f"logs: {self.workdir}/logs")
            if waiting:
                time.sleep(0.3)

    @staticmethod
    def bind_failed(node: Node) -> bool:
        for log in ("server.log", "stdout.log"):
            with contextlib.suppress(OSError):
                text = (node.log_dir / log).read_text(encoding="utf-8", errors="replace")
                if any(mark in text for mark in BIND_FAILED):
                    return True
        return False

    def stop(self, keep_logs: bool | None = None) -> None:
        """Kill every node (SIGKILL: the run is over), stop the proxies and the watchdog, remove the
        data; keep the logs (and print where) when the run failed."""
        for node in self.nodes.values():
            self.kill(node.name)
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

    # ------------------------------------------------------------------ faults

    def running(self, name: str) -> bool:
        return self.nodes[name].running()

    def kill(self, name: str) -> None:
        """SIGKILL (a crash: no controlled shutdown, unflushed page cache survives on a real OS)."""
        node = self.nodes[name]
        if node.handle is not None:
            node.handle.kill()
        node.handle = None

    def terminate(self, name: str, timeout_s: float = 60.0) -> bool:
        """SIGTERM: a clean shutdown (controlled shutdown for a broker); SIGKILL if it hangs.
        Whether it was killed: a broker whose controller link is cut or held never gets the
        controller's approval and waits for it up to 5 minutes (`BrokerServer.shutdown`, 4.1.1),
        so it is killed before it writes its clean-shutdown file — an unclean shutdown, which
        takes it out of the ELR at its next registration (`ClusterControlManager.registerBroker`
        → `ReplicationControlManager.handleBrokerShutdown`)."""
        node = self.nodes[name]
        killed = node.handle.terminate(timeout_s) if node.handle is not None else False
        node.handle = None
        return killed

    def pause(self, name: str) -> None:
        """SIGSTOP (a GC pause / frozen VM); `docker pause` for a container."""
        node = self.nodes[name]
        if node.handle is not None:
            node.handle.pause()

    def paused(self, name: str) -> bool:
        """Whether this cluster paused the node and has not resumed it (`pause`, `resume`)."""
        handle = self.nodes[name].handle if name in self.nodes else None
        return handle is not None and handle.paused

    def resume(self, name: str) -> None:
        node = self.nodes[name]
        if node.handle is not None:
            node.handle.resume()

    def restart(self, name: str, wipe: bool = False, wait: bool = True, timeout_s: float = 90.0) -> None:
        """Start a stopped node again (killing it first if it runs); `wipe` empties its log
        directory and formats it again, same cluster id and node id (disk loss)."""
        node = self.nodes[name]
        if node.running():
            self.kill(name)
        if wipe:
            shutil.rmtree(node.data_dir, ignore_errors=True)
            self.format_nodes([name])
        self.launch(name)
        if wait:
            self.wait_started([name], timeout_s)

    def proxy(self, key: str) -> TcpProxy:
        return self.proxies[key]

    def clear_proxies(self) -> list[str]:
        """Every proxy back to passing, nothing held (`TcpProxy.set_mode(PASS)`); the proxies that
        were not clear before — what a run left behind for the next one to inherit."""
        were_set = [key for key, proxy in self.proxies.items() if not proxy.clear()]
        for proxy in self.proxies.values():
            proxy.set_mode(PASS)
        return were_set

    def stopped_by_signal(self) -> list[str]:
        """Process nodes the kernel shows stopped (state T: SIGSTOP), whether or not this cluster
        paused them (a container's pause is the engine's: `ContainerNode.paused`)."""
        stopped = []
        for name, node in self.nodes.items():
            if node.pid is not None:
                with contextlib.suppress(OSError, IndexError):
                    if Path(f"/proc/{node.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
                        stopped.append(name)
        return stopped

    def resume_all(self) -> None:
        """SIGCONT to every node (a node paused outside this cluster's own bookkeeping too)."""
        for name in self.stopped_by_signal():
            handle = self.nodes[name].handle
            if isinstance(handle, ProcessNode):
                handle.paused = True  # so `resume` signals it
        for name in self.nodes:
            self.resume(name)

    def broker_proxies(self, b: int) -> list[TcpProxy]:
        """Every proxy on a path of broker b: its replication listener and its controller links."""
        return [self.proxies[f"replication-{b}"]] + [
            self.proxies[f"broker-{b}->controller-{c}"] for c in range(1, self.layout.controllers + 1)]

    def log_dirs(self) -> dict[str, str]:
        return {name: str(node.log_dir) for name, node in self.nodes.items()}
