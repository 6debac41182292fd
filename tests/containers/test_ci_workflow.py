"""The CI workflow a user copies (docs/ci/github-actions.yml) runs here as written: for its
`apache/kafka:3.9.0` matrix entry, every `run:` step but the install (the environment this test runs
in) — the image step, which must not pull an image that is there, and the qualify step — with only
the matrix values filled in and a shorter budget through the workflow's own ISRCHECK_BUDGET."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.docker_images import IMAGES, require

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "docs" / "ci" / "github-actions.yml"
ENTRY = {"kafka": "3.9.0", "adapter": "kafka-docker"}


def applies(step: dict[str, Any], entry: dict[str, str]) -> bool:
    """The workflow's `if:` conditions on the adapter, evaluated for one entry."""
    condition = str(step.get("if", "")).strip()
    if not condition:
        return True
    wanted = f"startsWith(matrix.adapter, '{entry['adapter'].split(',')[0]}')"
    if condition == wanted:
        return True
    if condition == f"!{wanted}":
        return False
    return not condition.startswith("startsWith(") and not condition.startswith("!startsWith(")


def filled(command: str, entry: dict[str, str]) -> str:
    for key, value in entry.items():
        command = command.replace("${{ matrix." + key + " }}", value)
    assert "${{" not in command, command
    return command


@pytest.mark.docker
@pytest.mark.slow
def test_the_workflow_qualifies_the_39_image_as_written(tmp_path: Path) -> None:
    require(IMAGES["3.9"])
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["conformance"]
    assert ENTRY in job["strategy"]["matrix"]["include"]
    steps = [s for s in job["steps"] if "run" in s and s.get("name") != "Install" and applies(s, ENTRY)]
    assert [s["name"].split(" ")[0] for s in steps] == ["The", "Qualify"]
    env = {**os.environ, **{k: str(v) for k, v in job["env"].items()}, "ISRCHECK_BUDGET": "240"}
    for step in steps:
        done = subprocess.run(["bash", "-e", "-c", filled(step["run"], ENTRY)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=3600, check=False)
        assert done.returncode == 0, f"{step['name']}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert "Pulling" not in done.stdout + done.stderr
    verdict = json.loads((tmp_path / "out" / "qualify.json").read_text())
    assert verdict["scenarios"]["passed"] >= 100 and verdict["scenarios"]["failed"] == 0
    assert verdict["campaigns"]["controller"]["runs"] > 0
    assert (tmp_path / "out" / "junit.xml").stat().st_size > 0 and (tmp_path / "out" / "report.html").is_file()
