"""Targeted search (conformance/generator/targeting.py): the protocol distances read the states they
name, every run reports each of its level's labels once, and campaigns run Hypothesis's targeting
phase on them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis.internal.conjecture.optimiser import Optimiser
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.generator import targeting
from isrcheck.conformance.generator.cluster_machine import ClusterMachine
from isrcheck.conformance.generator.controller_machine import ControllerMachine
from isrcheck.reference_impl.broker_config import BrokerConfig
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.leader_rules import LeaderRules
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.release import ClusterConfig, profile_named
from isrcheck.reference_impl.rpc import ALTER_PARTITION, FETCH
from isrcheck.reference_impl.state import BrokerRegistration, PartitionState

TOPIC, TP = "t", ("t", 0)


def started_cluster(min_insync_replicas: int) -> Cluster:
    """Three brokers, one partition on all three led by broker 1, replica lag 10 s (no shrink of
    its own while the test holds fetches)."""
    profile = profile_named("4.1")
    config = ClusterConfig.for_profile(profile, min_insync_replicas=min_insync_replicas)
    cluster = Cluster(profile, config, BrokerConfig(replica_lag_time_max_ms=10_000))
    cluster.start([1, 2, 3])
    cluster.create_topic(TOPIC, [[1, 2, 3]])
    cluster.settle()
    return cluster


def test_controller_distances_count_ineligible_members_and_isrs_at_min() -> None:
    """Broker 2 fenced and 3 in controlled shutdown (controller.md §4): t/0 holds both in its ISR,
    t/2 holds 3 alone; t/1's ISR is down to min.insync.replicas (1) of two replicas, t/2 has one
    replica only, which is no ISR at its minimum worth steering to."""
    controller = Controller()
    controller.brokers = {
        1: BrokerRegistration(1, 10, "a", fenced=False),
        2: BrokerRegistration(2, 11, "b", fenced=True),
        3: BrokerRegistration(3, 12, "c", fenced=False, in_controlled_shutdown=True),
    }
    controller.partitions = {
        ("t", 0): PartitionState(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1),
        ("t", 1): PartitionState(replicas=(1, 2), isr=(1,), leader=1),
        ("t", 2): PartitionState(replicas=(3,), isr=(3,), leader=3),
    }
    distances = targeting.controller_distances(controller)
    assert distances["ineligible_isr_members"] == 3
    assert distances["isr_at_min"] == 1


def test_refusals_are_counted_by_kind() -> None:
    steps = [
        SimpleNamespace(op="alter_partition", reference={"top_level_error": "NONE", "error": "INELIGIBLE_REPLICA"}),
        SimpleNamespace(op="alter_partition", reference={"top_level_error": "STALE_BROKER_EPOCH", "error": None}),
        SimpleNamespace(op="alter_partition", reference={"top_level_error": "NONE", "error": "INVALID_UPDATE_VERSION"}),
        SimpleNamespace(op="alter_partition", reference={"top_level_error": "NONE", "error": "NONE"}),
        SimpleNamespace(op="heartbeat", reference={"error": "STALE_BROKER_EPOCH"}),
    ]
    distances = targeting.refusal_distances(steps)
    assert distances == {"refused_for_eligibility": 2, "refused_for_epochs": 1}


def test_cluster_distances_see_a_pending_shrink_while_a_member_lags() -> None:
    """leader.md §2–§3: broker 1 leads, its shrink of 3 waits (held); with 3's fetches held the
    leader's log grows past 3's. Then the controller fences 2 behind the leader's back: the ISR is at
    min.insync.replicas (2) and the controller one partition epoch past the proposal."""
    cluster = started_cluster(min_insync_replicas=2)
    assert targeting.cluster_distances(cluster)["pending_while_member_lags"] == 0
    cluster.hold(Selector(ALTER_PARTITION, 1))
    cluster.hold(Selector(FETCH, 3))
    leader = cluster.brokers[1].partitions[TP]
    proposal = LeaderRules().prepare_isr_shrink(leader, (3,))
    leader.transition(proposal)
    leader.submit(proposal)
    assert targeting.cluster_distances(cluster)["pending_while_member_lags"] == 0  # 3 still has every record
    cluster.produce(TOPIC, 0, acks=1, count=2)
    cluster.settle()
    distances = targeting.cluster_distances(cluster)
    assert distances["pending_while_member_lags"] == 1
    assert distances["stale_proposal_epochs"] == 0
    assert distances["isr_at_min"] == 0
    epoch = cluster.controller.partition(*TP).partition_epoch
    cluster.controller.fence_stale_broker(2)
    assert cluster.controller.partition(*TP).partition_epoch == epoch + 1
    distances = targeting.cluster_distances(cluster)
    assert distances["stale_proposal_epochs"] == 1
    assert distances["isr_at_min"] == 1


@pytest.fixture
def reported(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    calls: list[tuple[str, float]] = []
    monkeypatch.setattr(targeting, "target", lambda score, label: calls.append((label, score)))
    return calls


@pytest.mark.parametrize(("level", "machine", "labels"), [
    ("controller", ControllerMachine, targeting.CONTROLLER_LABELS),
    ("cluster", ClusterMachine, targeting.CLUSTER_LABELS),
])
def test_every_run_reports_each_label_once(reported: list[tuple[str, float]], monkeypatch: pytest.MonkeyPatch,
                                           level: str, machine: Any, labels: tuple[str, ...]) -> None:
    monkeypatch.setattr(machine, "ideas", machine.ideas | {targeting.TARGET})
    result = run_campaign(CampaignConfig(level=level, examples=12, steps=15, seed=3, stop_at_first=False))
    per_run = [reported[i:i + len(labels)] for i in range(0, len(reported), len(labels))]
    assert len(per_run) == result.runs
    assert all([label for label, _ in run] == list(labels) for run in per_run)
    assert any(score > 0 for run in per_run for _, score in run), "no run came near any of the states"


def test_campaigns_hill_climb_on_the_distances_only_with_the_idea_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis's targeting phase runs only when Phase.target is among the campaign's phases and
    some run reported a distance: count its hill-climbing with the idea on and off."""
    climbs: list[str] = []
    original = Optimiser.hill_climb
    monkeypatch.setattr(Optimiser, "hill_climb", lambda self: (climbs.append(self.target), original(self))[1])
    config = CampaignConfig(level="controller", examples=30, steps=15, seed=3, stop_at_first=False)
    run_campaign(config)
    assert climbs == [], "the idea is off by default"
    monkeypatch.setattr(ControllerMachine, "ideas", frozenset({targeting.TARGET}))
    run_campaign(config)
    assert climbs, "no hill-climbing with the idea on"
    assert set(climbs) <= set(targeting.CONTROLLER_LABELS)
