"""`isrcheck run --spark`: the batches of a campaign as Spark tasks, merged into the ordinary result.

The task logic (shares of the plan, the budget deadline, retried attempts, setup errors) is
tested in process; two short local[2] campaigns prove the whole path — a mutant found with its
records written by the executors, and the reference against itself with every run recorded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, plan_batches, run_campaign
from isrcheck.conformance.engine.spark_campaign import cause_line, run_task, task_batches, task_count

from isrcheck.cli import main


def test_tasks_share_every_batch_of_the_plan_exactly_once() -> None:
    config = CampaignConfig(examples=130, batch_size=25)
    tasks = task_count(config, slots=4)
    shares = [list(task_batches(config, task, tasks)) for task in range(tasks)]
    assert tasks == 4
    assert sorted(batch for share in shares for batch in share) == plan_batches(config)
    assert shares[0] == [(0, 25), (4, 25)]


def test_there_are_never_more_tasks_than_batches() -> None:
    assert task_count(CampaignConfig(examples=30, batch_size=25), slots=8) == 2


def test_a_budget_campaign_gives_each_task_an_endless_interleaved_plan() -> None:
    config = CampaignConfig(examples=None, budget_s=5, batch_size=25)
    assert task_count(config, slots=3) == 3
    assert list(islice(task_batches(config, 1, 3), 4)) == [(1, 25), (4, 25), (7, 25), (10, 25)]


def test_a_task_launches_no_batch_after_the_deadline(tmp_path: Path) -> None:
    config = CampaignConfig(examples=2, steps=5, records_dir=tmp_path, campaign_id="late")
    report = run_task(config, 0, 2, deadline=time.time() - 1)
    assert report.error is None and report.result is not None
    assert report.result.runs == 0
    assert (tmp_path / "late-w0.jsonl").read_text() == ""


def test_a_task_stops_at_its_first_finding_and_its_batches_use_the_campaign_seeds(tmp_path: Path) -> None:
    config = CampaignConfig(mutant="B02", examples=100, steps=40, seed=1, records_dir=tmp_path, campaign_id="c")
    report = run_task(config, 1, 2, deadline=None)
    assert report.result is not None and report.result.found
    seeds = {json.loads(line)["seed"] for line in (tmp_path / "c-w1.jsonl").read_text().splitlines()}
    assert seeds <= {1 + 1, 1 + 3}
    assert report.result.outcomes["finding"] == 1


def test_a_retried_task_replaces_the_records_of_the_failed_attempt(tmp_path: Path) -> None:
    (tmp_path / "retry-w0.jsonl").write_text('{"half a record from the failed attempt"\n')
    config = CampaignConfig(examples=3, steps=5, records_dir=tmp_path, campaign_id="retry")
    report = run_task(config, 0, 1, deadline=None)
    lines = (tmp_path / "retry-w0.jsonl").read_text().splitlines()
    assert report.result is not None and len(lines) == report.result.runs == 3
    assert all(json.loads(line)["campaign_id"] == "retry" for line in lines)


def test_a_task_that_cannot_write_its_records_reports_why(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    report = run_task(CampaignConfig(examples=1, records_dir=blocker), 0, 1, deadline=None)
    assert report.result is None
    assert report.error is not None and "FileExistsError" in report.error


def test_the_line_naming_a_spark_failure_is_chosen() -> None:
    python = "An exception was thrown from the Python worker:\nTraceback (most recent call last):\n" \
             "  File \"x.py\", line 1\nModuleNotFoundError: No module named 'conformance'\n"
    assert cause_line(python) == "ModuleNotFoundError: No module named 'conformance'"
    assert cause_line("org.apache.spark.SparkException: executor lost\n\tat org.apache...") == (
        "org.apache.spark.SparkException: executor lost")


@pytest.mark.parametrize(("arguments", "message"), [
    (["--master", "local[2]"], "--master needs --spark"),
    (["--conf", "spark.driver.memory=1g"], "--conf needs --spark"),
    (["--spark", "--workers", "2"], "--workers does not apply with --spark"),
    (["--spark", "--master", "bogus://nowhere"], "bad Spark master 'bogus://nowhere'"),
    (["--spark", "--master", "sc://localhost:15002"], "cannot run a campaign over Spark Connect"),
    (["--spark", "--conf", "novalue"], "--conf 'novalue': expected KEY=VALUE"),
])
def test_spark_options_given_wrongly_are_a_one_line_usage_error(
        arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--examples", "1", *arguments]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def spark_run(*arguments: str | Path) -> tuple[int, dict, str]:
    if shutil.which("java") is None:
        pytest.skip("Spark tests need Java 17+ on PATH")
    pytest.importorskip("pyspark")
    done = subprocess.run([sys.executable, "-m", "isrcheck", "run", "--spark", "--master", "local[2]", "--json",
                           *map(str, arguments)], capture_output=True, text=True, timeout=300)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def record_lines(directory: Path) -> dict[str, list[dict]]:
    return {path.name: [json.loads(line) for line in path.read_text().splitlines()]
            for path in sorted(directory.glob("*.jsonl"))}


def test_a_spark_campaign_finds_b02_and_its_executors_write_the_records(tmp_path: Path) -> None:
    code, summary, err = spark_run("--mutant", "B02", "--examples", "200", "--seed", "1", "--records", tmp_path)
    assert code == 1, err
    assert any(":P-ELIG:" in signature or signature.startswith("divergence:") for signature in summary["findings"])
    example = summary["examples"]["violation:alter_partition:P-ELIG:"]
    assert "--mutant B02" in example["replay"] and "--stop-at-first" in example["replay"]
    files = record_lines(tmp_path)
    campaign = summary["campaign_id"]
    assert sorted(files) == [f"{campaign}-w0.jsonl", f"{campaign}-w1.jsonl"]
    assert sum(len(records) for records in files.values()) == summary["runs"]
    assert all(records[-1]["outcome"] == "finding" for records in files.values())


def test_the_reference_against_itself_on_spark_finds_nothing_and_records_every_run(tmp_path: Path) -> None:
    """The same seeded batches as a local campaign, so the same runs (Hypothesis may add one to a
    batch, the same one wherever the batch runs)."""
    code, summary, err = spark_run("--examples", "60", "--steps", "20", "--seed", "7", "--records", tmp_path)
    assert code == 0, err
    local = run_campaign(CampaignConfig(examples=60, steps=20, seed=7))
    assert summary["runs"] == local.runs >= 60 and summary["findings"] == {}
    records = [record for lines in record_lines(tmp_path).values() for record in lines]
    assert len(records) == len({record["run_id"] for record in records}) == local.runs
    assert {record["seed"] for record in records} == {7, 8, 9}
