"""The README and the user docs are written for readers outside the project: they cite no issue of
the project's own tracker ("issue 18") and date no measurement by a clock window ("05:22–05:26
UTC"): a figure names the command, commit and load it came from (docs/results/ is generated so).
External trackers are named with their project (Hypothesis "issue #4206", Apache Fluss "issue
3698" in docs/protocol/) and are fine; log lines quoted as evidence keep their timestamps."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRACKER = re.compile(r"\b[Ii]ssues?\s+\d+")
CLOCK_WINDOW = re.compile(r"\b\d{1,2}:\d{2}(?:\s*[–-]\s*\d{1,2}:\d{2})?\s*UTC\b")


def documents() -> list[Path]:
    docs = ROOT / "docs"
    return [ROOT / "README.md", *sorted(docs.glob("*.md")), *sorted((docs / "evidence").glob("*.md"))]


def offending(text: str) -> list[str]:
    return [m.group(0) for pattern in (TRACKER, CLOCK_WINDOW) for m in pattern.finditer(text)]


def test_no_tracker_issue_numbers_or_clock_windows_in_the_user_docs() -> None:
    found = [f"{p.relative_to(ROOT)}: {hit!r}" for p in documents()
             for hit in offending(p.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_the_patterns_catch_what_they_are_for() -> None:
    assert offending("Performance (issue 18: engine)") == ["issue 18"]
    assert offending("measured 2026-11-25 05:22–05:26 UTC, load 1") == ["05:22–05:26 UTC"]
    assert offending("One run, 08:37 UTC, after") == ["08:37 UTC"]
    assert offending("07:43:48 [Controller 1] Fencing broker 103; an ISO time in UTC; Hypothesis issue #4206") == []
