"""The heal's probe write (Cluster.heal, probe=True) comes once the brokers the faults left down
have been fenced, not a lag window later: a replica that stopped within the last lag window
still counts as caught up then, and only its ineligibility keeps it from holding the HW back
(leader.md §7 step 3, KAFKA-15021). A probe after the lag window hid mutant B23 from every
generated run (bench/detect.py: 0 of 5 seeds); this builds the case directly, and a campaign
finds B23 by generation."""

from __future__ import annotations

import pytest
from cluster_helpers import engine_session
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.scenario.run import Session


def healed(mutant: str | None, shutdown: str) -> Session:
    """Broker 3, caught up, stops (controlled shutdown, or a crash) just before the heal; the
    heal leaves it down and probes."""
    session = engine_session("4.1", mutant)
    steps = [("produce", {"topic": "t", "partition": 0, "acks": "all", "records": 2}), ("tick", {"ms": 1000}),
             (shutdown, {"broker": 3} if shutdown == "controlled_shutdown" else {"broker": 3, "lose": "none"}),
             ("tick", {"ms": 250}), ("heal", {"restart": False, "probe": True})]
    for op, args in steps:
        session.execute(op, args)
    return session


@pytest.mark.parametrize("shutdown", ["controlled_shutdown", "crash"])
def test_a_replica_stopped_just_before_the_heal_does_not_hold_the_probe_back(shutdown: str) -> None:
    session = healed(None, shutdown)
    assert not session.violations, session.violations
    leader = session.target.observe("partition", {"topic": "t", "partition": 0})
    assert leader["isr"] == [1, 2]


@pytest.mark.parametrize("shutdown", ["controlled_shutdown", "crash"])
def test_a_leader_that_lets_it_hold_the_probe_back_fails_liveness(shutdown: str) -> None:
    violations = healed("B23", shutdown).violations
    assert [v.property for v in violations] == ["P-LIVE"], violations
    assert any("has not reached the log end" in v.message for v in violations), violations


def test_generation_finds_b23() -> None:
    result = run_campaign(CampaignConfig(mutant="B23", level="cluster", release="4.1", examples=80, seed=3001,
                                         steps=40, shrink_budget_s=1))
    assert result.signatures, f"B23 was not found in {result.runs} runs"
    assert {s.split(":")[2] for s in result.signatures} == {"P-LIVE"}
