"""The pytest plugin: `conformance_test` builds a test pytest collects; it passes on the
reference and fails (with the shrunk program and the finding) on a mutant, also under xdist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TEST_FILE = """
from isrcheck.pytest_plugin import conformance_test

TestReference = conformance_test("reference", release="4.1", max_examples=15, steps=20)
TestMutant = conformance_test("reference", release="4.1", mutant="B02", max_examples=300, steps=30)
"""


def test_conformance_test_passes_on_reference_and_fails_on_a_mutant(tmp_path: Path) -> None:
    (tmp_path / "test_user_suite.py").write_text(TEST_FILE)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "1 failed, 1 passed" in output
    assert "TestMutant" in output and "FindingFailure" in output
    assert "state = Conformance_reference+B02()" in output or "Conformance_reference" in output
