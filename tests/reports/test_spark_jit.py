"""The JIT choice of a local summary: C1 only for a small input, and only when the user left the
driver's Java options alone; and the option reaching the JVM beside the session's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from isrcheck.reports.spark_jit import C1_ONLY, C1_ONLY_BELOW_BYTES, DEFAULT_OPTIONS, summary_conf

REPO = Path(__file__).resolve().parents[2]


def sized(path: Path, size: int) -> Path:
    """A file of `size` bytes without writing them (sparse)."""
    with path.open("wb") as file:
        file.truncate(size)
    return path


@pytest.mark.parametrize("master", [None, "local", "local[*]", "local[2]", "local[2,3]"])
def test_a_small_local_summary_runs_c1_only(tmp_path: Path, master: str | None) -> None:
    files = [sized(tmp_path / "a.jsonl", 1000), sized(tmp_path / "b.jsonl", C1_ONLY_BELOW_BYTES - 1001)]
    assert summary_conf(files, master, {"spark.driver.memory": "2g"}) == {
        "spark.driver.memory": "2g", DEFAULT_OPTIONS: C1_ONLY}


def test_a_large_input_keeps_c2(tmp_path: Path) -> None:
    files = [sized(tmp_path / "a.jsonl", 1000), sized(tmp_path / "b.jsonl", C1_ONLY_BELOW_BYTES - 1000)]
    assert summary_conf(files, "local[2]", {}) == {}


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "local-cluster[2,1,1024]", "yarn", "sc://host:15002"])
def test_a_summary_that_is_not_local_keeps_the_jvm_defaults(tmp_path: Path, master: str) -> None:
    assert summary_conf([sized(tmp_path / "a.jsonl", 10)], master, {}) == {}


@pytest.mark.parametrize("key", ["spark.driver.defaultJavaOptions", "spark.driver.extraJavaOptions"])
def test_the_users_java_options_are_left_alone(tmp_path: Path, key: str) -> None:
    assert summary_conf([sized(tmp_path / "a.jsonl", 10)], "local[2]", {key: "-Xss4m"}) == {key: "-Xss4m"}


_PRINT_JVM_OPTIONS = """
import json, sys
from pathlib import Path
from isrcheck.conformance.engine.spark_session import start_session, stop_session
from isrcheck.reports.spark_jit import summary_conf
spark = start_session("local[1]", summary_conf([Path(sys.argv[1])], "local[1]", {}))
bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
arguments = list(bean.getInputArguments())
stop_session(spark)
print(json.dumps(arguments))
"""


def test_c1_only_reaches_the_jvm_beside_the_sessions_own_options(tmp_path: Path) -> None:
    """Spark puts defaultJavaOptions before extraJavaOptions, where the session's options go:
    the JVM gets both, and nothing after them turns C2 back on."""
    if shutil.which("java") is None:
        pytest.skip("Spark tests need Java 17+ on PATH")
    pytest.importorskip("pyspark")
    from isrcheck.conformance.engine.spark_session import LOCAL_JVM_OPTIONS

    records = tmp_path / "runs.jsonl"
    records.write_text("{}\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _PRINT_JVM_OPTIONS, str(records)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300, check=True)
    arguments = json.loads(done.stdout.strip().splitlines()[-1])
    assert C1_ONLY in arguments
    assert set(LOCAL_JVM_OPTIONS) <= set(arguments)
    levels = [a for a in arguments if a.startswith("-XX:TieredStopAtLevel=")]
    assert levels == [C1_ONLY]
