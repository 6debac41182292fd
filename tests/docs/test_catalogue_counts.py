"""Counts of mutants in the README and docs come from the catalogue: a sentence that says "28
mutants", "7 cluster-level mutants", "4 negative controls" or "30 mutant campaigns" must say what
`isrcheck mutants` lists today (the main job's campaigns: every mutant at its own level, plus the
controller mutants it also serves over the wire). Generated files (docs/results/) say what their
run covered and are left out."""

from __future__ import annotations

import re
from pathlib import Path

from isrcheck.reference_impl.mutants import CATALOGUE

from isrcheck.pipeline import WIRE_MUTANTS

ROOT = Path(__file__).resolve().parents[2]
WORDS = {w: n for n, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
WORDS |= {f"twenty-{w}": 20 + n for w, n in list(WORDS.items())[1:10]} | {"thirty": 30}
NUMBER = r"(\d+|" + "|".join(sorted(WORDS, key=len, reverse=True)) + r")"
NOT_A_COUNT = r"(?<!\bthe )(?<!\bthese )(?<!\bthose )(?<!\bfirst )(?<!\blast )(?<!\bof )"
"""`the three mutants`, `the first three mutants`: a subset named before, not a count of the catalogue
(`12 of 30 mutants` is OF_MUTANTS's)."""
MUTANTS = re.compile(NOT_A_COUNT + r"\b" + NUMBER
                     + r"(?:/(\d+))?\s+(controller-level\s+|cluster-level\s+)?mutants\b(?!\s+campaigns)",
                     re.IGNORECASE)
OF_MUTANTS = re.compile(NUMBER + r"\s+of\s+(?:the\s+)?" + NUMBER + r"\s+mutants\b(?!\s+campaigns)", re.IGNORECASE)
LEVEL_SPLIT = re.compile(r"mutants\b[^.]{0,40}?" + NUMBER + r"\s+at the controller level,\s+" + NUMBER
                         + r"\s+at the cluster level", re.IGNORECASE)
CONTROLS = re.compile(NUMBER + r"\s+negative controls\b", re.IGNORECASE)
CAMPAIGNS = re.compile(NUMBER + r"(?:/(\d+))?\s+(?:of\s+(?:the\s+)?" + NUMBER + r"\s+)?mutant campaigns\b",
                       re.IGNORECASE)


def value(token: str) -> int:
    return int(token) if token.isdigit() else WORDS[token.lower()]


def catalogue_counts() -> dict[str, int]:
    mutants = [m for m in CATALOGUE.values() if not m.negative_control]
    return {
        "mutants": len(mutants),
        "controller": sum(m.level == "controller" for m in mutants),
        "cluster": sum(m.level == "cluster" for m in mutants),
        "controls": sum(m.negative_control for m in CATALOGUE.values()),
        "campaigns": len(mutants) + len(WIRE_MUTANTS),
    }


def disagreements(text: str, counts: dict[str, int]) -> list[str]:
    text = re.sub(r"\s+", " ", text)
    wrong = []
    for m in MUTANTS.finditer(text):
        level = (m.group(3) or "").strip().removesuffix("-level")
        expected = counts[level or "mutants"]
        said = value(m.group(2)) if m.group(2) else value(m.group(1))
        if said != expected:
            wrong.append(f"{m.group(0)!r}: the catalogue has {expected}")
    for m in OF_MUTANTS.finditer(text):
        if value(m.group(2)) != counts["mutants"]:
            wrong.append(f"{m.group(0)!r}: the catalogue has {counts['mutants']}")
    for m in LEVEL_SPLIT.finditer(text):
        if (value(m.group(1)), value(m.group(2))) != (counts["controller"], counts["cluster"]):
            wrong.append(f"{m.group(0)!r}: the catalogue has {counts['controller']} and {counts['cluster']}")
    for m in CONTROLS.finditer(text):
        if value(m.group(1)) != counts["controls"]:
            wrong.append(f"{m.group(0)!r}: the catalogue has {counts['controls']}")
    for m in CAMPAIGNS.finditer(text):
        total = m.group(2) or m.group(3) or m.group(1)
        if value(total) != counts["campaigns"]:
            wrong.append(f"{m.group(0)!r}: the main job runs {counts['campaigns']}")
    return wrong


def documents() -> list[Path]:
    return [ROOT / "README.md", *(p for p in sorted((ROOT / "docs").rglob("*.md")) if "results" not in p.parts)]


def test_counts_in_the_readme_and_docs_agree_with_the_catalogue() -> None:
    counts = catalogue_counts()
    wrong = [f"{path.relative_to(ROOT)}: {w}" for path in documents()
             for w in disagreements(path.read_text(encoding="utf-8"), counts)]
    assert not wrong, "\n".join(wrong)


def test_the_readme_states_the_catalogue_counts() -> None:
    """The README says how many mutants there are (so the check above has something to check)."""
    text = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert MUTANTS.search(text) and LEVEL_SPLIT.search(text) and CONTROLS.search(text)


def test_a_wrong_count_is_caught() -> None:
    counts = {"mutants": 28, "controller": 7, "cluster": 21, "controls": 4, "campaigns": 30}
    assert disagreements("finds all twenty-one on all five", counts) == []  # not a count of mutants
    assert disagreements("what holds across the three mutants, the first three mutants, these two mutants",
                         counts) == []
    assert len(disagreements("It finds all 30 mutants.", counts)) == 1
    assert len(disagreements("28/28 mutants and twenty-one cluster-level mutants", counts)) == 0
    assert len(disagreements("27/28 mutants found", counts)) == 0  # found of the right total
    assert len(disagreements("26/27 mutants found", counts)) == 1
    assert len(disagreements("25 of 28 mutants; 3 negative controls", counts)) == 1
    assert len(disagreements("holds 28 mutants — 7 at the controller level, 22 at the cluster level", counts)) == 1
    assert len(disagreements("12 of 30 mutant campaigns found theirs, 30/30 mutant campaigns", counts)) == 0
    assert len(disagreements("28 mutant campaigns", counts)) == 1
