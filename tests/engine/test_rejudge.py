"""`isrcheck check` on controller-level and simulated-cluster records (`isrcheck run
--record-history`; black-box cluster records: tests/cluster_history/test_history_engine.py): every run judged
again offline from its history agrees with the verdict recorded live — for runs that pass, runs
that diverge and runs that break a property — and a history altered after the fact no longer
agrees (the check can fail). Records also say which properties their run could not judge."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.rejudge import rejudge_record
from isrcheck.conformance.properties.catalogue import GROUND_TRUTH_ONLY

from isrcheck.commands import check


def records(directory: Path) -> list[dict[str, object]]:
    return [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()]


def campaign(tmp_path: Path, mutant: str | None, level: str = "controller") -> list[dict[str, object]]:
    result = run_campaign(CampaignConfig(level=level, mutant=mutant, examples=12, steps=30, seed=8,
                                         stop_at_first=False, records_dir=tmp_path, record_history=True))
    assert result.runs == 12
    return records(tmp_path)


@pytest.mark.parametrize("mutant", [None, "B02"])
def test_every_controller_record_is_judged_again_to_its_recorded_verdict(tmp_path: Path, mutant: str | None) -> None:
    found = campaign(tmp_path, mutant)
    assert len(found) == 12
    verdicts = []
    for record in found:
        rejudged = rejudge_record(record)
        assert rejudged is not None and rejudged.steps == record["steps"] and rejudged.unknown == []
        assert sorted({f.signature for f in rejudged.findings}) == sorted(
            {f["signature"] for f in record["findings"]})  # type: ignore[union-attr, index]
        verdicts.append(bool(rejudged.findings))
    if mutant is None:
        assert not any(verdicts)
    else:  # B02 is found in some runs and not in others at these settings: both kinds were re-judged
        assert any(verdicts) and not all(verdicts)


def test_every_simulated_cluster_record_is_judged_again_to_its_recorded_verdict(tmp_path: Path) -> None:
    result = run_campaign(CampaignConfig(level="cluster", mutant="D10", examples=15, steps=40, seed=3,
                                         stop_at_first=False, records_dir=tmp_path, record_history=True))
    assert result.runs == 15
    verdicts = []
    for record in records(tmp_path):
        rejudged = rejudge_record(record)
        assert rejudged is not None and rejudged.level == "cluster" and rejudged.steps == record["steps"]
        assert set(rejudged.unknown) == set(record["unknown"])  # type: ignore[arg-type]
        assert sorted({f.signature for f in rejudged.findings}) == sorted(
            {f["signature"] for f in record["findings"]})  # type: ignore[union-attr, index]
        verdicts.append(bool(rejudged.findings))
    assert any(verdicts) and not all(verdicts)  # D10 found in some runs, not in others: both re-judged


def test_a_history_altered_after_the_run_disagrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = campaign(tmp_path, "B02")
    record = next(r for r in found if r["findings"])
    history = record["history"]
    history["steps"] = history["steps"][:-1]  # type: ignore[index]  # the step that found it is gone
    path = tmp_path / "altered.jsonl"
    path.write_text(json.dumps(record) + "\n")
    code = check.run(argparse.Namespace(records=[path], run=None))
    out = capsys.readouterr().out
    assert code == 1 and "(recorded: " in out and "1 disagree with their record" in out


def test_records_name_the_properties_their_run_could_not_judge(tmp_path: Path) -> None:
    controller = campaign(tmp_path / "controller", None)
    assert {tuple(r["unknown"]) for r in controller} == {()}  # type: ignore[arg-type]
    cluster = run_campaign(CampaignConfig(level="cluster", examples=4, steps=20, seed=1, stop_at_first=False,
                                          records_dir=tmp_path / "cluster"))
    assert cluster.runs == 4
    for record in records(tmp_path / "cluster"):
        unknown = set(record["unknown"])  # type: ignore[arg-type]
        assert {"P-HWC", "P-FENCE"} <= unknown  # judged on a black-box history's views only
        assert not unknown & GROUND_TRUTH_ONLY  # a simulation shows its ground truth


def test_check_says_when_no_record_has_a_history(tmp_path: Path) -> None:
    run_campaign(CampaignConfig(level="controller", examples=2, steps=5, seed=1, records_dir=tmp_path))
    from isrcheck.contract.errors import UsageError

    with pytest.raises(UsageError, match="no record with a history"):
        check.run(argparse.Namespace(records=list(tmp_path.glob("*.jsonl")), run=None))


def test_a_finding_carries_its_history_without_the_option_and_a_pass_does_not(tmp_path: Path) -> None:
    run_campaign(CampaignConfig(level="controller", mutant="B02", examples=30, steps=30, seed=8,
                                stop_at_first=False, records_dir=tmp_path))
    written = records(tmp_path)
    findings = [r for r in written if r["outcome"] == "finding"]
    passes = [r for r in written if r["outcome"] == "pass"]
    assert findings and passes
    assert all(r.get("history") for r in findings) and not any(r.get("history") for r in passes)
    for record in findings:
        rejudged = rejudge_record(record)
        assert rejudged is not None
        assert [f.signature for f in rejudged.findings] == [f["signature"] for f in record["findings"]]  # type: ignore[index]
