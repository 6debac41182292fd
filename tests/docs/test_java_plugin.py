"""The worked example of docs/plugins.md: a controller written in Java, speaking the exec: plug-in
protocol, is built with javac and tested by isrcheck as a user would — the correct controller runs
its campaign with nothing found, and the same source with its planted bug (`--bug`: fenced and
shutting-down brokers pass the eligibility check, KAFKA-13916) is caught by P-ELIG."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "docs" / "plugins" / "java" / "ToyController.java"

pytestmark = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                reason="needs a JDK (javac and java on PATH)")


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("toy-controller")
    subprocess.run(["javac", "-d", str(out), str(SOURCE)], check=True, timeout=120)
    assert (out / "ToyController.class").is_file()
    return out


def campaign(classes: Path, *extra: str, examples: int = 60) -> tuple[int, dict[str, object]]:
    adapter = f"exec:java -cp {classes} ToyController {' '.join(extra)}".strip()
    done = subprocess.run(
        [sys.executable, "-m", "isrcheck", "run", "--adapter", adapter, "--no-differential",
         "--examples", str(examples), "--seed", "1", "--json"],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert done.stdout.strip(), done.stderr[-2000:]
    return done.returncode, json.loads(done.stdout)


def test_the_java_controller_passes_a_campaign_judged_by_the_properties(classes: Path) -> None:
    code, summary = campaign(classes)
    assert code == 0, summary
    assert summary["runs"] >= 60 and summary["outcomes"] == {"pass": summary["runs"]}
    assert summary["steps"] > 60 * 10  # runs of many steps, not runs that stopped at the set-up
    assert summary["findings"] == {}


def test_the_planted_bug_in_the_java_controller_is_found_as_p_elig(classes: Path) -> None:
    code, summary = campaign(classes, "--bug", examples=200)
    assert code == 1, summary
    findings = summary["findings"]
    assert isinstance(findings, dict)
    assert any(signature.endswith(":P-ELIG:") or ":P-ELIG" in signature for signature in findings), findings
    assert 1 <= summary["runs"] < 200  # stopped at its first finding
