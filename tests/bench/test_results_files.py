"""The tables the documentation cites are generated: a bench script given `--write PATH` writes its
table under a header naming the command, the commit and the machine, and every file under
docs/results/ carries that header (so none is hand-kept)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
HEADER = ("- command: `python3 bench/", "- commit: ", "- machine: ", "- generated: ")


def test_detect_writes_its_table_with_command_commit_and_machine(tmp_path: Path) -> None:
    out = tmp_path / "detection.md"
    done = subprocess.run(
        [sys.executable, "bench/detect.py", "--mutants", "D14,N2", "--seeds", "1", "--runs", "40", "--budget", "20",
         "--shrink-budget", "1", "--write", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    for field in HEADER:
        assert field in text, field
    assert "bench/detect.py --mutants D14,N2" in text
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=False).stdout.strip()
    assert commit and commit in text
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in text.splitlines() if re.match(r"^\| [A-Z]\d", line)}
    assert set(rows) == {"D14", "N2"}
    assert rows["D14"][2] == "1/1"  # D14 is found within 40 runs on seed 1 (a strict -1 fetch epoch, on 3.3)
    assert rows["N2"][2] == "0/1" and "negative control (clean)" in rows["N2"][-1]


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.md")), ids=lambda p: p.name)
def test_every_results_file_names_its_command_commit_and_machine(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for field in HEADER:
        assert any(line.startswith(field) for line in text.splitlines()), f"{path.name}: no {field!r} line"
