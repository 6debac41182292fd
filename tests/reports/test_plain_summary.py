"""The plain-Python summary: every section of summary.json checked against the hand-counted fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports import summary_layout as layout
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.summary_file import load_summary, write_summary
from report_fixtures import (
    ELIG,
    EXPECTED,
    SHRUNK_MESSAGE,
    XSS,
    counterexample,
    failing,
    finding,
    make_record,
    valid_records,
)


@pytest.fixture
def summary(records_dir: Path) -> dict[str, Any]:
    return summarize_files(find_record_files([records_dir]))


def test_totals(summary: dict[str, Any]) -> None:
    totals = summary["totals"]
    for key in ("runs", "findings", "runs_with_findings", "signatures", "corrupt_lines", "targets", "releases"):
        assert totals[key] == EXPECTED[key], key
    assert totals["mutants"] == 2
    assert totals["steps"] == sum(r["steps"] for r in valid_records())
    assert totals["first_started_at"] == "2026-11-21T19:00:00.000Z"
    assert summary["inputs"] == {"files": 2, "lines": 39}
    assert summary["outcomes"] == {"pass": 12, "finding": 5, "timeout": 1, "crash": 1, "error": 2, "skipped": 1}


def test_signatures_pick_the_shortest_counterexample_of_a_first_finding(summary: dict[str, Any]) -> None:
    by_name = {s["signature"]: s for s in summary["signatures"]}
    elig = by_name["violation:alter_partition:P-ELIG:"]
    assert (elig["findings"], elig["runs"], elig["releases"], elig["mutants"]) == (3, 3, ["3.5", "4.1"], ["B02"])
    # runs 8 and 9 both have 3 steps: the earlier one wins
    assert elig["shortest"]["run_id"] == "c1-0008"
    assert elig["shortest"]["counterexample"]["length"] == 3
    assert elig["shortest"]["replay"].startswith("isrcheck run --adapter reference --mutant B02")
    assert elig["first_seen"] == "2026-11-21T19:00:07.000Z"
    assert elig["shortest"]["first_finding"] is True
    # a second finding does not own its run's counterexample, but is shown with it, marked so
    second = by_name["violation:alter_partition:P-ACK:"]["shortest"]
    assert (second["run_id"], second["first_finding"], second["finding"]["step"]) == ("c1-0009", False, 6)
    assert second["run_first_signature"] == "violation:alter_partition:P-ELIG:"
    # findings of runs that were not shrunk have no counterexample
    assert by_name["timeout:heartbeat::"]["shortest"] is None
    divergence = by_name["divergence:alter_partition:error:INELIGIBLE_REPLICA,NONE"]
    assert divergence["field"] == "error" and divergence["codes"] == ["INELIGIBLE_REPLICA", "NONE"]
    assert divergence["column"] == "divergence"
    assert [s["findings"] for s in summary["signatures"]] == sorted(
        (s["findings"] for s in summary["signatures"]), reverse=True)


def test_matrix_counts_runs_per_property(summary: dict[str, Any]) -> None:
    matrix = summary["matrix"]
    # P-LEAD and LeaderInIsr were checked and never broken: they have columns too
    assert matrix["columns"] == ["P-ACK", "P-ELIG", "P-LEAD", "LeaderInIsr", "divergence", "timeout", "crash",
                                 "error"]
    rows = {(r["target"], r["release"]): r for r in matrix["rows"]}
    assert rows["reference+B02", "4.1"]["cells"] == {"P-ACK": 1, "P-ELIG": 2}
    assert rows["reference+B02", "3.5"] == {"target": "reference+B02", "release": "3.5", "runs": 2,
                                            "runs_with_findings": 1, "cells": {"P-ELIG": 1},
                                            "checked": {"P-ELIG": 2, "LeaderInIsr": 2, "P-LEAD": 2}}
    assert rows["kafka-wire@127.0.0.1:9093", "3.7"]["cells"] == {"divergence": 1, "timeout": 1}
    assert rows["reference", "3.3"]["cells"] == {}
    assert [r["release"] for r in matrix["rows"] if r["target"] == "reference"] == ["3.3", "3.5", "4.1"]


def test_mutants_and_steps_to_first_finding(summary: dict[str, Any]) -> None:
    b02, n1 = summary["mutants"]
    # B02's first run (16 steps) found nothing; its second found P-ELIG at step 5
    assert (b02["mutant"], b02["runs"], b02["runs_with_findings"], b02["detected"]) == ("B02", 4, 3, True)
    assert (b02["runs_to_first_finding"], b02["steps_to_first_finding"]) == (2, 16 + 5)
    # N1's only finding is an engine error, which does not detect a mutant
    assert (n1["mutant"], n1["detected"], n1["steps_to_first_finding"]) == ("N1", False, None)
    # N1's records say it is a negative control (not being flagged is its pass); B02 is a bug
    assert (b02["negative_control"], n1["negative_control"]) == (False, True)
    assert (b02["title"], b02["ticket"]) == ("controller accepts a fenced broker", "KAFKA-13916 / KIP-841")
    assert (n1["title"], n1["ticket"]) == (None, None)


def test_the_shown_finding_is_the_counterexamples_own(summary: dict[str, Any]) -> None:
    """Run 8's record says what the run found at step 12 before shrinking; its counterexample is
    three steps long and found the same signature at step 3 — that message is the one shown."""
    elig = next(s for s in summary["signatures"] if s["signature"] == "violation:alter_partition:P-ELIG:")
    shown = elig["shortest"]
    assert (shown["run_id"], shown["finding"]["message"], shown["finding"]["step"]) == ("c1-0008", SHRUNK_MESSAGE, 3)
    assert shown["finding_of_counterexample"] is True
    bug = next(b for b in summary["bugs"] if b["bug"] == "mutant:B02")
    assert bug["shortest"]["finding"]["message"] == SHRUNK_MESSAGE


def test_findings_group_into_one_row_per_bug(summary: dict[str, Any]) -> None:
    bugs = {b["bug"]: b for b in summary["bugs"]}
    assert len(bugs) == EXPECTED["bugs"]
    b02 = bugs["mutant:B02"]
    assert (b02["kind"], b02["findings"], b02["runs"], b02["ticket"]) == ("mutant", 4, 3, "KAFKA-13916 / KIP-841")
    assert [(s["signature"], s["findings"]) for s in b02["signatures"]] == [
        ("violation:alter_partition:P-ELIG:", 3), ("violation:alter_partition:P-ACK:", 1)]
    assert bugs["error:deliver"]["runs"] == 2  # an isrcheck bug, whichever target it hit
    assert "new:kafka-wire:controller:alter_partition" in bugs
    assert "timeout:kafka-wire:heartbeat" in bugs and "crash:kafka-wire:produce" in bugs
    # unexpected findings first, planted mutants after them, isrcheck's own errors last
    kinds = [b["kind"] for b in summary["bugs"]]
    assert kinds == sorted(kinds, key=layout.BUG_KINDS.index) and kinds[-1] == "error"


def test_one_mutant_is_one_bug_whatever_signatures_it_takes(tmp_path: Path) -> None:
    """Six B01 runs, each shrunk for a different first finding (as a real B01 campaign yields),
    and a wire campaign serving B02: two bugs, one per mutant."""
    signatures = [("violation", "alter_partition", "P-ELIG", None, ()),
                  ("divergence", "alter_partition", None, "error", ("INELIGIBLE_REPLICA", "NONE")),
                  ("divergence", "alter_partition", None, "partition.isr", ()),
                  ("divergence", "alter_partition", None, "partition.partition_epoch", ()),
                  ("divergence", "alter_partition", None, "error", ("INELIGIBLE_REPLICA", "NEW_LEADER_ELECTED")),
                  ("divergence", "fence_broker", None, "partition.leader", ())]
    records = [failing(n, [finding(*parts[:3], field=parts[3], codes=parts[4])], counterexample(3 + n),
                       target="reference+B01", mutant="B01") for n, parts in enumerate(signatures)]
    wire = {"adapter": "kafka-wire,mutant=B02", "target": "kafka-wire,mutant=B02", "mutant": "B02"}
    records += [failing(9, [finding(*ELIG)], counterexample(4), **wire), make_record(10, **wire)]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    summary = summarize_files([path])
    assert summary["totals"]["signatures"] == 6
    assert [(b["bug"], len(b["signatures"]), b["runs"]) for b in summary["bugs"]] == [
        ("mutant:B01", 6, 6), ("mutant:B02", 1, 1)]
    assert summary["bugs"][0]["shortest"]["run_id"] == "c1-0000"  # the shortest of the six
    wire_mutant = next(m for m in summary["mutants"] if m["mutant"] == "B02")
    assert (wire_mutant["target"], wire_mutant["runs"], wire_mutant["detected"]) == ("kafka-wire,mutant=B02", 2, True)


def test_what_ran_properties_and_coverage(summary: dict[str, Any]) -> None:
    ran = {(r["target"], r["release"]): r for r in summary["ran"]}
    reference = ran["reference", "4.1"]
    assert (reference["runs"], reference["versions"], reference["commits"]) == (7, ["0.1.0"], ["abc123", "def456"])
    assert (reference["seed_min"], reference["seed_max"]) == (1000, 1014)  # runs 0-5 and 14
    assert ran["reference+B02", "3.5"]["versions"] == []  # its records do not say
    properties = {p["property"]: p for p in summary["properties"]}
    assert properties["P-ELIG"] == {"property": "P-ELIG", "runs_checked": 10, "runs_violated": 3, "runs_unknown": 0}
    assert properties["P-LEAD"]["runs_violated"] == 0 and properties["P-LEAD"]["runs_checked"] == 10
    assert properties["P-ACK"] == {"property": "P-ACK", "runs_checked": 0, "runs_violated": 2, "runs_unknown": 0}
    assert summary["coverage"] == [{"point": "alter_partition:INELIGIBLE_REPLICA", "runs": 3},
                                   {"point": "alter_partition:NONE", "runs": 10},
                                   {"point": "create_topic:NONE", "runs": 4}, {"point": "fence_broker", "runs": 4}]


UNKNOWN_MIX = [("P-ELIG", "P-LOG"), ("P-LOG",), ()]
"""The `unknown` of three black-box-like runs that all list P-ELIG, P-LOG and P-LEAD."""


def unknown_mix_records() -> list[dict[str, Any]]:
    listed = ["P-ELIG", "P-LOG", "P-LEAD"]
    return [make_record(n, properties=listed, unknown=list(unknown), target="kafka-cluster", release="3.9")
            for n, unknown in enumerate(UNKNOWN_MIX)]


def test_an_unknown_property_is_counted_apart_and_never_as_held(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in unknown_mix_records()), encoding="utf-8")
    summary = summarize_files([path])
    properties = {p["property"]: p for p in summary["properties"]}
    assert properties["P-LOG"] == {"property": "P-LOG", "runs_checked": 1, "runs_violated": 0, "runs_unknown": 2}
    assert properties["P-ELIG"] == {"property": "P-ELIG", "runs_checked": 2, "runs_violated": 0, "runs_unknown": 1}
    assert properties["P-LEAD"]["runs_checked"] == 3 and properties["P-LEAD"]["runs_unknown"] == 0
    [row] = summary["matrix"]["rows"]
    assert row["checked"] == {"P-ELIG": 2, "P-LOG": 1, "P-LEAD": 3}  # judged runs only


def test_distributions_and_timeline(summary: dict[str, Any]) -> None:
    steps = summary["distributions"]["steps"]
    assert (steps["min"], steps["max"]) == (0, 400)
    assert sum(b["count"] for b in steps["histogram"]) == EXPECTED["runs"]
    assert steps["histogram"][0] == {"lo": 0, "hi": 1, "count": 1}
    buckets = summary["timeline"]["buckets"]
    assert len(buckets) == EXPECTED["runs"]  # fewer runs than buckets: one run each
    assert buckets[-1]["runs_so_far"] == EXPECTED["runs"]
    assert buckets[-1]["signatures_so_far"] == EXPECTED["signatures"]
    assert sum(b["findings"] for b in buckets) == EXPECTED["findings"]


def test_corrupt_section(summary: dict[str, Any]) -> None:
    corrupt = summary["corrupt"]
    assert corrupt["lines"] == EXPECTED["corrupt_lines"]
    assert corrupt["reasons"][0] == {"reason": "not valid JSON", "lines": 3}
    assert len(corrupt["examples"]) == layout.CORRUPT_EXAMPLES
    assert corrupt["examples"][1]["line"] == 2


def test_record_content_is_kept_verbatim(summary: dict[str, Any]) -> None:
    produce = next(s for s in summary["signatures"] if s["signature"] == "violation:produce:P-ACK:")
    assert produce["shortest"]["finding"]["message"] == XSS
    assert produce["targets"] == ["ref+<b>bold</b>"]


def test_summary_file_round_trip(summary: dict[str, Any], tmp_path: Path) -> None:
    path = write_summary(summary, tmp_path / "out")
    assert load_summary(tmp_path / "out") == summary == load_summary(path)


def test_empty_input_gives_an_empty_summary(tmp_path: Path) -> None:
    (tmp_path / "runs.jsonl").write_text("")
    summary = summarize_files([tmp_path / "runs.jsonl"])
    assert summary["totals"]["runs"] == 0
    assert summary["distributions"] == {"steps": None, "duration_s": None}
    assert summary["timeline"] == {"buckets": []}
    assert summary["signatures"] == [] and summary["mutants"] == []
