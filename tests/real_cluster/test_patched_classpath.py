"""`classpath=PATH[:PATH]` for kafka-local and kafka-cluster: the entries come FIRST on every
node's class path, before the release's libs/ — so a patched class replaces the release's.

What is first is observed through Kafka itself, not through the command isrcheck builds: every
Kafka jar carries `kafka/kafka-version.properties`, and `AppInfoParser` (3.9.0) reads it with
`AppInfoParser.class.getResourceAsStream("/kafka/kafka-version.properties")` and logs
`Kafka version: <version>` at start. A directory holding that resource with another version makes
the node log that version only if the directory comes before every jar of libs/ (appended after
them, the release's own `3.9.0` would win)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from isrcheck.adapters.real_kafka.cluster_processes import ClusterLayout, RealKafkaCluster, free_base_port
from isrcheck.adapters.real_kafka.node_hosts import ContainerHost, NodeHost, ProcessHost
from isrcheck.adapters.real_kafka.patched_classpath import classpath_first
from isrcheck.contract.errors import UsageError

from tests.docker_images import IMAGES, require

REPO = Path(__file__).resolve().parents[2]
HOME_39 = REPO.parent / "shared" / "kafka" / "3.9"
needs_39 = pytest.mark.skipif(not (HOME_39 / "bin" / "kafka-server-start.sh").exists(),
                              reason="no ../shared/kafka/3.9 next to the checkout")
MARKED = "3.9.0-isrcheck-first"


def version_dir(tmp_path: Path) -> Path:
    classes = tmp_path / "classes"
    (classes / "kafka").mkdir(parents=True)
    (classes / "kafka" / "kafka-version.properties").write_text(f"commitId=0\nversion={MARKED}\n")
    return classes


def test_entries_must_exist_and_be_directories_or_jars(tmp_path: Path) -> None:
    jar = tmp_path / "patch.jar"
    jar.write_bytes(b"PK")
    text = tmp_path / "Partition.scala"
    text.write_text("x")
    assert classpath_first(f"{tmp_path}:{jar}", "kafka-cluster") == f"{tmp_path.resolve()}:{jar.resolve()}"
    with pytest.raises(UsageError, match="'/no/such/dir' does not exist"):
        classpath_first(f"{tmp_path}:/no/such/dir", "kafka-cluster")
    with pytest.raises(UsageError, match=r"neither a directory nor a \.jar"):
        classpath_first(str(text), "kafka-local")
    with pytest.raises(UsageError, match="empty"):
        classpath_first("", "kafka-local")


@pytest.mark.parametrize("adapter", ["kafka-cluster", "kafka-local"])
def test_a_missing_entry_is_one_line_and_exit_2(adapter: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "isrcheck", "scenario", "conformance/scenarios/alter_partition_validation.yaml",
         "--adapter", f"{adapter},classpath=/no/such/patched-classes", "--kafka", "3.9"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "/no/such/patched-classes" in lines[0] and "Traceback" not in result.stderr, lines


@needs_39
@pytest.mark.parametrize("where", ["process", pytest.param("container", marks=pytest.mark.docker)])
def test_kafka_cluster_nodes_load_the_given_directory_first(tmp_path: Path, where: str) -> None:
    """On processes, and in apache/kafka containers (the directory is bind-mounted where it is)."""
    host: NodeHost = ProcessHost(HOME_39)
    if where == "container":
        require(IMAGES["3.9"])
        host = ContainerHost(IMAGES["3.9"])
    cluster = RealKafkaCluster(host, ClusterLayout(brokers=1, base_port=free_base_port()),
                               classpath=classpath_first(str(version_dir(tmp_path)), "kafka-cluster"))
    try:
        cluster.start()
        logs = {name: (node.log_dir / "server.log").read_text() for name, node in cluster.nodes.items()}
    finally:
        cluster.stop()
    assert set(logs) == {"controller-1", "broker-1"}
    for name, text in logs.items():
        assert f"Kafka version: {MARKED}" in text, name
        assert "Kafka version: 3.9.0\n" not in text and "Kafka version: 3.9.0 " not in text, name


@needs_39
def test_kafka_local_controllers_load_the_given_directory_first(tmp_path: Path) -> None:
    from isrcheck.adapters.real_kafka.kafka_local import local_wire_target

    target = local_wire_target({"kafka-home": str(HOME_39), "classpath": str(version_dir(tmp_path))})
    try:
        target.open("3.9", {})
        assert target.execute("register_broker", {"broker": 1, "incarnation": "a"})["error"] == "NONE"
        work = Path(target.provider.runner.work)  # type: ignore[attr-defined]
        text = (work / "node1-logs" / "server.log").read_text()
    finally:
        target.shutdown()
    assert f"Kafka version: {MARKED}" in text
