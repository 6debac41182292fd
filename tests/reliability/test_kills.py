"""Killing isrcheck any way leaves nothing behind and loses at most the run in progress (issue 15).

Each test starts `isrcheck run` in a subprocess with a marked environment and its own TMPDIR
(`lifecycle.Marked`), kills something — the parent with SIGKILL, SIGTERM or SIGINT, one worker, a
plug-in child — and then counts: marked processes still alive (must reach none within a few
seconds), entries left in TMPDIR (`pymp-*`, `isrcheck-serve-*`: none), and records (no more may
appear once the parent is gone: nothing runs on its behalf).
"""

from __future__ import annotations

import signal
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from lifecycle import Marked, records, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")

HERE = Path(__file__).resolve().parent
STUBBORN = f"exec:{sys.executable} {HERE / 'stubborn_plugin.py'}"
GONE_WITHIN_S = 8.0


def campaign(tmp_path: Path, *extra: str) -> tuple[Marked, Path]:
    out = tmp_path / "records"
    return Marked.start(["run", "--budget", "120", "--steps", "20", "--seed", "5", "--records", str(out), *extra],
                        tmp_path), out


def started_writing(out: Path, count: int = 20) -> bool:
    return out.exists() and len(records(out)) >= count


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["KILL", "TERM", "INT"])
def test_killing_the_parent_of_two_workers_stops_everything(tmp_path: Path, signum: int) -> None:
    run, out = campaign(tmp_path, "--workers", "2")
    try:
        assert wait_for(lambda: started_writing(out), 60), run.alive()
        assert len(run.alive()) >= 3  # the parent and its two workers at least
        run.process.send_signal(signum)
        assert wait_for(lambda: not run.alive(), GONE_WITHIN_S), f"still running: {run.alive()}"
        written = len(records(out))
        time.sleep(2)
        assert len(records(out)) == written, "records appeared after the campaign was killed"
        assert run.leftovers() == []
    finally:
        run.cleanup()


def runs_per_batch(found: list[dict[str, object]]) -> Counter[object]:
    """Records per batch: a batch's runs are fixed by its seed, whichever worker runs it."""
    return Counter(r["seed"] for r in found)


def test_a_killed_worker_loses_only_its_run_in_progress_and_the_campaign_ends(tmp_path: Path) -> None:
    args = ["run", "--workers", "2", "--examples", "300", "--steps", "20", "--seed", "5"]
    whole = Marked.start([*args, "--records", str(tmp_path / "whole")], tmp_path / "a")
    try:
        assert whole.process.wait(120) == 0
        complete = runs_per_batch(records(tmp_path / "whole"))
    finally:
        whole.cleanup()
    out = tmp_path / "records"
    run = Marked.start([*args, "--records", str(out)], tmp_path / "b")
    try:
        assert wait_for(lambda: started_writing(out), 60)
        victim = run.workers()[0]
        import os

        os.kill(victim, signal.SIGKILL)
        assert run.process.wait(120) in (0, 1)
        stderr = run.process.stderr.read().decode() if run.process.stderr else ""
        assert "ended without a result" in stderr
        assert not run.alive()
        assert run.leftovers() == []
        kept = runs_per_batch(records(out))
        # Hypothesis may run a batch a little past --examples (runs it cuts off at its choice
        # budget are recorded too), so the count to compare with is the same campaign unkilled
        short = {batch for batch in complete if kept[batch] != complete[batch]}
        assert len(short) <= 1, f"only the victim's batch in progress may be cut short: {short}"
        assert all(kept[batch] <= complete[batch] for batch in kept)
        assert sum(kept.values()) >= 20  # the survivor ran its share
    finally:
        run.cleanup()


def test_a_finding_is_on_disk_before_shrinking_and_survives_sigkill_during_it(tmp_path: Path) -> None:
    out = tmp_path / "records"
    run = Marked.start(["run", "--mutant", "B01", "--examples", "400", "--steps", "40", "--seed", "1",
                        "--records", str(out)], tmp_path)
    try:
        def finding_written() -> bool:
            return out.exists() and any(r.get("outcome") == "finding" for r in records(out))

        assert wait_for(finding_written, 120, step_s=0.02)
        first = next(r for r in records(out) if r.get("outcome") == "finding")
        assert str(first["replay"]).startswith("isrcheck replay "), "first seen after shrinking, not before"
        assert run.process.poll() is None, "the campaign ended before it could be killed while shrinking"
        run.process.kill()
        run.process.wait(10)
        found = [r for r in records(out) if r.get("outcome") == "finding"]
        assert len(found) == 1
        assert found[0]["replay"], "a finding cut off from its shrinking must still be replayable"
        assert wait_for(lambda: not run.alive(), GONE_WITHIN_S)
    finally:
        run.cleanup()


def test_a_finished_campaign_shrinks_the_finding_it_wrote_first_into_one_record(tmp_path: Path) -> None:
    out = tmp_path / "records"
    run = Marked.start(["run", "--mutant", "B01", "--examples", "400", "--steps", "40", "--seed", "1",
                        "--records", str(out)], tmp_path)
    try:
        assert run.process.wait(300) == 1
        found = [r for r in records(out) if r.get("outcome") == "finding"]
        assert len(found) == 1, [r["run_id"] for r in found]
        assert str(found[0]["replay"]).startswith("isrcheck run ")  # the shrunk form replaced the first
        ids = [r["run_id"] for r in records(out)]
        assert len(ids) == len(set(ids))
    finally:
        run.cleanup()


def test_a_plugin_that_ignores_end_of_input_is_killed_when_isrcheck_ends(tmp_path: Path) -> None:
    run = Marked.start(["run", "--adapter", STUBBORN, "--examples", "5", "--steps", "10", "--seed", "2"], tmp_path)
    try:
        assert run.process.wait(120) == 0
        assert wait_for(lambda: not run.alive(), GONE_WITHIN_S), f"left running: {run.alive()}"
    finally:
        run.cleanup()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigkill_of_isrcheck_kills_a_plugin_that_ignores_end_of_input(tmp_path: Path, workers: str) -> None:
    run, out = campaign(tmp_path, "--adapter", STUBBORN, "--workers", workers)
    try:
        assert wait_for(lambda: started_writing(out, 5), 60)
        # one plug-in per worker: none left over from checking the adapter before the campaign
        assert len(run.children_matching("stubborn_plugin")) == int(workers)
        run.process.kill()
        assert wait_for(lambda: not run.alive(), GONE_WITHIN_S), f"left running: {run.alive()}"
    finally:
        run.cleanup()


def test_a_killed_plugin_is_a_crash_outcome_and_the_campaign_goes_on(tmp_path: Path) -> None:
    run, out = campaign(tmp_path, "--adapter", STUBBORN, "--collect")
    try:
        assert wait_for(lambda: started_writing(out, 5), 60)
        import os

        for pid in run.children_matching("stubborn_plugin"):
            os.kill(pid, signal.SIGKILL)
        assert wait_for(lambda: any(r["outcome"] == "crash" for r in records(out)), 30)
        crashed = len(records(out))
        assert wait_for(lambda: len(records(out)) > crashed + 3 and run.children_matching("stubborn_plugin"), 60)
        run.process.send_signal(signal.SIGTERM)
        assert wait_for(lambda: not run.alive(), GONE_WITHIN_S)
        assert run.leftovers() == []
    finally:
        run.cleanup()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["KILL", "TERM"])
def test_killing_a_wire_campaign_stops_its_controllers_and_removes_their_logs(tmp_path: Path, signum: int) -> None:
    run, out = campaign(tmp_path, "--adapter", "kafka-wire", "--workers", "2", "--timeout", "20")
    try:
        assert wait_for(lambda: started_writing(out, 4), 180), run.alive()
        assert run.children_matching("serve-controller")
        run.process.send_signal(signum)
        assert wait_for(lambda: not run.alive(), GONE_WITHIN_S), f"still running: {run.alive()}"
        assert run.leftovers() == []
    finally:
        run.cleanup()
