"""bench/volume.py's table is read from the records: each signature with the runs it was found in
and its triage — a known divergence's rule from the finding itself, anything else untriaged."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

BENCH = Path(__file__).resolve().parents[2] / "bench"


def volume_module() -> object:
    spec = importlib.util.spec_from_file_location("volume", BENCH / "volume.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["volume"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_table_triages_each_signature_from_its_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two campaigns' records (a KD1 double: known; the same code from another cause: a finding)
    in the layout volume.py writes; the table counts their runs and steps and names each triage."""
    monkeypatch.syspath_prepend(str(BENCH.parent / "tests" / "engine"))  # the targets of test_known_divergences
    known = run_campaign(CampaignConfig(adapter="known_divergence_targets:PartitionZeroTarget", release="3.9",
                                        examples=150, seed=1, stop_at_first=False,
                                        records_dir=tmp_path / "3.9-kafka-jvm"))
    found = run_campaign(CampaignConfig(adapter="known_divergence_targets:RefusesGrowthTarget", release="3.5",
                                        examples=30, seed=1, stop_at_first=False,
                                        records_dir=tmp_path / "3.5-kafka-local"))
    volume = volume_module()
    cells = volume.read_cells(tmp_path)  # type: ignore[attr-defined]
    records = [json.loads(line) for path in tmp_path.glob("*/*.jsonl") for line in path.read_text().splitlines()]
    adapters = {r["adapter"] for r in records}
    assert adapters == {"known_divergence_targets:PartitionZeroTarget", "known_divergence_targets:RefusesGrowthTarget"}
    kd1 = cells[("3.9", "known_divergence_targets:PartitionZeroTarget")]
    other = cells[("3.5", "known_divergence_targets:RefusesGrowthTarget")]
    assert (kd1.runs, kd1.steps) == (known.runs, known.steps) and (other.runs, other.steps) == (found.runs, found.steps)
    assert set(kd1.triage.values()) == {"known divergence: rule create-partitions-first-value-factor"}
    assert other.triage["divergence:create_partitions:error:INVALID_REPLICA_ASSIGNMENT,NONE"] == "FINDING (untriaged)"
    text = volume.table(cells)  # type: ignore[attr-defined]
    assert f"| 3.9 | known_divergence_targets:PartitionZeroTarget | 1 | {known.runs:,} | {known.steps:,} |" in text
    assert "FINDING (untriaged)" in text
