"""Known divergences are matched by their rule on the run, not by signature (docs/known-divergences.md):
KD1's rule marks the real case known, and the same error code from another cause stays a finding;
records, console, --json, JUnit and the report say "known"; known divergences alone exit 0."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.engine.campaign import FAILED, KNOWN_ONLY, CampaignConfig, outcome_of, run_campaign
from isrcheck.conformance.engine.run import Run, controller_run
from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.operations.known_divergences import KNOWN_DIVERGENCES, DivergingStep, factor_from_any_partition
from isrcheck.contract.operations.step import Step
from isrcheck.reports.html_report import render_report
from isrcheck.reports.plain_summary import summarize_files
from known_divergence_targets import PartitionZeroTarget, RefusesGrowthTarget

from isrcheck import cli

RULE = "create-partitions-first-value-factor"


def step(op: str, **args: Any) -> Step:
    return Step(0, op, args, None, {}, None)


def setup() -> list[Step]:
    return [s for b in (1, 2, 3) for s in (step("register_broker", broker=b), step("unfence_broker", broker=b))]


# the shrunk case of the campaigns (docs/known-divergences/create_partitions_replication_factor.yaml, KD1a)
SHRUNK = [
    step("create_topic", topic="t0", assignment=[[1, 2, 3]]),
    step("create_partitions", topic="t0", count=3, assignment=[[2, 3, 1], [3, 1, 2]]),
    step("reassign", topic="t0", partition=2, replicas=[1]),
    step("controlled_shutdown", broker=1),
    step("create_partitions", topic="t0", count=4, assignment=[[1, 3, 2]]),
]
# the same requests without the reassignment: every partition keeps three replicas
EQUAL_FACTORS = [s for s in SHRUNK if s.op != "reassign"]


def paired(target: Any, steps: list[Step]) -> Run:
    reference, tgt = ReferenceTarget(), target
    reference.open("3.9", {})
    tgt.open("3.9", {})
    run = controller_run(reference, tgt, "3.9", brokers=[1, 2, 3], partitions=[("t0", p) for p in range(4)])
    for s in [*setup(), *steps]:
        run.step(s)
    return run


def test_the_rule_marks_the_shrunk_case_known_and_the_run_outcome_known() -> None:
    run = paired(PartitionZeroTarget(), SHRUNK)
    assert len(run.trace) == 6 + 5 and run.findings, "the run must diverge at its last step"
    finding, created = run.findings  # the answer, and partition 3 that only the reference created
    assert (finding.step, finding.operation, finding.field) == (11, "create_partitions", "error")
    assert (created.field, created.evidence["partition"]) == ("partition.exists", "t0-3")
    assert finding.known == created.known == RULE
    assert finding.signature == f"known:{RULE}:divergence:create_partitions:error:INVALID_REPLICA_ASSIGNMENT,NONE"
    assert finding.to_json()["known"] == RULE
    assert outcome_of(run.findings) == "known"


def test_the_same_code_with_equal_replication_factors_is_a_finding() -> None:
    """A target that refuses the growth for another reason, with the same code: same signature
    string as KD1's, but the existing partitions all have three replicas — a finding."""
    run = paired(RefusesGrowthTarget(), EQUAL_FACTORS)
    finding = run.findings[0]
    assert all(f.known is None for f in run.findings)
    assert finding.signature == "divergence:create_partitions:error:INVALID_REPLICA_ASSIGNMENT,NONE"
    assert finding.known is None and outcome_of(run.findings) == "finding"


def test_the_same_code_on_a_topic_with_different_factors_is_a_finding_when_no_factor_explains_it() -> None:
    """Different factors, but a new list of 2 replicas: no existing partition has 2, so neither
    answer is what some partition's factor gives — a finding."""
    run = paired(RefusesGrowthTarget(), [*SHRUNK[:-1], step("create_partitions", topic="t0", count=4,
                                                              assignment=[[2, 3]])])
    assert run.findings and run.findings[0].codes
    assert all(f.known is None for f in run.findings)


def observation(factors: dict[int, int]) -> ControllerObservation:
    return ControllerObservation({("t0", p): {"exists": True, "replicas": list(range(1, n + 1))}
                                  for p, n in factors.items()}, {})


@pytest.mark.parametrize(("factors", "assignment", "answers", "known"), [
    ({0: 3, 1: 3, 2: 1}, [[1, 3, 2]], ("NONE", "INVALID_REPLICA_ASSIGNMENT"), True),
    ({0: 3, 1: 3, 2: 1}, [[3]], ("INVALID_REPLICA_ASSIGNMENT", "NONE"), True),
    ({0: 3, 1: 3, 2: 3}, [[1, 3, 2]], ("NONE", "INVALID_REPLICA_ASSIGNMENT"), False),  # equal factors
    ({0: 3, 1: 3, 2: 1}, [[1, 3, 2], [3]], ("NONE", "INVALID_REPLICA_ASSIGNMENT"), False),  # lengths differ
    ({0: 3, 1: 3, 2: 1}, [[1, 3, 2]], ("NONE", "INVALID_PARTITIONS"), False),  # another code
])
def test_the_rule_clause_by_clause(factors: dict[int, int], assignment: list[list[int]],
                                   answers: tuple[str, str], known: bool) -> None:
    from isrcheck.contract.operations.findings import DIVERGENCE, Finding
    finding = Finding(DIVERGENCE, "create_partitions", 5, "x", field="error", codes=answers)
    diverging = DivergingStep("create_partitions", {"topic": "t0", "count": 4, "assignment": assignment},
                              observation(factors), {"error": answers[0]}, {"error": answers[1]})
    assert factor_from_any_partition(finding, diverging) is known
    assert [rule.name for rule in KNOWN_DIVERGENCES] == [RULE]


def records_in(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()]


def test_a_campaign_with_known_divergences_only_exits_0_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", "--adapter", "known_divergence_targets:PartitionZeroTarget", "--kafka", "3.9",
                     "--examples", "150", "--seed", "1", "--collect", "--records", str(tmp_path / "records"),
                     "--junit", str(tmp_path / "junit.xml"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    records = records_in(tmp_path / "records")
    known = [r for r in records if r["outcome"] == "known"]
    assert known, "150 runs of seed 1 must reach KD1 at least once (else this test tests nothing)"
    assert code == 0 and summary["verdict"] == KNOWN_ONLY
    assert summary["outcomes"]["known"] == len(known) and summary["runs"] == len(records) >= 150
    assert summary["findings"] == {} and set(summary["known_divergences"]) == {
        f"known:{RULE}:divergence:create_partitions:error:INVALID_REPLICA_ASSIGNMENT,NONE"}
    assert all(f["known"] == RULE for r in known for f in r["findings"])
    suite = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    (case,) = suite.findall("testcase[@classname='isrcheck.known']")
    assert "known divergence" in str(case.findtext("system-out")) and case.find("failure") is None
    report = summarize_files(sorted((tmp_path / "records").glob("*.jsonl")))
    assert [bug["bug"] for bug in report["bugs"]] == [f"known:{RULE}"]
    assert report["bugs"][0]["kind"] == "known"
    html = render_report(report)
    assert "Known divergences" in html and "New findings" not in html
    # the record's replay reproduces it as known (the replay observes fewer partitions: the rule
    # reads the topic's partitions from the reference itself)
    replay = shlex.split(known[0]["replay"])
    assert replay[:2] == ["isrcheck", "replay"]
    assert cli.main(replay[1:]) == 0
    out = capsys.readouterr().out
    assert f"KNOWN known:{RULE}:" in out and "reproduced: a known divergence" in out


def test_the_console_says_known_divergences_only(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", "--adapter", "known_divergence_targets:PartitionZeroTarget", "--kafka", "3.9",
                     "--examples", "150", "--seed", "1", "--collect"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"KNOWN known:{RULE}:" in out and "known divergences only" in out and "FOUND" not in out


def test_the_same_code_from_another_cause_fails_the_campaign(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_campaign(CampaignConfig(adapter="known_divergence_targets:RefusesGrowthTarget", release="3.9",
                                         examples=50, seed=3, stop_at_first=False))
    assert result.verdict == FAILED and result.outcomes["finding"] > 0
    assert "divergence:create_partitions:error:INVALID_REPLICA_ASSIGNMENT,NONE" in result.signatures
    code = cli.main(["run", "--adapter", "known_divergence_targets:RefusesGrowthTarget", "--kafka", "3.9",
                     "--examples", "50", "--seed", "3"])
    assert code == 1 and "FOUND divergence:create_partitions" in capsys.readouterr().out
