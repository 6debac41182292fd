"""The Spark jobs on a real multi-executor cluster: a standalone master and two workers (one core
each) started on this machine on loopback, `isrcheck summarize --master spark://…` and
`isrcheck run --spark --master spark://…` run against it as a user runs them.

Slow (a minute or two of JVMs). The master and workers are started from the pyspark install
(`spark-class`), listen on loopback ports the kernel reports free when the module starts (fixed
ports were taken now and then by another user's processes on a shared machine), keep their work
and log directories in a temporary directory, and are stopped by their process ids when the
module's tests are done.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.synthetic import write_records

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports nothing listens on now (bound to port 0, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


MASTER_PORT, MASTER_UI, DRIVER_PORT, BLOCK_MANAGER_PORT, *WORKER_PORTS = free_ports(8)
MASTER = f"spark://127.0.0.1:{MASTER_PORT}"
# the driver's and block managers' ports, so that nothing listens outside loopback
PORTS = ["--conf", f"spark.driver.port={DRIVER_PORT}", "--conf", f"spark.blockManager.port={BLOCK_MANAGER_PORT}",
         "--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1",
         "--conf", "spark.executor.memory=768m", "--conf", "spark.executor.cores=1"]
VOLATILE = ("engine", "generated_at")


def _spark_class() -> Path:
    pyspark = pytest.importorskip("pyspark")
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _alive_workers() -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{MASTER_UI}/json/", timeout=5) as answer:
            return int(json.load(answer).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    if shutil.which("java") is None:
        pytest.skip("Spark tests need Java 17+ on PATH")
    spark_class = _spark_class()
    home = Path(tempfile.mkdtemp(prefix="isrcheck-standalone-"))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(home / "logs"),
           "SPARK_WORKER_DIR": str(home / "work"), "PYSPARK_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        log = (home / "master.log").open("wb")
        processes.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(MASTER_PORT), "--webui-port", str(MASTER_UI)], env=env, stdout=log, stderr=log))
        for index in range(2):
            log = (home / f"worker-{index}.log").open("wb")
            processes.append(subprocess.Popen(
                [str(spark_class), "org.apache.spark.deploy.worker.Worker", MASTER, "--host", "127.0.0.1",
                 "--port", str(WORKER_PORTS[2 * index]), "--webui-port", str(WORKER_PORTS[2 * index + 1]),
                 "--cores", "1",
                 "--memory", "1g", "--work-dir", str(home / f"work-{index}")], env=env, stdout=log, stderr=log))
        deadline = time.monotonic() + 180
        while _alive_workers() < 2:
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                logs = "\n".join(path.read_text(errors="replace")[-1500:] for path in sorted(home.glob("*.log")))
                pytest.fail(f"the standalone cluster did not come up:\n{logs}")
            time.sleep(1)
        yield env
    finally:
        for process in reversed(processes):
            _stop(process)
        shutil.rmtree(home, ignore_errors=True)


def isrcheck(env: dict[str, str], *argv: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "isrcheck", *map(str, argv), *PORTS], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=900, check=False)


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in summary.items() if key not in VOLATILE}


def test_summarize_on_the_cluster_gives_the_plain_summary(cluster: dict[str, str], tmp_path: Path) -> None:
    files = write_records(tmp_path / "records", 20_000, files=4, seed=11, truncated_every=3_000)
    done = isrcheck(cluster, "summarize", tmp_path / "records", "--out", tmp_path / "out", "--master", MASTER)
    assert done.returncode == 0, done.stderr[-3000:]
    distributed = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    plain = summarize_files(find_record_files([tmp_path / "records"]))
    assert plain["corrupt"]["lines"] == 6 and distributed["engine"] == "spark"
    assert comparable(distributed) == comparable(plain)
    assert len(files) == 4


def test_a_campaign_runs_as_tasks_on_the_clusters_executors(cluster: dict[str, str], tmp_path: Path) -> None:
    done = isrcheck(cluster, "run", "--spark", "--master", MASTER, "--examples", "60", "--steps", "20", "--seed", "7",
                    "--records", tmp_path, "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    files = sorted(tmp_path.glob("*.jsonl"))
    assert [path.name.rsplit("-", 1)[1] for path in files] == ["w0.jsonl", "w1.jsonl"]  # one task per core
    records = [json.loads(line) for path in files for line in path.read_text().splitlines()]
    assert len(records) == summary["runs"] >= 60 and summary["findings"] == {}
    assert {record["seed"] for record in records} == {7, 8, 9}


def test_a_black_box_cluster_campaign_runs_as_tasks_each_with_its_own_cluster(cluster: dict[str, str],
                                                                             tmp_path: Path) -> None:
    """The cluster level of a black-box target on the executors: each task a HistoryWorker with its
    own cluster (here the example cluster plug-in), its runs judged on their histories."""
    done = isrcheck(cluster, "run", "--spark", "--master", MASTER, "--level", "cluster",
                    "--adapter", "isrcheck.adapters.plugins.example_cluster:ToyCluster",
                    "--examples", "50", "--steps", "10", "--seed", "7", "--records", tmp_path, "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    files = sorted(tmp_path.glob("*.jsonl"))
    assert [path.name.rsplit("-", 1)[1] for path in files] == ["w0.jsonl", "w1.jsonl"]
    records = [json.loads(line) for path in files for line in path.read_text().splitlines()]
    assert len(records) == summary["runs"] == 50 and summary["findings"] == {}
    assert {record["seed"] for record in records} == {7, 8}  # batches of 25: one per task
    assert all(record["history"]["entries"] and record["level"] == "cluster" for record in records)
