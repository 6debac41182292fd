"""The cluster machine's `slow_follower` schedule (conformance/generator/aimed_schedules.py): a
follower that keeps fetching below its leader's log end. Leader rules that count such Fetches as
progress — the cosmic-ray mutants of `LeaderRules.updated_replica_state` at leader_rules.py lines
88 and 90, which no other operation reached — are found by P-SHRINK within a few runs, and the
same seeds and runs miss them with the schedule left out; the reference, which runs it, is
dropped by no property."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, CampaignResult, run_campaign
from isrcheck.conformance.generator.cluster_machine import ClusterMachine
from isrcheck.reference_impl.leader_rules import LeaderRules
from isrcheck.reference_impl.mutants import CATALOGUE, Mutant
from isrcheck.reference_impl.replica_state import ReplicaState

RUNS = 15
SEEDS = (1, 2)


class CaughtUpWhenBelowTheEnd(LeaderRules):
    """cosmic-ray `>=` → `is not` at leader_rules.py:88: a Fetch below the leader's end counts as caught up now."""

    def updated_replica_state(
        self, old: ReplicaState, fetch_offset: int, fetch_time_ms: int, leader_end_offset: int, broker_epoch: int
    ) -> ReplicaState:
        state = super().updated_replica_state(old, fetch_offset, fetch_time_ms, leader_end_offset, broker_epoch)
        if fetch_offset != leader_end_offset:
            return ReplicaState(state.log_end_offset, state.log_start_offset, state.last_fetch_leader_log_end_offset,
                                state.last_fetch_time_ms, max(old.last_caught_up_time_ms, fetch_time_ms),
                                state.broker_epoch)
        return state


class CaughtUpAsOfThePreviousFetchWhenBehindIt(LeaderRules):
    """cosmic-ray `>=` → `<` at leader_rules.py:90: a Fetch below the end the previous Fetch saw
    counts as caught up as of that previous Fetch."""

    def updated_replica_state(
        self, old: ReplicaState, fetch_offset: int, fetch_time_ms: int, leader_end_offset: int, broker_epoch: int
    ) -> ReplicaState:
        state = super().updated_replica_state(old, fetch_offset, fetch_time_ms, leader_end_offset, broker_epoch)
        if fetch_offset < leader_end_offset and fetch_offset < old.last_fetch_leader_log_end_offset:
            return ReplicaState(state.log_end_offset, state.log_start_offset, state.last_fetch_leader_log_end_offset,
                                state.last_fetch_time_ms, max(old.last_caught_up_time_ms, old.last_fetch_time_ms),
                                state.broker_epoch)
        return state


RULES = {"line88": CaughtUpWhenBelowTheEnd, "line90": CaughtUpAsOfThePreviousFetchWhenBehindIt}


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, rules in RULES.items():
        monkeypatch.setitem(CATALOGUE, f"SLOW-{name}", Mutant(
            f"SLOW-{name}", rules.__doc__ or name, "test", ("P-SHRINK",), "cluster",
            cluster_options=(("leader_rules", rules()),)))
    yield


@pytest.fixture
def without_slow_follower(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(ClusterMachine, "left_out", frozenset({"slow_follower"}))
    yield


def campaign(mutant: str | None, seed: int, runs: int = RUNS) -> CampaignResult:
    return run_campaign(CampaignConfig(mutant=mutant, level="cluster", release="4.1", examples=runs, seed=seed,
                                       steps=40, shrink_budget_s=1))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(RULES))
def test_the_slow_follower_finds_a_leader_that_counts_slow_fetches_as_progress(
        name: str, seed: int, registered: None) -> None:
    result = campaign(f"SLOW-{name}", seed)
    assert result.signatures, f"not found in {result.runs} runs"
    assert {signature.split(":")[2] for signature in result.signatures} == {"P-SHRINK"}, dict(result.signatures)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(RULES))
def test_without_the_slow_follower_the_same_runs_miss_it(
        name: str, seed: int, registered: None, without_slow_follower: None) -> None:
    result = campaign(f"SLOW-{name}", seed)
    assert result.runs >= RUNS
    assert not result.signatures, dict(result.signatures)


@pytest.mark.parametrize("release", ["4.1", "3.3"])
def test_the_reference_passes_the_slow_follower(release: str) -> None:
    result = run_campaign(CampaignConfig(level="cluster", release=release, examples=40, seed=11, steps=40,
                                         shrink_budget_s=1))
    assert result.runs >= 40
    assert not result.signatures, result.examples
