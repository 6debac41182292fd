"""The loopback cluster launcher's process discipline, on a stand-in KAFKA_HOME whose scripts
behave like Kafka's where it matters (format writes the log dir, the server writes "Kafka Server
started" to $LOG_DIR/server.log and runs until signalled): each node in its own process group,
stopped by PID, data removed, logs kept only on failure, nothing left when the parent is killed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from isrcheck.adapters.real_kafka.cluster_processes import ClusterLayout, RealKafkaCluster, free_base_port
from isrcheck.adapters.real_kafka.node_hosts import ProcessHost

START = """#!/bin/sh
echo "[$(date)] INFO [KafkaRaftServer nodeId=0] Kafka Server started" >> "$LOG_DIR/server.log"
exec sleep 600
"""
STORAGE = """#!/bin/sh
# kafka-storage.sh format -t ID -c FILE: create log.dirs from FILE
dir=$(sed -n 's/^log.dirs=//p' "$5"); mkdir -p "$dir"; echo "cluster.id=$3" > "$dir/meta.properties"
"""


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    for name, text in (("kafka-server-start.sh", START), ("kafka-storage.sh", STORAGE)):
        script = tmp_path / "bin" / name
        script.write_text(text)
        script.chmod(0o755)
    return tmp_path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def wait_for_state(pid: int | None, state: str) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == state:
            return True
        time.sleep(0.05)
    return False


def test_nodes_run_in_their_own_groups_and_stop_cleanly(fake_home: Path) -> None:
    cluster = RealKafkaCluster(ProcessHost(fake_home), ClusterLayout(brokers=3, base_port=free_base_port()))
    cluster.start(timeout_s=30)
    workdir = cluster.workdir
    assert workdir is not None
    pids = {name: node.pid for name, node in cluster.nodes.items()}
    assert sorted(pids) == ["broker-1", "broker-2", "broker-3", "controller-1"]
    assert all(pid is not None and os.getpgid(pid) == pid for pid in pids.values())
    assert (workdir / "data" / "broker-2" / "meta.properties").exists()

    cluster.kill("broker-2")
    assert not alive(pids["broker-2"]) and not cluster.running("broker-2")
    cluster.restart("broker-2", wipe=True, timeout_s=30)
    assert cluster.running("broker-2") and (workdir / "data" / "broker-2" / "meta.properties").exists()
    cluster.pause("broker-1")
    assert wait_for_state(cluster.nodes["broker-1"].pid, "T")  # stopped (SIGSTOP)
    cluster.resume("broker-1")

    cluster.stop()
    assert not any(alive(pid) for pid in pids.values() if pid is not None)
    assert not workdir.exists()


def test_logs_are_kept_when_the_run_failed(fake_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = RealKafkaCluster(ProcessHost(fake_home), ClusterLayout(brokers=3, base_port=free_base_port()))
    cluster.start(timeout_s=30)
    workdir = cluster.workdir
    assert workdir is not None
    cluster.failed = True
    cluster.stop()
    assert (workdir / "logs" / "broker-1" / "server.log").exists() and not (workdir / "data").exists()
    assert str(workdir / "logs") in capsys.readouterr().err
    subprocess.run(["rm", "-rf", str(workdir)], check=True)


CHILD = """
import sys, time
from pathlib import Path
from isrcheck.adapters.real_kafka.cluster_processes import ClusterLayout, RealKafkaCluster, free_base_port
from isrcheck.adapters.real_kafka.node_hosts import ProcessHost
cluster = RealKafkaCluster(ProcessHost(Path(sys.argv[1])), ClusterLayout(brokers=3, base_port=free_base_port()))
cluster.start(timeout_s=30)
print(cluster.workdir, *[node.pid for node in cluster.nodes.values()], flush=True)
time.sleep(600)
"""


def test_nothing_outlives_a_killed_parent(fake_home: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", CHILD, str(fake_home)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert parent.stdout is not None
    workdir, *pids = parent.stdout.readline().split()
    assert len(pids) == 4 and all(alive(int(pid)) for pid in pids)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (any(alive(int(pid)) for pid in pids) or Path(workdir).exists()):
        time.sleep(0.2)
    assert not any(alive(int(pid)) for pid in pids)
    assert not Path(workdir).exists()


def test_a_cluster_id_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3.3 campaign run failed to start: `kafka-storage.sh format -t -Xy…` read the id as an
    option. The first UUID drawn here encodes to '-…' (first byte 0xF8); the id must be the next."""
    import uuid

    from isrcheck.adapters.real_kafka import kafka_properties

    drawn = iter([uuid.UUID(bytes=bytes([0xF8]) + bytes(15)), uuid.UUID(bytes=bytes([0x10]) + bytes(15))])
    monkeypatch.setattr(kafka_properties.uuid, "uuid4", lambda: next(drawn))
    assert kafka_properties.random_cluster_id() == "EAAAAAAAAAAAAAAAAAAAAA"


def test_a_restart_is_seen_across_an_hourly_roll_of_server_log(tmp_path: Path) -> None:
    """log4j (3.x) and log4j 2 (4.x config/log4j2.yaml) roll server.log every hour: a node
    restarted at 11:59 may log 'started' into a new, shorter server.log (or just before the roll,
    into server.log.<hour>). Either way the restart is seen; before it, nothing is."""
    from isrcheck.adapters.real_kafka.cluster_processes import STARTED, Node

    cluster = RealKafkaCluster(ProcessHost(tmp_path))
    logs = tmp_path / "logs"
    logs.mkdir()
    cluster.nodes["broker-1"] = Node("broker-1", tmp_path / "b.properties", tmp_path / "data", logs)
    (logs / "server.log").write_text(("x" * 5000) + f" {STARTED}\n" + ("y" * 5000))
    node = cluster.nodes["broker-1"]
    node.started_mark = cluster.started_lines("broker-1")  # as launch() takes it
    assert not cluster.started("broker-1")
    (logs / "server.log").rename(logs / "server.log.2026-11-29-11")  # the hour turns
    (logs / "server.log").write_text("[12:00:01] INFO starting\n")  # shorter than the old file
    assert not cluster.started("broker-1")
    with open(logs / "server.log", "a") as log:
        log.write(f"[12:00:09] INFO [KafkaRaftServer nodeId=1] {STARTED}\n")
    assert cluster.started("broker-1")


def held_block(port_of: Callable[[ClusterLayout], int]) -> tuple[int, socket.socket]:
    """A free block and a listening socket on one of its ports (`port_of` its layout), retried
    while other test workers race for the same blocks."""
    while True:
        base = free_base_port()
        squatter = socket.socket()
        try:
            squatter.bind(("127.0.0.1", port_of(ClusterLayout(base_port=base))))
        except OSError:
            squatter.close()
            continue
        squatter.listen()
        return base, squatter


def run_directories(base_port: int) -> set[Path]:
    """Run directories of clusters on this block (other sessions' clusters share /tmp: compare the
    set before and after rather than expect none)."""
    return set(Path("/tmp").glob(f"isrcheck-cluster-{base_port}-*"))


BIND_FAILS = """#!/bin/sh
echo "[$(date)] ERROR [KafkaServer id=1] Fatal error during KafkaServer startup." >> "$LOG_DIR/server.log"
echo "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:1: Address already in use." \
  >> "$LOG_DIR/server.log"
exit 1
"""


def test_a_taken_proxy_port_is_ports_taken_and_leaves_nothing(fake_home: Path) -> None:
    """Another process holds a port of the block (the race between free_base_port's look and the
    bind): PortsTaken, which the adapter answers with another block — not a crash of the target."""

    from isrcheck.adapters.real_kafka.cluster_processes import ClusterStartError, PortsTaken

    base, squatter = held_block(lambda layout: layout.replication_proxy_port(2))
    layout = ClusterLayout(brokers=3, base_port=base)
    before = run_directories(layout.base_port)
    with squatter:
        cluster = RealKafkaCluster(ProcessHost(fake_home), layout)
        with pytest.raises(PortsTaken) as raised:
            cluster.start(timeout_s=30)
    assert isinstance(raised.value, ClusterStartError) and str(layout.base_port) in str(raised.value)
    assert cluster.workdir is None and not cluster.nodes and not cluster.proxies
    assert run_directories(layout.base_port) <= before


def test_a_node_that_cannot_bind_its_listener_is_ports_taken(fake_home: Path) -> None:
    from isrcheck.adapters.real_kafka.cluster_processes import PortsTaken

    (fake_home / "bin" / "kafka-server-start.sh").write_text(BIND_FAILS)
    layout = ClusterLayout(brokers=3, base_port=free_base_port())
    before = run_directories(layout.base_port)
    cluster = RealKafkaCluster(ProcessHost(fake_home), layout)
    with pytest.raises(PortsTaken) as raised:
        cluster.start(timeout_s=30)
    # "is taken": another test worker took a proxy port of the block first (rare; the same answer)
    assert "could not bind" in str(raised.value) or "is taken" in str(raised.value), raised.value
    assert cluster.workdir is None and not cluster.nodes
    assert run_directories(layout.base_port) <= before


def test_the_adapter_starts_its_cluster_on_another_block_when_one_is_taken(
        fake_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-cluster's open: the first block's proxy port is taken, the second block is used; the
    stand-in brokers then do not answer Kafka's protocol, so the clients fail — after the retry."""

    from isrcheck.adapters.real_kafka import kafka_cluster

    first, squatter = held_block(lambda layout: layout.replication_proxy_port(1))

    def blocks() -> Iterator[int]:
        yield first
        while True:
            yield free_base_port()

    chosen = blocks()
    monkeypatch.setattr(kafka_cluster, "free_base_port", lambda: next(chosen))
    target = kafka_cluster.KafkaClusterTarget({"kafka-home": str(fake_home)})
    try:
        with pytest.raises(Exception) as raised:
            target.open("3.9", {})
        assert not isinstance(raised.value, kafka_cluster.TargetUnavailable), raised.value
        assert target.cluster is not None and target.cluster.layout.base_port != first
    finally:
        target.close()
        squatter.close()


START_DEAF_TO_SIGTERM = """#!/bin/sh
if [ -e "$(dirname "$0")/../deaf" ]; then trap '' TERM; fi
echo "[$(date)] INFO [KafkaRaftServer nodeId=0] Kafka Server started" >> "$LOG_DIR/server.log"
exec sleep 600
"""
"""A node that, while the file `deaf` is in its home, ignores SIGTERM — as a broker whose
controlled shutdown waits for an approval that never comes (its controller link cut or held).
It ignores it before it says it started: a SIGTERM sent once it did finds it deaf (the full
suite under load had sent one between the two lines)."""


def test_a_terminate_that_times_out_kills_and_says_so(fake_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`terminate` reports whether the node had to be SIGKILLed after the timeout, and
    kafka-cluster's `clean_restart` and `shutdown` put it in their result (`killed`): an
    unclean shutdown to Kafka, which the judge must not take for a clean one."""
    from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget

    (fake_home / "bin" / "kafka-server-start.sh").write_text(START_DEAF_TO_SIGTERM)
    cluster = RealKafkaCluster(ProcessHost(fake_home), ClusterLayout(brokers=3, base_port=free_base_port()))
    cluster.start(timeout_s=30)
    target = KafkaClusterTarget()
    try:
        pid = cluster.nodes["broker-1"].pid
        assert pid is not None
        assert cluster.terminate("broker-1", timeout_s=5) is False  # ended on SIGTERM
        assert not alive(pid)
        (fake_home / "deaf").touch()
        cluster.restart("broker-2", timeout_s=30)  # its new incarnation ignores SIGTERM
        pid = cluster.nodes["broker-2"].pid
        assert pid is not None
        started = time.monotonic()
        assert cluster.terminate("broker-2", timeout_s=1) is True
        assert time.monotonic() - started >= 1 and not alive(pid)
        cluster.restart("broker-2", timeout_s=30)

        target.cluster = cluster
        monkeypatch.setattr(cluster, "terminate", lambda name: RealKafkaCluster.terminate(cluster, name, timeout_s=1))
        assert target.execute("shutdown", {"broker": 3}) == {}  # started before `deaf`: ends on SIGTERM
        assert target.execute("clean_restart", {"broker": 2}) == {"killed": True}
        assert cluster.running("broker-2")
        assert target.execute("shutdown", {"broker": 2}) == {"killed": True}
        assert not cluster.running("broker-2")
    finally:
        target.cluster = None
        cluster.stop()
