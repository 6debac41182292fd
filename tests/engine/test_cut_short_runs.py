"""Runs Hypothesis cuts short (status OVERRUN: it ran out of the choices it allowed the example)
are recorded as such (docs/records.md `cut_short`), not as ordinary passing runs."""

from __future__ import annotations

import json
from pathlib import Path

from isrcheck.conformance.engine.campaign import CUT_SHORT_OVERRUN, CampaignConfig, run_campaign
from isrcheck.conformance.engine.hypothesis_internals import example_overran


def test_cut_short_runs_are_marked_and_are_the_runs_beyond_the_examples(tmp_path: Path) -> None:
    """Seed 12, 100 examples of 20 steps: Hypothesis replays four choice sequences of its own making
    (span copies, a size-capped early example) that the runs outgrow. It does not count them as
    examples, so exactly they are the runs beyond --examples."""
    examples = 100
    result = run_campaign(CampaignConfig(level="controller", examples=examples, steps=20, seed=12,
                                         stop_at_first=False, records_dir=tmp_path))
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    cut = [r for r in records if r.get("cut_short")]
    assert len(records) == result.runs
    assert cut, "no run was cut short: the case no longer shows what it was built for"
    assert len(records) - examples == len(cut) == result.cut_short
    assert {r["cut_short"] for r in cut} == {CUT_SHORT_OVERRUN}
    assert all(r["outcome"] == "pass" for r in cut)


def test_outside_an_example_nothing_overran() -> None:
    assert example_overran() is False
