"""Every protocol citation in the repository resolves to docs/protocol (docs/protocol/README.md).

Code, tests and docs cite the protocol documentation as `<name>.md §N[.N…]` (controller, leader,
bugs, scenario-format, landscape), `bugs.md Bnn` and `bugs.md appendix N`. This test reads the
repository as text (it imports nothing from the project) and checks that each cited file exists
under docs/protocol and has a heading for the cited section, and that every mutant id of the
catalogue in reference_impl/mutants appears in docs/protocol/bugs.md.

Bare section references without a file name ("§2.4 row 8") cannot be resolved mechanically and are
not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "docs" / "protocol"
NAMES = ("controller", "leader", "bugs", "scenario-format", "landscape")
CODE_DIRS = ("adapters", "conformance", "reference_impl", "reports", "isrcheck", "bench", "tests")

_SECTION = r"§[ \t]*(\d+(?:\.\d+)*)"
_JOIN = r"[ \t]*(?:,|/|–|—|-|and|&)[ \t]*"
# `row 8`, `step 6`, `item 2`, `check 6` after a section: the next `, §N` still belongs to the same file.
_PART = r"(?:[ \t]+(?:rows?|steps?|items?|checks?)[ \t]+\d+(?:[–-]\d+)?)?"
# `name.md §2.4`, also with the name in backticks, across a line break (optionally into a `#` comment),
# followed by further sections of the same file: `controller.md §2.1, §9.1`, `leader.md §3–§10`.
CITATION = re.compile(
    r"(?<![\w-])(" + "|".join(re.escape(n) for n in NAMES) + r")\.md`?"
    r"[ \t]*(?:\n[ \t]*(?:#[ \t]*)?)?" + _SECTION
    + r"(" + _PART + r"(?:" + _JOIN + r"§[ \t]*\d+(?:\.\d+)*" + _PART + r")*)"
)
FURTHER_SECTION = re.compile(_SECTION)
BUG_CITATION = re.compile(r"(?<![\w-])bugs\.md`?[ \t]+(B\d{2}[A-Za-z]?)((?:" + _JOIN + r"B\d{2}[A-Za-z]?)*)")
FURTHER_BUG = re.compile(r"B\d{2}[A-Za-z]?")
APPENDIX_CITATION = re.compile(r"(?<![\w-])bugs\.md`?[ \t]+appendix[ \t]+D?(\d+)((?:" + _JOIN + r"D?\d+)*)",
                               re.IGNORECASE)
FURTHER_NUMBER = re.compile(r"\d+")
# `## 2. Title`, `### 2.4 Title`, `### §2.4 Title`
HEADING = re.compile(r"^#{1,6}[ \t]+(?:§[ \t]*)?(\d+(?:\.\d+)*)\.?(?=[ \t]|$)", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
# Catalogue entries: `Mutant("B01", ...)`, `_cluster("B03a", ...)`, or `id="B01"` / `mutant_id="B01"`.
MUTANT_ID = re.compile(r"(?:\b(?:Mutant|_cluster)\(\s*|\b(?:mutant_)?id\s*=\s*)[\"']([A-Z]\d+[A-Za-z]?)[\"']")

# Citations in code whose section does not exist in the documentation (`leader.md` has no numbered
# subsections; the intended targets are probably list items of §5, §9 and §7). They are kept here so
# the test stays green until the code is corrected; once a citation is fixed, remove its entry.


@dataclass(frozen=True)
class Citation:
    path: str
    line: int
    name: str
    """`controller`, `leader`, ... (the file is docs/protocol/<name>.md)."""
    target: str
    """`2.4` for a section, `B21` for a bug entry, `appendix 4` for an appendix item."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.path, self.name, self.target)

    @property
    def cited(self) -> str:
        return f"{self.name}.md {self.target}" if not self.target[0].isdigit() else f"{self.name}.md §{self.target}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.cited}"


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def find_citations(text: str, path: str = "<text>") -> list[Citation]:
    """Every `<name>.md §N`, `bugs.md Bnn` and `bugs.md appendix N` citation in `text`."""
    found: list[Citation] = []
    for m in CITATION.finditer(text):
        line = _line(text, m.start())
        for section in [m.group(2), *FURTHER_SECTION.findall(m.group(3))]:
            found.append(Citation(path, line, m.group(1), section))
    for m in BUG_CITATION.finditer(text):
        line = _line(text, m.start())
        for bug in [m.group(1), *FURTHER_BUG.findall(m.group(2))]:
            found.append(Citation(path, line, "bugs", bug))
    for m in APPENDIX_CITATION.finditer(text):
        line = _line(text, m.start())
        for item in [m.group(1), *FURTHER_NUMBER.findall(m.group(2))]:
            found.append(Citation(path, line, "bugs", f"appendix {item}"))
    return found


def section_headings(markdown: str) -> set[str]:
    """The section numbers of a document's headings (`## 2. …` → `2`, `### 2.4 …` → `2.4`)."""
    return set(HEADING.findall(FENCE.sub("", markdown)))


def bug_entries(markdown: str) -> set[str]:
    """`B01`, … for every `### Bnn …` heading of bugs.md."""
    return set(re.findall(r"^#{2,6}[ \t]+(B\d{2})\b", FENCE.sub("", markdown), re.MULTILINE))


def appendix_items(markdown: str) -> set[str]:
    """The numbers of the numbered list in bugs.md's Appendix section."""
    match = re.search(r"^##[ \t]+Appendix\b.*?(?=^##[ \t]|\Z)", markdown, re.MULTILINE | re.DOTALL | re.IGNORECASE)
    return set(re.findall(r"^(\d+)\.[ \t]", match.group(0), re.MULTILINE)) if match else set()


def unresolved(citations: list[Citation], docs: Path = PROTOCOL) -> list[Citation]:
    """The citations whose file is not under `docs` or has no heading / entry / item for the target."""
    files = {name: docs / f"{name}.md" for name in NAMES}
    texts = {name: path.read_text(encoding="utf-8") for name, path in files.items() if path.is_file()}
    missing = []
    for citation in citations:
        text = texts.get(citation.name)
        if text is None:
            missing.append(citation)
        elif citation.target.startswith("appendix "):
            if citation.target.split()[1] not in appendix_items(text):
                missing.append(citation)
        elif citation.target.startswith("B"):
            if citation.target[:3] not in bug_entries(text):
                missing.append(citation)
        elif citation.target not in section_headings(text):
            missing.append(citation)
    return missing


def scanned_files() -> list[Path]:
    files = [p for d in CODE_DIRS if (ROOT / d).is_dir() for p in sorted((ROOT / d).rglob("*.py"))]
    files += sorted((ROOT / "docs").rglob("*.md"))
    if (ROOT / "README.md").is_file():
        files.append(ROOT / "README.md")
    return files


def repository_citations() -> list[Citation]:
    citations: list[Citation] = []
    for path in scanned_files():
        citations += find_citations(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    return citations


# ------------------------------------------------------------------------------ the repository


@pytest.mark.parametrize("name", NAMES)
def test_protocol_file_exists(name: str) -> None:
    assert (PROTOCOL / f"{name}.md").is_file(), f"docs/protocol/{name}.md is missing"


def test_repository_has_citations() -> None:
    names = {c.name for c in repository_citations()}
    assert {"controller", "leader", "bugs", "landscape"} <= names, names


def test_every_citation_resolves() -> None:
    broken = unresolved(repository_citations())
    assert not broken, "citations with no matching file or heading in docs/protocol:\n" + "\n".join(
        map(str, broken))


def catalogue_ids() -> set[str]:
    ids: set[str] = set()
    for path in sorted((ROOT / "reference_impl" / "mutants").glob("*.py")):
        ids |= set(MUTANT_ID.findall(path.read_text(encoding="utf-8")))
    return ids


def test_every_mutant_id_is_documented() -> None:
    ids = catalogue_ids()
    assert len(ids) >= 10, f"expected the mutant catalogue's ids, found {sorted(ids)}"
    bugs = (PROTOCOL / "bugs.md").read_text(encoding="utf-8")
    missing = sorted(i for i in ids if not re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", bugs))
    assert not missing, f"mutant ids of reference_impl/mutants not in docs/protocol/bugs.md: {missing}"


# ------------------------------------------------------------------------------ the parser


def test_parser_reports_a_made_up_section() -> None:
    made_up = "controller.md " + "§99.9"  # split so this file does not cite it
    text = (
        '"""The controller (controller.md §2.4 row 8, §2.5) and the leader (leader.md §3–§10).\n'
        f"A wrong one: {made_up}; a bug: bugs.md B21; a derived mutant: bugs.md appendix 4.\n"
        '"""\n'
    )
    citations = find_citations(text, "fabricated.py")
    assert [(c.name, c.target, c.line) for c in citations] == [
        ("controller", "2.4", 1), ("controller", "2.5", 1), ("leader", "3", 1), ("leader", "10", 1),
        ("controller", "99.9", 2), ("bugs", "B21", 2), ("bugs", "appendix 4", 2),
    ]
    missing = unresolved(citations)
    assert [str(c) for c in missing] == [f"fabricated.py:2: {made_up}"]


def test_parser_reports_a_missing_file_bug_and_appendix_item(tmp_path: Path) -> None:
    (tmp_path / "controller.md").write_text("# Title\n\n## 2. AlterPartition\n\n### 2.4 Validation\n")
    (tmp_path / "bugs.md").write_text("## T1\n\n### B01 — x\n\n## Appendix — derived\n\n1. one\n2. two\n")
    text = ("controller.md §2.4; controller.md §2; leader.md §1; bugs.md B01, B02; "
            "bugs.md appendix 2; bugs.md appendix 3")
    missing = unresolved(find_citations(text), docs=tmp_path)
    assert [c.cited for c in missing] == ["leader.md §1", "bugs.md B02", "bugs.md appendix 3"]


def test_headings_are_numbered_sections_outside_code_fences() -> None:
    markdown = "# 1 Title\n## 2. Top\n### 2.4 Sub\n#### §9.3 Marked\n## Legend\n```\n## 7. not a heading\n```\n"
    assert section_headings(markdown) == {"1", "2", "2.4", "9.3"}


def test_citation_across_a_comment_line_break() -> None:
    text = "x = 1  # see controller.md\n# §4.4 for the rule\n"
    assert [(c.name, c.target, c.line) for c in find_citations(text)] == [("controller", "4.4", 1)]


def test_catalogue_ids_are_read_from_entries() -> None:
    source = 'Mutant("B01", "t", "s", (), "controller")\n_cluster("D7", "t")\nMutant(id="N1")\n# B99 in a comment\n'
    assert set(MUTANT_ID.findall(source)) == {"B01", "D7", "N1"}
