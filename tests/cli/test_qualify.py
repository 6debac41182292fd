"""`isrcheck qualify` (docs/qualify.md): one command, one verdict line, exit 0/0/1/2, and what ran
written down. The fast tests summarize in plain Python (the Spark job is `isrcheck summarize`'s,
tested with it); the slow one runs everything, Spark included, against real Kafka 3.9."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports.plain_summary import summarize_files

from isrcheck import cli
from isrcheck.commands import qualify

REPO = Path(__file__).resolve().parents[2]
KAFKA_39 = REPO.parent / "shared" / "kafka" / "3.9"


@pytest.fixture
def plain_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    def summarize(files: list[Path], out: Path, master: str | None, conf: dict[str, str]) -> dict[str, Any]:
        return summarize_files(files)

    monkeypatch.setattr(qualify, "summarize_with_spark", summarize)
    monkeypatch.setattr(qualify, "check_spark", lambda master: None)


def verdict_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith(tuple(qualify.EXIT_CODES))]
    return line


def test_the_reference_conforms_and_everything_ran_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], plain_summary: None) -> None:
    out = tmp_path / "q"
    code = cli.main(["qualify", "--adapter", "reference", "--kafka", "3.9", "--budget", "20", "--seed", "4",
                     "--out", str(out), "--junit", str(out / "junit.xml")])
    printed = capsys.readouterr().out
    assert code == 0 and verdict_line(printed).startswith("conforms: nothing found")
    assert "budget 20 s: scenario suite" in printed and "controller campaign" in printed and "seed 4" in printed
    ran = json.loads((out / "qualify.json").read_text())
    suite = len(list((out / "scenarios.jsonl").read_text().splitlines()))
    assert ran["verdict"] == "conforms" and ran["seed"] == 4
    assert ran["scenarios"]["passed"] >= 150 and ran["scenarios"]["failed"] == 0
    assert sum(ran["scenarios"].values()) == suite >= 180
    assert ran["campaigns"]["controller"]["runs"] > 0 and ran["campaigns"]["cluster"]["runs"] > 0
    records = [json.loads(line) for path in (out / "records").glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(records) == ran["campaigns"]["controller"]["runs"] + ran["campaigns"]["cluster"]["runs"]
    assert "<html" in (out / "report.html").read_text()
    suites = ElementTree.parse(out / "junit.xml").getroot()
    assert suites.tag == "testsuites" and len(suites) == 3
    assert suites[0].get("tests") == str(suite) and suites[0].get("failures") == "0"


def test_a_mutant_is_a_new_finding_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], plain_summary: None) -> None:
    code = cli.main(["qualify", "--adapter", "reference+B02", "--kafka", "3.9", "--budget", "20", "--seed", "1",
                     "--out", str(tmp_path / "q")])
    line = verdict_line(capsys.readouterr().out)
    assert code == 1 and line.startswith("new finding: ")
    ran = json.loads((tmp_path / "q" / "qualify.json").read_text())
    assert ran["scenarios"]["failed"] > 0 and ran["campaigns"]["controller"]["verdict"] == "failed"
    assert ran["campaigns"]["controller"]["findings"]


@pytest.mark.parametrize(("campaigns", "scenarios", "expected"), [
    ({"controller": "passed"}, {"passed": 3, "failed": 0}, "conforms"),
    ({"controller": "known", "cluster": "passed"}, {"passed": 3, "failed": 0}, "known divergences only"),
    ({"controller": "known"}, {"passed": 3, "failed": 1}, "new finding"),
    ({"controller": "failed", "cluster": "known"}, {"passed": 3, "failed": 0}, "new finding"),
    ({"controller": "untested"}, {"passed": 3, "failed": 0}, "could not test"),
    ({"controller": "passed"}, {"passed": 0, "failed": 0}, "could not test"),
    ({"controller": "error"}, {"passed": 3, "failed": 0}, "could not test"),
])
def test_the_verdict_most_serious_first(campaigns: dict[str, str], scenarios: dict[str, int], expected: str) -> None:
    result = qualify.Qualification("a", "3.9", 1, scenarios={**scenarios, "skipped": 0},
                                   verdicts=list(campaigns.values()))
    for level, verdict in campaigns.items():
        result.campaigns[level] = {
            "verdict": verdict, "runs": 1, "steps": 1, "findings": {"x": 1} if verdict == "failed" else {},
            "known_divergences": {"known:r:x": 1} if verdict == "known" else {}}
    assert result.verdict()[0] == expected
    assert qualify.EXIT_CODES[expected] == {"conforms": 0, "known divergences only": 0, "new finding": 1,
                                            "could not test": 2}[expected]


@pytest.mark.parametrize(("argv", "message"), [
    (["--adapter", "no-such-adapter", "--kafka", "3.9"], "no-such-adapter"),
    (["--adapter", "reference", "--kafka", "9.9"], "9.9"),
    (["--adapter", "reference", "--kafka", "3.9", "--budget", "-5"], "--budget"),
    (["--adapter", "reference", "--kafka", "3.9", "--budget", "soon"], "--budget"),
    (["--adapter", "kafka-local,kafka-home=/nonexistent/kafka", "--kafka", "3.9"], "/nonexistent/kafka"),
    (["--adapter", "reference", "--kafka", "3.9", "--scenarios", "BROKEN"], "broken.yaml"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          argv: list[str], message: str) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "broken.yaml").write_text("scenarios:\n  - name: x\n    steps: [[[\n")
    argv = [str(broken) if a == "BROKEN" else a for a in argv]
    code = cli.main(["qualify", *argv, "--out", str(tmp_path / "q")])
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in captured.err, captured.err
    assert not (tmp_path / "q" / "records").exists() or not any((tmp_path / "q" / "records").iterdir())


def test_an_output_directory_with_records_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q" / "records").mkdir(parents=True)
    (tmp_path / "q" / "records" / "old.jsonl").write_text("{}\n")
    assert cli.main(["qualify", "--adapter", "reference", "--kafka", "3.9", "--out", str(tmp_path / "q")]) == 2
    assert "already holds records" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.skipif(not (KAFKA_39 / "libs").is_dir(), reason=f"no Kafka 3.9 at {KAFKA_39}")
def test_kafka_local_39_within_a_small_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real Kafka 3.9.0 (KAFKA_HOME), the Spark summary included: conforms or known divergences only."""
    os.environ.setdefault("ISRCHECK_KAFKA_PORTS", "24000-25999")
    out = tmp_path / "q"
    code = cli.main(["qualify", "--adapter", f"kafka-local,kafka-home={KAFKA_39}", "--kafka", "3.9",
                     "--budget", "300", "--out", str(out), "--junit", str(out / "junit.xml")])
    line = verdict_line(capsys.readouterr().out)
    assert code == 0 and line.startswith(("conforms", "known divergences only")), line
    ran = json.loads((out / "qualify.json").read_text())
    assert ran["scenarios"]["passed"] >= 100 and ran["scenarios"]["failed"] == 0
    assert ran["campaigns"]["controller"]["runs"] > 0 and "cluster" not in ran["campaigns"]
    assert (out / "summary" / "summary.json").is_file() and (out / "report.html").is_file()


def test_the_ci_workflow_runs_one_qualify_per_matrix_entry() -> None:
    """docs/ci/github-actions.yml: every matrix entry is one `isrcheck qualify` whose arguments this
    parser accepts, and no other isrcheck command runs."""
    import yaml

    workflow = yaml.safe_load((REPO / "docs" / "ci" / "github-actions.yml").read_text())
    job = workflow["jobs"]["conformance"]
    entries = job["strategy"]["matrix"]["include"]
    commands = [step["run"] for step in job["steps"] if "isrcheck" in step.get("run", "")]
    assert len(commands) == 1 and commands[0].strip().startswith("isrcheck qualify")
    assert {e["adapter"].split(",")[0] for e in entries} == {"kafka-docker", "kafka-local", "kafka-jvm"}
    assert {e["kafka"] for e in entries if e["adapter"] == "kafka-docker"} == {"3.7.1", "3.9.0", "4.0.1", "4.1.1"}
    assert {e["kafka"][:3] for e in entries if e["adapter"].startswith("kafka-local")} == {
        "3.3", "3.5", "3.7", "3.9", "4.0", "4.1"}
    parser = cli.build_parser(["qualify"])
    for entry in entries:
        text = commands[0].replace("\\\n", " ").replace("'", "")
        text = text.replace("${{ matrix.adapter }}", entry["adapter"]).replace("${{ matrix.kafka }}", entry["kafka"])
        text = text.replace('"$ISRCHECK_BUDGET"', job["env"]["ISRCHECK_BUDGET"])
        args = parser.parse_args(text.split()[1:])
        assert (args.adapter, args.kafka, args.budget, str(args.junit)) == (
            entry["adapter"], entry["kafka"], "1800", "out/junit.xml")
