"""Cluster-level scenarios (docs/cluster-scenarios.md) through the `reference` adapter, which
dispatches by scenario level."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from isrcheck.adapters.catalogue.registry import make_target
from isrcheck.conformance.scenario.load import ScenarioFormatError, load_all, load_file
from isrcheck.conformance.scenario.run import run_scenario
from isrcheck.reference_impl.release import PROFILES

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_SCENARIOS = ROOT / "conformance" / "scenarios" / "cluster"


@pytest.mark.parametrize("release", sorted(PROFILES))
def test_shipped_cluster_scenarios_pass(release: str) -> None:
    results = [run_scenario(s, make_target("reference"), release) for s in load_all([str(CLUSTER_SCENARIOS)])]
    failed = [r.reason for r in results if r.status == "failed"]
    assert not failed, failed
    assert any(r.status == "passed" for r in results)


def run_text(tmp_path: Path, text: str, release: str = "4.1") -> list[tuple[str, str | None]]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return [(r.status, r.reason) for r in (run_scenario(s, make_target("reference"), release) for s in load_file(path))]


def test_the_reference_adapter_still_runs_controller_scenarios(tmp_path: Path) -> None:
    text = """
name: controller level through the composite
brokers: [1, 2]
steps:
  - create_topic: {topic: foo, assignment: [[1, 2]]}
  - alter_partition: {broker: 1, topic: foo, isr: [1]}
    expect: {isr: [1], partition_epoch: 1}
"""
    assert run_text(tmp_path, text) == [("passed", None)]


def test_cluster_operations_are_refused_in_controller_scenarios(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: x\nsteps:\n  - tick: {ms: 5}\n")
    with pytest.raises(ScenarioFormatError, match="cluster-level operation"):
        load_file(path)


def test_failures_and_property_expectations(tmp_path: Path) -> None:
    text = """
scenarios:
  - name: wrong expectation
    level: cluster
    brokers: [1, 2]
    steps:
      - create_topic: {topic: foo, assignment: [[1, 2]]}
      - check_leader: {topic: foo, isr: [1]}
  - name: properties hold by default, P-LIVE unchecked before heal
    level: cluster
    brokers: [1, 2]
    steps:
      - create_topic: {topic: foo, assignment: [[1, 2]]}
      - produce: {topic: foo, records: 2}
        as: {request: r}
      - tick: {ms: 1000}
      - check_produce: {request: $r, status: acked, offset: 0}
      - check_property: {name: all}
      - check_property: {name: P-LIVE, status: unchecked}
      - heal: {}
      - check_property: {name: P-LIVE}
"""
    results = run_text(tmp_path, text)
    assert results[0][0] == "failed" and "isr expected [1], got [1, 2]" in (results[0][1] or "")
    assert results[1] == ("passed", None)


def test_cli_runs_the_cluster_suite() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "isrcheck", "scenario", str(CLUSTER_SCENARIOS), "--adapter", "reference"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert " failed" in completed.stdout and "0 failed" in completed.stdout
