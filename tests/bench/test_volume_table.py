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
    if str(BENCH) not in sys.path:  # as `python bench/volume.py` runs it: its neighbours importable
        sys.path.insert(0, str(BENCH))
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
    cells = volume.read_cells([tmp_path])  # type: ignore[attr-defined]
    records = [json.loads(line) for path in tmp_path.glob("*/*.jsonl") for line in path.read_text().splitlines()]
    adapters = {r["adapter"] for r in records}
    assert adapters == {"known_divergence_targets:PartitionZeroTarget", "known_divergence_targets:RefusesGrowthTarget"}
    kd1 = cells[("3.9", "known_divergence_targets:PartitionZeroTarget")]
    other = cells[("3.5", "known_divergence_targets:RefusesGrowthTarget")]
    assert (kd1.runs, kd1.steps) == (known.runs, known.steps) and (other.runs, other.steps) == (found.runs, found.steps)
    assert set(kd1.triage.values()) == {"known divergence: rule create-partitions-first-value-factor"}
    assert other.triage["divergence:create_partitions:error:INVALID_REPLICA_ASSIGNMENT,NONE"] == "FINDING (untriaged)"
    text = volume.table(cells)  # type: ignore[attr-defined]
    assert f"| 3.9 | known_divergence_targets:PartitionZeroTarget | 1 (1) | {known.runs:,} | {known.steps:,} |" in text
    assert "FINDING (untriaged)" in text


def test_a_qualify_directory_gives_its_verdict_and_runs_and_is_written_with_its_origin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--table DIR --write PATH` on an `isrcheck qualify --out DIR`: the verdict line and the
    campaign's runs come from what qualify wrote, under docs/results' header."""
    from isrcheck.reports.plain_summary import summarize_files

    from isrcheck import cli
    from isrcheck.commands import qualify
    monkeypatch.setattr(qualify, "summarize_with_spark", lambda files, out, master, conf: summarize_files(files))
    monkeypatch.setattr(qualify, "check_spark", lambda master: None)
    out = tmp_path / "q"
    assert cli.main(["qualify", "--adapter", "reference+B02", "--kafka", "3.9", "--budget", "20", "--seed", "1",
                     "--out", str(out)]) == 1
    ran = json.loads((out / "qualify.json").read_text())
    runs = ran["campaigns"]["controller"]["runs"]
    written = tmp_path / "volume.md"
    assert volume_module().main(["--table", str(out), "--write", str(written)]) == 0  # type: ignore[attr-defined]
    text = written.read_text()
    assert "- commit: " in text and "- machine: " in text
    (row,) = [line for line in text.splitlines() if line.startswith("| 3.9 | reference+B02 | **")]
    s = ran["scenarios"]
    assert "**new finding**" in row and f"| {s['passed']} / {s['failed']} / {s['skipped']} |" in row
    assert f"controller: {runs:,} runs" in row
    cell_rows = [line for line in text.splitlines() if line.startswith("| 3.9 | reference+B02 | 1 (")]
    assert cell_rows and all(f"| {runs:,} |" in line for line in cell_rows)
    assert any("FINDING (untriaged)" in line for line in cell_rows)
    assert volume_module().main(["--table", str(tmp_path / "absent")]) == 2  # type: ignore[attr-defined]


def test_the_kafka_14139_triage_rule_reads_the_run_not_the_signature() -> None:
    """The generated KAFKA-14139 run on 3.3.2 (docs/evidence) matches; the same history on a release
    with KIP-903 does not; nor does another loss with the same P-ACK signature (the equal-epoch loss
    on 3.3.2, where nothing restarted with an empty disk)."""
    volume_module()  # puts bench/ on the path, as `python bench/volume.py` has it
    from volume_triage import stale_expansion_of_an_emptied_replica as rule  # type: ignore[import-not-found]

    evidence = BENCH.parent / "docs" / "evidence"
    found = json.loads((evidence / "kip903-generated-3.3.record.json").read_text())
    assert {f["property"] for f in found["findings"]} >= {"P-ACK"}
    assert rule(found)
    assert not rule({**found, "release": "3.5"})
    entries = json.loads((evidence / "equal-epoch-defaults-3.3" / "history.json").read_text())
    entries = entries.get("entries", entries) if isinstance(entries, dict) else entries
    other = {**found, "history": {"config": found["history"]["config"], "entries": entries}}
    assert not rule(other)
    cut_healed_first = list(found["history"]["entries"])
    release = next(i for i, e in enumerate(cut_healed_first)
                   if e["type"] == "op" and e["op"] == "release_api")
    leader = cut_healed_first[release]["args"]["broker"]
    cut_healed_first.insert(release, {"type": "op", "i": -1, "t": 0, "op": "net",
                                      "args": {"broker": leader, "link": "replication", "mode": "heal"}, "result": {}})
    assert not rule({**found, "history": {**found["history"], "entries": cut_healed_first}})
