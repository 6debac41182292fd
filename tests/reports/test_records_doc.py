"""docs/records.md describes the record `isrcheck.contract.records.schema` defines: the same fields, in the
same order, required where the schema requires them."""

from __future__ import annotations

import re
from pathlib import Path

from isrcheck.contract.records import schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "records.md"


def table(section: str) -> list[list[str]]:
    """The rows of the first table under `## section` / `### section`, as lists of cell texts."""
    text = DOC.read_text(encoding="utf-8")
    start = re.search(rf"^#+ {re.escape(section)}\s*$", text, re.M)
    assert start is not None, f"no section {section!r} in docs/records.md"
    rows = []
    for line in text[start.end():].splitlines():
        if line.startswith("#"):
            break
        if line.startswith("| `"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def names(rows: list[list[str]]) -> list[str]:
    return [row[0].strip("`") for row in rows]


def test_run_record_table_matches_the_schema() -> None:
    rows = table("Run record")
    assert names(rows) == [rule.name for rule in schema.RUN.fields]
    required = {row[0].strip("`"): row[2] == "yes" for row in rows}
    assert required == {rule.name: not rule.optional for rule in schema.RUN.fields}


def test_finding_counterexample_and_step_tables_match_the_schema() -> None:
    assert names(table("Finding")) == [rule.name for rule in schema.FINDING.fields]
    assert names(table("Counterexample")) == [rule.name for rule in schema.COUNTEREXAMPLE.fields]
    checked = [rule.name for rule in schema.STEP.fields]
    assert [name for name in names(table("Step")) if name in checked] == checked


def test_the_example_is_a_valid_record() -> None:
    text = DOC.read_text(encoding="utf-8")
    example = text[text.index("```json") + len("```json"):].split("```")[0].strip()
    record, reason = schema.parse_line(example)
    assert reason is None and record is not None
