"""Real Kafka in `apache/kafka` containers: the controller level (`kafka-docker`) and the cluster
level (`kafka-cluster,containers=1`) give what the process path gives, nothing they start
outlives them, and what cannot run says so in one line (exit 2).

These tests need a Docker engine and the images `apache/kafka:3.9.0` and `apache/kafka:3.7.1`
(built offline by ../shared/docker/build-image.sh; .ci/run does it). Without them they skip with
the reason — except where ISRCHECK_REQUIRE_DOCKER is set (CI), where a missing engine or image
fails the run instead of going green untested.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.real_kafka.docker_engine import OWNER_LABEL

from tests.docker_images import IMAGES, require
from tests.sigint_default import restore_default_sigint

REPO = Path(__file__).resolve().parents[2]
SHARED_KAFKA = REPO.parent / "shared" / "kafka"
SCENARIOS = ["conformance/scenarios/alter_partition_validation.yaml", "conformance/scenarios/broker_lifecycle.yaml"]


pytestmark = pytest.mark.docker


def isrcheck(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "isrcheck", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)


def containers_of(owner_pid: int) -> list[Any]:
    import docker

    engine = docker.from_env()
    return [c for c in engine.containers.list(all=True, sparse=True, filters={"label": OWNER_LABEL})
            if (c.attrs.get("Labels") or {})[OWNER_LABEL].rpartition(":")[2] == str(owner_pid)]


def statuses(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return {f"{row['file']} :: {row['scenario']}": row["status"]
            for row in map(json.loads, done.stdout.splitlines()) if row}


@pytest.mark.parametrize("release", sorted(IMAGES))
def test_the_scenarios_give_in_a_container_what_they_give_on_a_process(release: str) -> None:
    """The same scenario files, scenario by scenario, on the release's image and on its KAFKA_HOME."""
    image = IMAGES[release]
    require(image)
    home = SHARED_KAFKA / release
    if not home.exists():
        pytest.skip(f"no {home} to compare with")
    in_container = isrcheck("scenario", *SCENARIOS, "--adapter", f"kafka-docker,image={image}", "--kafka", release,
                            "--json")
    on_process = isrcheck("scenario", *SCENARIOS, "--adapter", f"kafka-local,kafka-home={home}", "--kafka", release,
                          "--json")
    assert in_container.returncode == 0, in_container.stderr[-2000:]
    assert on_process.returncode == 0, on_process.stderr[-2000:]
    container, process = statuses(in_container), statuses(on_process)
    assert container == process
    passed = [name for name, status in container.items() if status == "passed"]
    assert len(passed) >= 40, container  # 32 validation rows + 16 lifecycle rows, a few release-gated


def test_a_controller_campaign_in_a_container_tests_every_run(tmp_path: Path) -> None:
    require(IMAGES["3.9"])
    done = isrcheck("run", "--adapter", "kafka-docker", "--kafka", "3.9.0", "--examples", "6", "--steps", "20",
                    "--seed", "5", "--records", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(records) >= 6
    assert {r["outcome"] for r in records} == {"pass"}, {r["outcome"] for r in records}
    assert all(r["steps"] >= 3 for r in records)  # steps ran, not runs refused at open


def test_the_cluster_in_containers_takes_every_fault_of_the_process_path() -> None:
    """A cut replication link of the leader, a crash, a restart with an empty disk, a pause and a
    heal, on containers: each leaves the trace it leaves on processes (the ISR shrinks to the cut
    leader, then loses the crashed member; each comes back) and no acknowledged record is lost."""
    require(IMAGES["3.9"])
    from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
    from isrcheck.conformance.engine.cluster_history import run_history
    from isrcheck.conformance.properties.black_box_history import HistoryConfig

    steps: list[tuple[str, dict[str, Any]]] = [
        ("create_topic", {"topic": "t", "replicas": [1, 2, 3]}), ("produce", {"topic": "t", "records": 3}),
        ("net", {"broker": 1, "link": "replication", "mode": "cut"}), ("produce", {"topic": "t", "records": 1}),
        ("wait_isr", {"topic": "t", "isr": [1], "timeout_ms": 30000}),
        ("net", {"broker": 1, "link": "replication", "mode": "pass"}),
        ("wait_isr", {"topic": "t", "isr": [1, 2, 3], "timeout_ms": 30000}),
        ("crash", {"broker": 2}), ("produce", {"topic": "t", "records": 3}),
        ("wait_isr", {"topic": "t", "without": [2], "timeout_ms": 30000}),
        ("restart", {"broker": 2, "lose": "disk"}), ("wait_isr", {"topic": "t", "isr": [1, 2, 3], "timeout_ms": 30000}),
        ("pause", {"broker": 3}), ("resume", {"broker": 3}),
        ("heal", {"timeout_ms": 30000}), ("consume", {"topic": "t"}),
    ]
    history, violations = run_history(KafkaClusterTarget({"containers": "1", "image": IMAGES["3.9"]}), "3.9", steps,
                                      HistoryConfig())
    assert violations == [], [v.to_json() for v in violations]
    ops = [entry for entry in history if entry["type"] == "op"]
    assert [op["op"] for op in ops][:len(steps)] == [op for op, _ in steps]  # then the history's own heal
    assert all(op["result"]["reached"] for op in ops if op["op"] == "wait_isr"), [
        (op["args"], op["result"]) for op in ops if op["op"] == "wait_isr"]
    acked = [v for op in ops if op["op"] == "produce" and op["result"]["status"] == "acked"
             for v in op["result"]["values"]]
    assert len(acked) == 6 and all(op["result"]["settled"] for op in ops if op["op"] == "heal")
    consumed = ops[len(steps) - 1]["result"]["records"]["0"]
    assert set(acked) <= set(consumed.values())


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_no_container_outlives_isrcheck(sig: signal.Signals, tmp_path: Path) -> None:
    """Killed (or interrupted) while its controller container runs, isrcheck leaves nothing: the
    session reaper removes what the process started. Its output is kept to say, on a failure,
    where an interrupted run was when it did not exit."""
    require(IMAGES["3.9"])
    output = tmp_path / "isrcheck.out"
    with open(output, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "isrcheck", "run", "--adapter", "kafka-docker", "--kafka",
                                    "3.9.0", "--budget", "120", "--seed", "1"], cwd=REPO,
                                   stdout=sink, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONFAULTHANDLER": "1"},
                                   preexec_fn=restore_default_sigint)
    try:
        deadline = time.monotonic() + 90
        while not containers_of(process.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert containers_of(process.pid), "no container was started"
        time.sleep(2)
        process.send_signal(sig)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # faulthandler writes every thread's stack to the output
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
            raise AssertionError(f"isrcheck did not exit 60 s after {sig.name}; its output:\n"
                                 + output.read_text(errors="replace")[-4000:]) from None
        deadline = time.monotonic() + 60
        while containers_of(process.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert containers_of(process.pid) == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_missing_image_is_one_line_naming_it() -> None:
    require()
    absent = "image=isrcheck-test/absent:0"
    for adapter in (f"kafka-docker,{absent}", f"kafka-cluster,containers=1,{absent}"):
        done = isrcheck("run", "--adapter", adapter, "--kafka", "3.9", "--examples", "1", timeout=120)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert "isrcheck-test/absent:0" in lines[0] and "image=" in lines[0] and "Traceback" not in done.stderr


def test_a_node_that_cannot_start_is_exit_2_with_its_logs_kept(tmp_path: Path) -> None:
    """An image without Kafka in /opt/kafka: the node exits at once. That is the environment's
    problem (exit 2, nothing tested), with the node's console kept where the line says."""
    base = "local/debian-bookworm-jre17:latest"
    require(base)
    done = isrcheck("scenario", SCENARIOS[1], "--adapter", f"kafka-docker,image={base}", "--kafka", "3.9",
                    timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "did not start" in done.stdout + done.stderr
    kept = next(word for word in (done.stdout + done.stderr).replace(")", " ").split()
                if word.startswith("/") and "isrcheck-docker-" in word)
    consoles = list(Path(kept).glob("node*-logs/console-*.out"))
    assert consoles and "kafka-storage.sh" in consoles[0].read_text()
    subprocess.run(["rm", "-rf", kept], check=True)


def test_containers_of_a_dead_owner_are_swept() -> None:
    """A reaper that was itself killed leaves its session's containers; the next isrcheck process
    removes every container whose owner process on this host is gone, and no other."""
    import socket

    import docker
    from isrcheck.adapters.real_kafka.docker_engine import sweep_orphans

    base = "local/debian-bookworm-jre17:latest"
    require(base)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
    dead, alive = f"{socket.gethostname()}:{finished.stdout.strip()}", f"{socket.gethostname()}:{os.getpid()}"
    engine = docker.from_env()
    started = [engine.containers.run(base, ["sleep", "300"], detach=True, labels={OWNER_LABEL: owner})
               for owner in (dead, alive)]
    try:
        assert sweep_orphans() >= 1
        remaining = {c.id for c in engine.containers.list(all=True, sparse=True)}
        assert started[0].id not in remaining and started[1].id in remaining
    finally:
        for container in started:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)
