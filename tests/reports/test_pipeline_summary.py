"""The main job leaves summary.json beside its report, so `isrcheck report OUT/summary` renders
it again (and other tools read it) without summarizing the records a second time.

The campaigns and the Spark summary are stood in for (records from the fixture, summarized in
plain Python): what is tested is what the command writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports.plain_summary import summarize_files
from report_fixtures import write_fixture

import isrcheck.commands.pipeline as pipeline_command
from isrcheck.cli import main


def test_the_pipeline_writes_summary_json_next_to_its_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    made: dict[str, Any] = {}

    def campaigns(plan: Any, report: Any) -> list[Any]:
        write_fixture(plan.out / "records")
        return []

    def summarize(files: list[Path], summary_dir: Path, master: str | None, conf: dict[str, str]) -> dict[str, Any]:
        made.update(summarize_files(files))
        return made

    monkeypatch.setattr(pipeline_command, "run_jobs", campaigns)
    monkeypatch.setattr(pipeline_command, "summarize_with_spark", summarize)
    assert main(["pipeline", "--out", str(out)]) == 0
    written = json.loads((out / "summary" / "summary.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(made)) and written["totals"]["runs"] > 0
    assert main(["report", str(out / "summary"), "-o", str(tmp_path / "again.html")]) == 0
    again = (tmp_path / "again.html").read_text(encoding="utf-8")
    assert all(entry["signature"] in again for entry in written["signatures"])
