"""No `serve-controller` started by the kafka-wire adapter outlives what started it.

Each test runs isrcheck in a subprocess whose environment carries a unique mark, which every
descendant inherits; /proc then tells which of the marked processes are serve-controllers and
whether any is still alive after the campaign ended normally (in one process, and in a pool of
worker processes, which the pool ends with SIGTERM, so without atexit), after the pipeline's
wire campaigns ended in its pool, and after the campaign was SIGKILLed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from isrcheck.adapters.kafka_wire.controller_endpoints import ServeControllerProcesses
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

from tests.marked_processes import marked_processes

REPO = Path(__file__).resolve().parents[2]
MARK = "ISRCHECK_LEAK_TEST"

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")


def marked(mark: str) -> dict[int, list[str]]:
    return marked_processes(MARK, mark)


def serve_controllers(mark: str) -> list[int]:
    return sorted(pid for pid, command in marked(mark).items() if "serve-controller" in command)


def serving_children() -> list[int]:
    """This process's live serve-controller children."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if int(ppid) == os.getpid() and state != "Z" and b"serve-controller" in command:
            pids.append(int(entry.name))
    return pids


def wait_for(condition: Callable[[], object], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


@pytest.fixture
def mark() -> Iterator[str]:
    """A mark for one test; whatever still carries it afterwards is killed by pid (the test's own)."""
    value = uuid.uuid4().hex
    yield value
    for pid in marked(value):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def isrcheck(mark: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, MARK: mark}
    return subprocess.Popen([sys.executable, "-m", "isrcheck", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_wire_campaign_leaves_no_controller_running(mark: str, workers: str) -> None:
    process = isrcheck(mark, "run", "--adapter", "kafka-wire", "--kafka", "3.9", "--examples", "30",
                       "--steps", "5", "--seed", "1", "--workers", workers, "--json")
    stdout, _ = process.communicate(timeout=120)
    assert process.returncode == 0, stdout
    assert json.loads(stdout)["outcomes"].get("pass", 0) >= 30  # runs that needed a controller
    survivors = serve_controllers(mark)
    assert not survivors, f"serve-controller pids {survivors} outlived the campaign"


def recorded(directory: Path, pattern: str = "*.jsonl") -> bool:
    """A run was recorded: the controller serving it is past its start (a child killed while it
    starts dies anyway, of writing its 'listening on' line to a closed pipe)."""
    return any(path.read_text().strip() for path in directory.glob(pattern))


def test_a_killed_wire_campaign_leaves_no_controller_running(mark: str, tmp_path: Path) -> None:
    process = isrcheck(mark, "run", "--adapter", "kafka-wire", "--kafka", "3.9", "--budget", "120", "--steps", "5",
                       "--records", str(tmp_path))
    try:
        assert wait_for(lambda: recorded(tmp_path) and serve_controllers(mark), 60), "no wire run was recorded"
    finally:
        process.kill()
        process.communicate(timeout=30)
    assert wait_for(lambda: not serve_controllers(mark), 10), \
        f"serve-controller pids {serve_controllers(mark)} outlived the SIGKILLed campaign"


PIPELINE_WIRE_PART = """
import sys
from pathlib import Path
import isrcheck.pipeline as pipeline
plan = pipeline.PipelinePlan(out=Path(sys.argv[1]), reference_examples=3, mutant_budget_s=0.1, workers=2)
wire = [job for job in pipeline.jobs(plan) if job.config.adapter.startswith("kafka-wire")]
pipeline.jobs = lambda plan: wire
done = pipeline.run_jobs(plan, lambda *progress: None)
print(len(done), sum(result.runs for _, result in done))
"""


def test_the_pipelines_wire_campaigns_leave_no_controller_running(mark: str, tmp_path: Path) -> None:
    """The pipeline's own pool, given only its wire campaigns: the pool ends its workers with
    SIGTERM, so their atexit never runs."""
    env = {**os.environ, MARK: mark}
    done = subprocess.run([sys.executable, "-c", PIPELINE_WIRE_PART, str(tmp_path / "out")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    jobs, runs = map(int, done.stdout.split())
    assert jobs == 3 and runs >= 3
    survivors = serve_controllers(mark)
    assert not survivors, f"serve-controller pids {survivors} outlived the pipeline's campaigns"


def test_a_child_stops_when_the_provider_lets_go_of_its_stdin() -> None:
    """The mechanism itself, in process: closing our end of the pipe (as the kernel does when
    this process dies) stops the child, without any signal."""
    provider = ServeControllerProcesses(session_timeout_ms=1000)
    provider.endpoint_for(ControllerSettings.for_run("3.9", {}))
    [(process, _, _)] = provider.children.values()
    try:
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(10) == 0
    finally:
        provider.close()


def test_a_campaign_stops_its_controllers_when_it_ends_not_at_exit() -> None:
    result = run_campaign(CampaignConfig(adapter="kafka-wire", release="3.9", examples=3, steps=5))
    assert result.outcomes["pass"] >= 3
    assert not serving_children()


class RecordingProvider:
    def __init__(self) -> None:
        self.closed = False

    def endpoint_for(self, settings: ControllerSettings) -> None:
        raise AssertionError("not used")

    def close(self) -> None:
        self.closed = True


def test_the_target_stops_its_controllers_even_when_ending_the_run_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = RecordingProvider()
    target = KafkaWireTarget(provider)  # type: ignore[arg-type]

    def failing_close() -> None:
        raise RuntimeError("connection lost while unregistering the ghosts")

    monkeypatch.setattr(target, "close", failing_close)
    with pytest.raises(RuntimeError):
        target.shutdown()
    assert provider.closed
