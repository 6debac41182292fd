"""Malformed scenario files are usage errors naming file, scenario and step (scenario-format.md,
"Results and errors"): exit 2, one line, no traceback, nothing runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOOD_STEP = "  - create_topic: {topic: foo, assignment: [[1, 2, 3]]}\n"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "isrcheck", "scenario", *args], capture_output=True, text=True, timeout=60
    )


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("name: x\nbrokers: [1,2,3]\nsteps:\n  - launch_rocket: {}\n", "step 1: unknown operation 'launch_rocket'"),
        ("name: x\nsteps:\n" + GOOD_STEP + "  - check_partition: {topic: foo, colour: red}\n",
         "step 2 (check_partition): unknown argument 'colour'"),
        ("name: x\nsteps:\n  - alter_partition: {broker: one, topic: foo, isr: [1]}\n",
         "step 1 (alter_partition): argument 'broker': expected int"),
        ("name: x\nsteps:\n  - alter_partition: {broker: 1, topic: foo, isr: [1, [2, $nope]]}\n",
         "unknown capture $nope"),
        ("name: x\nsteps:\n  - alter_partition: {broker: 1, topic: foo, isr: [1]}\n    expect: {error: NOT_AN_ERROR}\n",
         "unknown error name 'NOT_AN_ERROR'"),
        ("name: x\nsteps:\n  - alter_partition: {broker: 1, topic: foo, isr: [1]}\n    expect: {colour: 1}\n",
         "'expect' names 'colour'"),
        ("name: x\nflavour: 1\nsteps:\n" + GOOD_STEP, "unknown key(s) flavour"),
        ("name: x\nconfig: {turbo: true}\nsteps:\n" + GOOD_STEP, "'config': unknown key 'turbo'"),
        ("name: x\nkafka: 'about 3'\nsteps:\n" + GOOD_STEP, "bad release specifier"),
        ("name: x\nsteps:\n  - {create_topic: {topic: a, assignment: [[1]]}, register_broker: {broker: 1}}\n",
         "needs exactly one operation key"),
        ("name: x\nsteps: [\n", "not valid YAML"),
        ("- just\n- a list\n", "top level must be"),
        ("steps:\n" + GOOD_STEP, "'name' is required"),
    ],
)
def test_malformed_file_is_a_usage_error(tmp_path: Path, body: str, fragment: str) -> None:
    path = write(tmp_path, body)
    result = run_cli(str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert fragment in result.stderr
    assert str(path) in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == "", "nothing may run when a file is malformed"


def test_a_malformed_file_stops_every_file_from_running(tmp_path: Path) -> None:
    good = write(tmp_path, "name: fine\nbrokers: [1, 2, 3]\nsteps:\n" + GOOD_STEP, "a.yaml")
    bad = write(tmp_path, "name: broken\nsteps:\n  - nonsense: {}\n", "b.yaml")
    result = run_cli(str(good), str(bad))
    assert result.returncode == 2
    assert "scenario 'broken': step 1" in result.stderr
    assert "PASS" not in result.stdout


def test_missing_file_and_unknown_release_and_adapter(tmp_path: Path) -> None:
    assert run_cli(str(tmp_path / "absent.yaml")).returncode == 2
    path = write(tmp_path, "name: fine\nbrokers: [1]\nsteps:\n  - create_topic: {topic: a, assignment: [[1]]}\n")
    unknown_release = run_cli(str(path), "--kafka", "2.8")
    assert unknown_release.returncode == 2 and "unknown Kafka release '2.8'" in unknown_release.stderr
    unknown_adapter = run_cli(str(path), "--adapter", "zookeeper")
    assert unknown_adapter.returncode == 2 and "unknown adapter 'zookeeper'" in unknown_adapter.stderr
