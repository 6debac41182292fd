"""Every benchmark under bench/ at least starts: it parses its options and prints its help (a
benchmark that only breaks when someone finally runs it is a figure nobody can reproduce)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_benchmark_prints_its_help(script: str) -> None:
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                          timeout=120, check=False, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
