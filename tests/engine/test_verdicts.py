"""Honest verdicts (issue 13): a finding is a bug in the target; a crash, a refused configuration
and isrcheck's own failure each say what they are, in the records and in the exit code
(docs/exit-codes.md), and every run writes a record whatever its outcome."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from isrcheck.conformance.engine.campaign import (
    ENGINE_ERROR,
    FAILED,
    PASSED,
    UNTESTED,
    CampaignConfig,
    run_campaign,
)

from isrcheck import cli
from isrcheck.commands.run import exit_code

ROOT = Path(__file__).resolve().parents[2]


def records_in(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()]


def test_a_refused_configuration_is_one_skipped_record_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not `FOUND error:engine::` and exit 1 with no record (as before): the run is recorded as
    skipped with the target's reason, the campaign stops (the configuration never changes), and
    a campaign that tested nothing exits 2."""
    junit = tmp_path / "junit.xml"
    code = cli.main(["run", "--adapter", "broken_targets:RefusingTarget", "--examples", "60", "--seed", "1",
                     "--records", str(tmp_path), "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 2
    suite = ElementTree.parse(junit).getroot()
    assert suite.get("skipped") == "1" and suite.get("failures") == "0"
    skipped = suite.find("testcase/skipped")
    assert skipped is not None and "this target does not run Kafka 4.1" in str(skipped.get("message"))
    records = records_in(tmp_path)
    assert [(r["outcome"], r["skip_reason"]) for r in records] == [("skipped", "this target does not run Kafka 4.1")]
    assert "SKIPPED: the target refused this configuration: this target does not run Kafka 4.1" in out
    assert "FOUND" not in out and "nothing tested" in out


def test_a_crash_while_observing_is_a_crash_outcome_and_the_campaign_goes_on(tmp_path: Path) -> None:
    """A target that crashes in `observe` (not `execute`) once aborted the whole campaign with an
    engine error and no record; it is a crash of that run, recorded, and the next run goes on."""
    result = run_campaign(CampaignConfig(adapter="broken_targets:ObserveCrashingTarget", examples=40, steps=40,
                                         seed=1, records_dir=tmp_path, stop_at_first=False))
    records = records_in(tmp_path)
    outcomes = Counter(r["outcome"] for r in records)
    assert len(records) == result.runs >= 40
    assert outcomes["crash"] >= 2 and outcomes["pass"] >= 1, outcomes
    assert set(outcomes) <= {"pass", "crash"}, outcomes
    crashed = next(r for r in records if r["outcome"] == "crash")
    assert "plug-in bug while observing" in crashed["findings"][0]["message"]
    assert result.verdict == FAILED and not result.found  # the target failed, but broke no property


def test_an_isrcheck_failure_is_recorded_as_error_and_exits_3(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in isrcheck (here: the property checker raising) is no verdict on the target: its run
    is recorded with outcome `error`, the console says so, and the exit code is 3, not 1."""
    import isrcheck.conformance.engine.step_checkers as step_checkers

    def broken_checker(*args: object) -> list[object]:
        raise RuntimeError("checker bug")

    monkeypatch.setattr(step_checkers, "judge_controller_step", broken_checker)
    code = cli.main(["run", "--examples", "5", "--seed", "1", "--records", str(tmp_path),
                     "--junit", str(tmp_path / "junit.xml")])
    out = capsys.readouterr().out
    assert code == 3
    records = records_in(tmp_path)
    assert [r["outcome"] for r in records] == ["error"]
    assert records[0]["findings"][0]["message"] == "isrcheck failed: RuntimeError: checker bug"
    assert "ISRCHECK ERROR error:" in out and "a bug in isrcheck, not in the target" in out
    suite = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert (suite.get("errors"), suite.get("failures")) == ("1", "0") and suite.find("testcase/error") is not None
    assert "FOUND" not in out


@pytest.mark.parametrize(("verdicts", "code"), [
    ([PASSED], 0),
    ([PASSED, UNTESTED], 0),  # one level tested, one refused
    ([UNTESTED], 2),
    ([], 2),  # every level skipped before it started
    ([ENGINE_ERROR, PASSED], 3),
    ([FAILED, ENGINE_ERROR], 1),  # the target's failure is real whatever else went wrong
])
def test_exit_codes_put_the_most_serious_verdict_first(verdicts: list[str], code: int) -> None:
    assert exit_code(verdicts) == code


DIES_ON_EXECUTE = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    req = json.loads(line)\n"
    "    if req['method'] == 'execute':\n"
    "        sys.exit(3)\n"
    "    res = {'protocol': 'isrcheck.exec/1', 'name': 'dies'} if req['method'] == 'describe' else "
    "({'registered': False, 'broker_epoch': -1} if req['method'] == 'observe' else {'error': 'NONE'})\n"
    "    print(json.dumps({'id': req['id'], 'result': res}), flush=True)\n"
)


def test_replay_commands_are_one_shell_command(tmp_path: Path) -> None:
    """Both kinds of replay command (a shrunk batch, a collected run), for an adapter spec and a
    records path with spaces in them, pasted into a shell as they are printed: each reproduces
    the finding (docs/records.md: "one shell command")."""
    plugin_dir = tmp_path / "my plug-in"
    plugin_dir.mkdir()
    script = plugin_dir / "dies on execute.py"
    script.write_text(DIES_ON_EXECUTE)
    adapter = f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "isrcheck").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m isrcheck \"$@\"\n")
    (shim / "isrcheck").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

    shrunk = run_campaign(CampaignConfig(adapter=adapter, examples=3, steps=5, seed=1))
    collected_dir = tmp_path / "my records"
    collected = run_campaign(CampaignConfig(adapter=adapter, examples=3, steps=5, seed=1, stop_at_first=False,
                                            records_dir=collected_dir))
    for result in (shrunk, collected):
        (signature, example), = result.examples.items()
        assert signature.startswith("crash:")
        done = subprocess.run(["sh", "-c", example["replay"]], capture_output=True, text=True, timeout=120,
                              env=env, cwd=tmp_path)
        assert done.returncode == 1, (example["replay"], done.stdout, done.stderr)
        assert signature in done.stdout, done.stdout


def test_negative_control_n1_passes_at_the_cluster_level() -> None:
    """N1 (broker epochs from a private counter, so metadata offsets with gaps) was flagged at the
    cluster level — `P-LIVE: broker 1 has applied metadata to 1001 of 9` — because the simulated
    cluster counted records to find offsets. A negative control passes at every level it runs at."""
    result = run_campaign(CampaignConfig(mutant="N1", level="cluster", examples=60, steps=50, seed=1))
    assert result.verdict == PASSED, result.examples
    assert result.tested == result.runs >= 60


@pytest.mark.parametrize(("expect_finding", "outcomes", "label"), [
    (False, {"pass": 5}, "clean"),
    (False, {"pass": 4, "crash": 1}, "FLAGGED"),  # the reference's wire server crashing is no clean run
    (False, {"pass": 4, "finding": 1}, "FLAGGED"),
    (False, {"skipped": 1}, "UNTESTED"),
    (False, {"error": 1}, "ERROR"),
    (True, {"pass": 3, "finding": 1}, "found"),
    (True, {"pass": 25}, "MISSED"),
    (True, {"pass": 24, "crash": 1}, "MISSED"),  # a crash is not the mutant's bug being found
    (True, {"pass": 2, "error": 1}, "ERROR"),
])
def test_the_main_jobs_verdicts_say_what_happened(expect_finding: bool, outcomes: dict[str, int],
                                                  label: str) -> None:
    from isrcheck.conformance.engine.campaign import CampaignResult

    from isrcheck.pipeline import Job, verdict

    result = CampaignResult(runs=sum(outcomes.values()), outcomes=Counter(outcomes))
    assert verdict(Job("job", CampaignConfig(), expect_finding), result) == label
