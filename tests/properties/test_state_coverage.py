"""Protocol-state coverage (conformance/properties/state_coverage.py): each state point on a
hand-built observation that shows it, and none on a healthy cluster, so every point is shown
able to stay unreached; the monitor collects them run-long; every point is in the vocabulary
the report lays them against (contract/operations/coverage.py STATES)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from isrcheck.conformance.properties.monitor import PropertyMonitor
from isrcheck.conformance.properties.state_coverage import state_points
from isrcheck.contract.history.ground_truth import BrokerView, RegistrationView
from isrcheck.contract.operations.coverage import STATES, coverage_points
from test_cluster_properties import HEALTHY, TP, observation, partition, replica

SHORT_LOG = ((0, 1),)


def test_a_healthy_cluster_reaches_no_state() -> None:
    assert state_points(HEALTHY, HEALTHY) == set()


CASES = {
    "leader:pending_shrink": observation(replicas={1: replica(1, pending="shrink", proposed_isr=(1, 2))}),
    "leader:pending_expand": observation(replicas={1: replica(1, pending="expand", proposed_isr=(1, 2, 3))}),
    "leader:proposal_in_flight": observation(brokers={
        b: BrokerView(b, "running", f"i{b}", 10 + b, 5, alter_partition_requests=int(b == 1)) for b in (1, 2, 3)}),
    "broker:crashed": observation(brokers={
        b: BrokerView(b, "crashed" if b == 3 else "running", f"i{b}", 10 + b, 5) for b in (1, 2, 3)}),
    "broker:fenced": observation(registrations={b: RegistrationView(b, 10 + b, b == 2, False) for b in (1, 2, 3)}),
    "broker:in_controlled_shutdown": observation(
        registrations={b: RegistrationView(b, 10 + b, False, b == 2) for b in (1, 2, 3)}),
    "partition:offline": observation(partitions={TP: partition(leader=-1)}),
    "partition:elr": observation(partitions={TP: partition(isr=(1,), elr=(2, 3))}),
    "partition:under_min_isr": observation(partitions={TP: partition(isr=(1,))}),
}


@pytest.mark.parametrize("point", sorted(CASES))
def test_each_state_is_reached_by_an_observation_that_shows_it(point: str) -> None:
    assert point in state_points(CASES[point], HEALTHY)


def test_a_pending_change_while_a_member_lags() -> None:
    """The B08 window: the leader's ISR change is pending and a maximal-ISR member is behind it."""
    pending = replica(1, pending="shrink", proposed_isr=(1, 2))
    caught_up = observation(replicas={1: pending})
    lagging = observation(replicas={1: pending, 3: replica(3, log=SHORT_LOG)})
    assert "leader:pending_while_member_lags" not in state_points(caught_up, HEALTHY)
    assert "leader:pending_while_member_lags" in state_points(lagging, HEALTHY)


def test_a_restart_is_a_new_incarnation_since_the_last_observation() -> None:
    again = observation(brokers={b: BrokerView(b, "running", f"i{b}" + ("'" if b == 2 else ""), 10 + b, 5)
                                 for b in (1, 2, 3)})
    assert "broker:restarted" in state_points(again, HEALTHY)
    assert "broker:restarted" not in state_points(again, again)
    assert "broker:restarted" not in state_points(again, None)


def test_the_monitor_collects_the_states_of_a_whole_run() -> None:
    monitor = PropertyMonitor()
    monitor.observe(HEALTHY)
    assert monitor.states == set()
    monitor.observe(replace(CASES["partition:offline"], step=8))
    monitor.observe(replace(CASES["broker:fenced"], step=9))
    assert monitor.states == {"partition:offline", "broker:fenced"}


def test_the_leader_branches_the_reference_took_are_points() -> None:
    """The observation carries the run's branches so far; a point for each, read again only when
    the set changed (the monitor keeps what it read)."""
    taken = replace(HEALTHY, leader_branches=frozenset({"shrink_proposed", "error_reverted"}))
    assert state_points(taken, HEALTHY) == {"leader_branch:shrink_proposed", "leader_branch:error_reverted"}
    assert state_points(taken, taken) == set()
    monitor = PropertyMonitor()
    monitor.observe(taken)
    monitor.observe(replace(taken, step=9))
    assert monitor.states == {"leader_branch:shrink_proposed", "leader_branch:error_reverted"}


def test_the_controllers_answers_to_the_brokers_are_alter_partition_points() -> None:
    answered = replace(HEALTHY, alter_partition_outcomes=frozenset({"NONE", "INELIGIBLE_REPLICA"}))
    assert state_points(answered, HEALTHY) == {"alter_partition:NONE", "alter_partition:INELIGIBLE_REPLICA"}
    assert state_points(answered, answered) == set()


def test_every_state_point_is_in_the_vocabulary() -> None:
    vocabulary = {f"{subject}:{state}" for subject, states in STATES.items() for state in states
                  if subject != "leader_branch"}  # named by the reference: tests/cluster/test_leader_branches.py
    reached = set().union(*(state_points(o, HEALTHY) for o in CASES.values()))
    reached.add("leader:pending_while_member_lags")
    reached.add("broker:restarted")
    assert reached <= vocabulary
    assert vocabulary - reached <= {"broker:shutting_down", "broker:stopped"}  # the other statuses, same rule


def test_coverage_points_carry_the_states_and_a_fenced_heartbeat() -> None:
    points = coverage_points([("heartbeat", {"error": "NONE", "is_fenced": True}), ("crash", None)],
                             states=["leader:pending_shrink"])
    assert points == ["broker:fenced", "crash", "heartbeat:NONE", "leader:pending_shrink"]
    assert "broker:fenced" not in coverage_points([("heartbeat", {"error": "NONE", "is_fenced": False})])
