"""docs/properties.md is the glossary of every property id: each id the code judges has an entry,
each entry is a property the code judges, and the glossary's table says truthfully where each is
judged (white-box on the simulated cluster, black-box on a cluster's history, black-box on a
controller's answers). The README defines the ids before it uses them, by linking the glossary."""

from __future__ import annotations

import re
from pathlib import Path

from isrcheck.conformance.properties.catalogue import (
    ALL_PROPERTIES,
    BLACK_BOX,
    CONTROLLER_PROPERTIES,
    GROUND_TRUTH_ONLY,
)
from isrcheck.reference_impl.mutants import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "docs" / "properties.md"
PROPERTY_ID = re.compile(r"\bP-[A-Z0-9]+[A-Z0-9]\b|\bLeaderInIsr\b")
ENTRY = re.compile(r"^## (\S+) — ", re.MULTILINE)


def ids_in_code() -> set[str]:
    """Every property id a finding can carry: the judged sets, `property="..."` literals in the
    checks, and what the mutant catalogue says each mutant breaks."""
    ids = {*ALL_PROPERTIES, *CONTROLLER_PROPERTIES, *BLACK_BOX, *GROUND_TRUTH_ONLY}
    ids |= {p for m in CATALOGUE.values() for p in m.breaks}
    for path in (ROOT / "conformance" / "properties").glob("*.py"):
        for match in re.finditer(r"(?:property=|Violation\()\s*\"([^\"]+)\"", path.read_text()):
            ids.add(match.group(1))
    return ids


def glossary_table() -> dict[str, list[str]]:
    rows = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and PROPERTY_ID.fullmatch(cells[0]):
            rows[cells[0]] = cells
    return rows


def test_every_property_in_the_code_has_a_glossary_entry_and_every_entry_is_judged() -> None:
    entries = set(ENTRY.findall(GLOSSARY.read_text(encoding="utf-8")))
    code = ids_in_code()
    assert code - entries == set(), f"judged but not in docs/properties.md: {sorted(code - entries)}"
    assert entries - code == set(), f"in docs/properties.md but judged nowhere: {sorted(entries - code)}"
    assert set(glossary_table()) == entries


def test_the_glossary_table_says_where_each_property_is_judged() -> None:
    table = glossary_table()
    column = {name: {pid for pid, cells in table.items() if cells[index] == "yes"}
              for index, name in ((2, "white"), (3, "cluster"), (4, "controller"))}
    assert column["white"] == set(ALL_PROPERTIES)
    assert column["cluster"] == set(BLACK_BOX)
    assert column["controller"] == set(CONTROLLER_PROPERTIES)
    assert column["white"] - column["cluster"] == set(GROUND_TRUTH_ONLY)


def test_the_readme_links_the_glossary_before_it_uses_a_property_id() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_use = PROPERTY_ID.search(readme)
    link = readme.find("docs/properties.md")
    assert link != -1, "README does not link docs/properties.md"
    assert first_use is None or link < first_use.start(), (
        f"README uses {first_use.group(0)} before it links the glossary")


def test_a_missing_entry_is_seen() -> None:
    """The entry pattern finds the glossary's headings (so the comparison above compares ids)."""
    assert ENTRY.findall("## P-ACK — acknowledged records survive\n## LeaderInIsr — the leader\n") == [
        "P-ACK", "LeaderInIsr"]
    assert "P-FENCE" in ids_in_code() and "P-HWC" in ids_in_code()
