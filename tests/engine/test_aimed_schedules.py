"""The cluster machine's aimed fault schedules (conformance/generator/aimed_schedules.py) and the
window's reboot: generation now finds the cluster mutants it never found before (B27, D6, B06,
B01L, B07, D4 — each was 0/5 seeds in bench/detect.py before these schedules — and the controller
mutants D1, B14, B04 and B01 run under the simulated cluster), and B08b and D9 within a few runs, naming a
property the catalogue says the mutant breaks; with the aimed schedules switched off (the `aimed` idea),
the same seeds and runs find none of those they are aimed at; and the reference, which runs every
schedule, is never flagged."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, CampaignResult, run_campaign
from isrcheck.conformance.generator.cluster_machine import AIMED, OPERATION, SWARM_KINDS, ClusterMachine
from isrcheck.reference_impl.mutants import CATALOGUE

SEEDS = {"B27": 1, "D6": 1, "B06": 3001, "B01L": 2001, "B07": 1, "D4": 1, "D1": 1, "B14": 1, "B08b": 1, "D9": 1,
         "B04": 1001, "B01": 2001, "B21L": 3001}
"""bench/detect.py's seeds (1 is the one the main job uses; B06, B01L, B04 and B01 need more runs on it than these)."""
RUNS = {"B27": 25, "D6": 15, "B06": 45, "B01L": 15, "B07": 15, "D4": 15, "D1": 15, "B14": 15, "B08b": 15, "D9": 15,
        "B04": 15, "B01": 15, "B21L": 15}
"""Runs per campaign: more than the seed needs."""


def campaign(mutant: str | None, runs: int, seed: int) -> CampaignResult:
    release = "4.1" if mutant is None else CATALOGUE[mutant].release or "4.1"
    return run_campaign(CampaignConfig(
        mutant=mutant, level="cluster", release=release, examples=runs, seed=seed, steps=40, shrink_budget_s=1,
    ))


@pytest.fixture
def without_aimed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The default ideas less `aimed`, restored afterwards: other tests in this process (xdist
    runs many in one) must see the default, which leaves targeted search off."""
    monkeypatch.setattr(ClusterMachine, "ideas", ClusterMachine.ideas - {"aimed"})
    yield


def test_the_aimed_actions_are_swarm_kinds_with_a_target_operation() -> None:
    """Each can be left out of a run (swarm) and switched off (the idea), and a target that
    refuses the operation it rests on is not sent it. `slow_follower` is no swarm kind: one more
    would widen the run's swarm draw and change what every seed draws (it took one of `events`'
    slots instead, ACTION_WEIGHTS)."""
    assert set(SWARM_KINDS) >= AIMED - {"slow_follower"}
    assert "slow_follower" in AIMED and "slow_follower" not in SWARM_KINDS
    assert set(OPERATION) >= AIMED


@pytest.mark.parametrize("mutant", sorted(RUNS))
def test_generation_finds_the_mutant(mutant: str) -> None:
    result = campaign(mutant, RUNS[mutant], SEEDS[mutant])
    assert result.signatures, f"{mutant} was not found in {result.runs} runs"
    properties = {signature.split(":")[2] for signature in result.signatures}
    assert properties & set(CATALOGUE[mutant].breaks), (mutant, dict(result.signatures))


NEEDS_AIMED = ["B27", "D6", "B06", "B01L", "B07", "D4", "D1", "B14", "B08b", "D9", "B04", "B01", "B21L"]
"""Mutants these seeds and runs find only through the aimed schedules."""


@pytest.mark.parametrize("mutant", NEEDS_AIMED)
def test_without_the_aimed_schedules_the_same_runs_miss_it(mutant: str, without_aimed: None) -> None:
    result = campaign(mutant, RUNS[mutant], SEEDS[mutant])
    assert result.runs >= RUNS[mutant]
    assert not result.signatures, (mutant, dict(result.signatures))


@pytest.mark.parametrize("release", ["4.1", "3.5"])
def test_the_reference_passes_the_aimed_schedules(release: str) -> None:
    result = run_campaign(CampaignConfig(level="cluster", release=release, examples=60, seed=11, steps=40,
                                         shrink_budget_s=1))
    assert result.runs >= 60
    assert not result.signatures, result.examples
