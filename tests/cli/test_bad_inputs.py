"""No traceback reaches a user, whatever the input (issue 13): each bad input below is fed to the
real command line in a fresh process, which must answer with exactly one line on stderr naming
the problem, and the exit code of docs/exit-codes.md — 2 for a usage or environment problem,
found before any campaign starts (nothing printed about a campaign, no record written)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

Case = Callable[[Path], list[str]]


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scenario_file(tmp_path: Path, content: bytes | str, name: str = "s.yaml") -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def plugin(tmp_path: Path, body: str) -> str:
    path = tmp_path / "plugin.py"
    path.write_text(body)
    return f"exec:{sys.executable} {path}"


def a_file(tmp_path: Path) -> str:
    path = tmp_path / "not-a-directory"
    path.write_text("x")
    return str(path)


def records_file(tmp_path: Path) -> str:
    path = tmp_path / "runs.jsonl"
    path.write_text("{}\n")
    return str(path)


SILENT_PLUGIN = "import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n"
WRONG_PROTOCOL_PLUGIN = (
    "import sys, json\nreq = json.loads(sys.stdin.readline())\n"
    "print(json.dumps({'id': req['id'], 'result': {'protocol': 'something/else'}}), flush=True)\n"
)

# (name, argv builder, expected exit code, a fragment the one line must contain)
CASES: list[tuple[str, Case, int, str]] = [
    ("negative budget", lambda t: ["run", "--budget", "-3"], 2, "--budget must be a positive"),
    ("nan budget", lambda t: ["run", "--budget", "nan"], 2, "--budget must be a positive"),
    ("zero examples", lambda t: ["run", "--examples", "0"], 2, "--examples must be at least 1"),
    ("unknown adapter", lambda t: ["run", "--adapter", "kafak-wire"], 2, "NAME,KEY=VALUE"),
    ("unknown mutant", lambda t: ["run", "--mutant", "B99"], 2, "unknown mutant 'B99'"),
    ("unknown release", lambda t: ["run", "--kafka", "2.8"], 2, "2.8"),
    ("adapter option not KEY=VALUE", lambda t: ["run", "--adapter", "kafka-wire,bootstrap"], 2, "not KEY=VALUE"),
    ("module adapter that does not exist", lambda t: ["run", "--adapter", "no_such_module:Thing"], 2,
     "cannot import module"),
    ("exec: cat echoes requests back", lambda t: ["run", "--adapter", "exec:/bin/cat"], 2, "does not speak"),
    ("exec: true exits at once", lambda t: ["run", "--adapter", "exec:/bin/true"], 2, "not an isrcheck plug-in"),
    ("exec: a command that does not exist", lambda t: ["run", "--adapter", "exec:/no/such/program"], 2,
     "cannot start"),
    ("exec: never answers describe", lambda t: ["run", "--adapter", plugin(t, SILENT_PLUGIN), "--timeout", "1"], 2,
     "no reply within 1 s"),
    ("exec: another protocol", lambda t: ["run", "--adapter", plugin(t, WRONG_PROTOCOL_PLUGIN)], 2,
     "does not speak"),
    ("wire mutant misspelt", lambda t: ["run", "--adapter", "kafka-wire,mutant=B99", "--kafka", "3.9"], 2,
     "unknown mutant 'B99'"),
    ("wire mutant of the cluster level", lambda t: ["run", "--adapter", "kafka-wire,mutant=B03a", "--kafka", "3.9"],
     2, "cluster-level"),
    ("wire bootstrap where nothing listens", lambda t: [
        "run", "--adapter", f"kafka-wire,bootstrap=127.0.0.1:{closed_port()},metadata-log={t}", "--kafka", "3.9"],
     2, "no controller listening"),
    ("wire bootstrap without metadata log", lambda t: ["run", "--adapter", "kafka-wire,bootstrap=127.0.0.1:1"], 2,
     "needs metadata-log=DIR"),
    ("kafka-local without KAFKA_HOME", lambda t: ["run", "--adapter", "kafka-local", "--kafka", "3.9"], 2,
     "KAFKA_HOME is not set"),
    ("kafka-local with a home that is not Kafka", lambda t: ["run", "--adapter", f"kafka-local,kafka-home={t}"], 2,
     "has no bin/kafka-server-start.sh"),
    ("records path is a file", lambda t: ["run", "--records", a_file(t), "--examples", "1"], 2, "not-a-directory"),
    ("records under /etc/passwd", lambda t: ["run", "--records", "/etc/passwd", "--examples", "1"], 2,
     "/etc/passwd"),
    ("workers nonsense", lambda t: ["run", "--workers", "many"], 2, "--workers must be a number"),
    ("master without --spark", lambda t: ["run", "--master", "local[2]"], 2, "--master needs --spark"),
    ("scenario in Latin-1", lambda t: ["scenario", scenario_file(t, "name: caf\xe9\n".encode("latin-1"))], 2,
     "not UTF-8"),
    ("scenario of random bytes", lambda t: ["scenario", scenario_file(t, os.urandom(4096) + b"\xff")], 2, "s.yaml"),
    ("scenario: steps is a number", lambda t: ["scenario", scenario_file(t, "name: x\nbrokers: [1]\nsteps: 5\n")], 2,
     "s.yaml"),
    ("scenario: brokers is a mapping", lambda t: [
        "scenario", scenario_file(t, "name: x\nbrokers: {a: 1}\nsteps:\n  - create_topic: {topic: t}\n")], 2,
     "s.yaml"),
    ("scenario: a list at the top", lambda t: ["scenario", scenario_file(t, "- 1\n- 2\n")], 2, "s.yaml"),
    ("scenario: a huge file of one long line", lambda t: ["scenario", scenario_file(t, "name: " + "x" * 1_000_000)],
     2, "s.yaml"),
    ("scenario: no such file", lambda t: ["scenario", str(t / "missing.yaml")], 2, "missing.yaml"),
    ("scenario: unreadable directory", lambda t: ["scenario", "/proc/1/fdinfo/no-such"], 2, "no-such"),
    ("scenario with a nonsense plug-in", lambda t: [
        "scenario", "conformance/scenarios/alter_partition_eligibility.yaml", "--adapter", "exec:/bin/cat"], 2,
     "does not speak"),
    ("pipeline into a file", lambda t: ["pipeline", "--out", "/etc/passwd"], 2, "/etc/passwd"),
    ("summarize from an unreachable master", lambda t: [
        "summarize", records_file(t), "--out", str(t / "s"), "--master", "spark://127.0.0.1:1"], 2,
     "no Spark master listening at 127.0.0.1:1"),
    ("replay of a file that does not exist", lambda t: ["replay", str(t / "none.jsonl"), "--run", "x"], 2,
     "none.jsonl"),
    ("report of nothing", lambda t: ["report", str(t / "none"), "-o", str(t / "r.html")], 2, "none"),
]


def run_cli(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "isrcheck", *argv], capture_output=True, text=True, timeout=120,
                          env=env, cwd=Path(__file__).resolve().parents[2])


@pytest.mark.parametrize(("name", "argv", "code", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_input_is_one_line_and_its_exit_code(tmp_path: Path, name: str, argv: Case, code: int,
                                                   fragment: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_HOME", "ISRCHECK_TRACEBACK")}
    started = time.monotonic()
    done = run_cli(argv(tmp_path), env)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("isrcheck "), lines[0]
    assert fragment in lines[0], lines[0]
    assert done.returncode == code, (done.returncode, lines[0])
    assert "campaign " not in done.stdout + done.stderr  # found before any campaign started
    assert time.monotonic() - started < 60


def test_docker_adapters_without_docker_are_an_environment_error(tmp_path: Path) -> None:
    """Without a Docker engine, kafka-docker is exit 2 before any campaign — not a finding (it
    once printed `FOUND error:engine::` and exited 1)."""
    from isrcheck.adapters.real_kafka.docker_engine import docker_unavailable

    if docker_unavailable() is None:
        pytest.skip("a Docker engine is reachable here")
    for argv in (["run", "--adapter", "kafka-docker", "--kafka", "3.9.0"],
                 ["scenario", "conformance/scenarios", "--adapter", "kafka-docker", "--kafka", "3.9.0"]):
        done = run_cli(argv, dict(os.environ))
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.strip().startswith("isrcheck ") and "no Docker engine reachable" in done.stderr
        assert "FOUND" not in done.stdout


def test_an_isrcheck_failure_is_one_line_and_exit_3() -> None:
    """An exception isrcheck did not foresee still ends in one line (exit 3: a bug in isrcheck);
    ISRCHECK_TRACEBACK=1 shows where."""
    code = (
        "import sys, isrcheck.commands.mutants as m\n"
        "def broken(args):\n    raise KeyError('oops')\n"
        "m.run = broken\n"
        "from isrcheck.cli import main\nsys.exit(main(['mutants']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ISRCHECK_TRACEBACK"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and "internal error (a bug in isrcheck" in done.stderr
    assert "KeyError: 'oops'" in done.stderr
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env={**env, "ISRCHECK_TRACEBACK": "1"})
    assert "Traceback" in shown.stderr
