"""The reference against itself at the cluster level steps one simulation, not two identical ones
(`Run.shared`), and finds exactly what two would: the same verdicts, of the same kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.reference.cluster_target import ReferenceClusterTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.run import Run, cluster_run
from isrcheck.conformance.engine.targets import cluster_options, engine_cluster
from isrcheck.conformance.generator.cluster_machine import CLUSTER_CONFIG
from isrcheck.contract.operations.step import Step
from isrcheck.reference_impl.mutants import CATALOGUE


def counting_executes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = ReferenceClusterTarget.execute

    def execute(self: ReferenceClusterTarget, op: str, args: Any) -> Any:
        calls.append(op)
        return original(self, op, args)

    monkeypatch.setattr(ReferenceClusterTarget, "execute", execute)
    return calls


def test_the_reference_against_itself_steps_one_simulation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = counting_executes(monkeypatch)
    result = run_campaign(CampaignConfig(level="cluster", examples=5, steps=10, seed=1, stop_at_first=False,
                                         records_dir=tmp_path))
    assert result.runs == 5 and not result.signatures
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(calls) == sum(record["steps"] for record in records)  # once per step, not twice


def test_a_mutant_still_runs_beside_its_own_reference(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = counting_executes(monkeypatch)
    run_campaign(CampaignConfig(level="cluster", mutant="N2", examples=5, steps=10, seed=1, stop_at_first=False,
                                records_dir=tmp_path))
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(calls) == 2 * sum(record["steps"] for record in records)


def replay(run: Run, steps: list[dict[str, Any]]) -> Run:
    for step in steps:
        if run.step(Step(0, step["op"], step["args"], None, {}, None)):
            break
    return run


def opened(options: dict[str, Any]) -> ReferenceClusterTarget:
    target = engine_cluster(**options)
    target.open("4.1", CLUSTER_CONFIG)
    return target


def test_a_shared_simulation_reports_what_two_report(tmp_path: Path) -> None:
    """A property broken by the shared simulation is the target's violation, with the same
    signature, kind and step as when a separate target ran beside the reference."""
    run_campaign(CampaignConfig(level="cluster", mutant="B03a", examples=40, steps=40, seed=0, stop_at_first=False,
                                records_dir=tmp_path))
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    found = next(r for r in records if r["findings"])
    steps = found["counterexample"]["steps"]
    options = cluster_options(CATALOGUE["B03a"])
    apart = replay(cluster_run(opened({}), opened(options), "4.1"), steps)
    mutant = opened(options)
    shared = replay(cluster_run(mutant, mutant, "4.1"), steps)
    assert shared.shared and not apart.shared
    assert apart.findings and apart.findings[0].kind == "violation"
    assert [f.to_json() for f in shared.findings] == [f.to_json() for f in apart.findings]
    assert all(step.target == step.reference for step in shared.trace)
