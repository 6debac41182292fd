"""What generation reaches, read from the coverage the campaign reports (`isrcheck run --json`
prints it; the records keep it): the controller machine grows topics with `create_partitions`
and answers its error branches, the cluster machine's `window` puts a leader's ISR change in
flight while a member lags, and topics of more than two partitions are created. Each assertion
names a point that an older generator never reached (two partitions at most, no create_partitions,
no window), so each can fail."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.generator.cluster_machine import ClusterMachine
from isrcheck.conformance.generator.controller_machine import ControllerMachine
from isrcheck.contract.operations.coverage import PROTOCOL_OUTCOMES
from isrcheck.contract.operations.leader_branch import LEADER_BRANCHES, LeaderBranch

from isrcheck import cli


def coverage(level: str, runs: int, seed: int = 5, release: str = "4.1") -> Counter[str]:
    result = run_campaign(CampaignConfig(level=level, examples=runs, seed=seed, steps=40, stop_at_first=False,
                                         release=release))
    assert not result.signatures, result.examples  # the reference against itself: nothing to find
    return result.coverage


def test_the_controller_machine_creates_partitions_and_takes_their_error_branches() -> None:
    reached = coverage("controller", 100)
    assert reached["create_partitions:NONE"] > 0
    assert reached["create_partitions:INVALID_PARTITIONS"] > 0
    assert reached["create_partitions:INVALID_REPLICA_ASSIGNMENT"] > 0


CLUSTER_ONLY = {"produce"}
"""Client writes exist at the cluster level only."""


@pytest.mark.parametrize("release", ["3.3", "3.9"])
def test_the_default_controller_campaign_reaches_every_outcome_of_every_controller_request(release: str) -> None:
    """Every validation branch of controller.md §2 (AlterPartition, as its error code) and every
    outcome of the other controller requests, in 300 runs, on releases that still serve
    AlterPartition v0/v1 (OPERATION_NOT_ATTEMPTED, and unknown topics by name). Before the
    unknown-partition draw was a draw of its own, 1,500 runs on 3.9 never answered
    UNKNOWN_TOPIC_ID."""
    reached = coverage("controller", 300, release=release)
    missing = [f"{op}:{outcome}" for op, outcomes in PROTOCOL_OUTCOMES.items() if op not in CLUSTER_ONLY
               for outcome in outcomes if not reached[f"{op}:{outcome}"]]
    assert missing == []


def runs_to_find(mutant: str, seed: int, runs: int) -> int | None:
    result = run_campaign(CampaignConfig(mutant=mutant, examples=runs, seed=seed, steps=40, stop_at_first=True,
                                         shrink_budget_s=1))
    return result.runs if result.signatures else None


def test_a_restarted_follower_proposed_back_with_its_old_broker_epoch_finds_b01_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """KAFKA-14139's shape as one rule (`restart_and_rejoin`): B01, the controller that ignores
    member broker epochs, is found within 40 runs on three seeds. Switched off (no partition
    offered to it), seed 1 does not find it in the same 40 runs: before the rule it took 442,
    because by mid-run most brokers are fenced or shutting down and a proposal naming one is
    refused for that before its broker epoch is looked at."""
    found = {seed: runs_to_find("B01", seed, 40) for seed in (1, 1001, 2001)}
    assert all(found.values()), found
    monkeypatch.setattr(ControllerMachine, "rejoinable", lambda self: [])
    assert runs_to_find("B01", 1, 40) is None


def test_the_cluster_machine_holds_a_proposal_in_flight_while_a_member_lags() -> None:
    reached = coverage("cluster", 30)
    for point in ("leader:pending_shrink", "leader:pending_expand", "leader:pending_while_member_lags",
                  "create_partitions:NONE", "broker:restarted", "broker:fenced"):
        assert reached[point] > 0, (point, sorted(reached))


def test_without_the_window_the_in_flight_lag_is_rarer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same seed, same runs, the window switched off: the B08 state is reached in fewer runs (the
    ideas switch works, and the window is what reaches it)."""
    default = ClusterMachine.ideas
    monkeypatch.setattr(ClusterMachine, "ideas", frozenset())
    without = coverage("cluster", 30)["leader:pending_while_member_lags"]
    monkeypatch.setattr(ClusterMachine, "ideas", default)
    with_window = coverage("cluster", 30)["leader:pending_while_member_lags"]
    assert with_window > without, (with_window, without)


def test_run_json_prints_the_campaign_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", "--adapter", "reference", "--examples", "5", "--steps", "20", "--seed", "3", "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["coverage"]["register_broker:NONE"] == 5  # every run registers its brokers
    assert printed["coverage"]["create_topic:NONE"] == 5


def points(release: str, runs: int, kind: str) -> set[str]:
    reached = coverage("cluster", runs, release=release)
    return {point.split(":", 1)[1] for point in reached if point.startswith(f"{kind}:")}


def test_the_default_cluster_campaigns_take_every_leader_branch() -> None:
    """Every decision branch of leader.md the reference names (contract/operations/leader_branch.py)
    in 200 default runs on 4.1 and 200 on 3.5 together: some exist on one side of a release gate
    only. 3.5 never gates the HW under min ISR (KAFKA-15583 is 3.7); 4.1 never answers
    NOT_ENOUGH_REPLICAS_AFTER_APPEND, because that gate keeps the HW from reaching a record while
    the committed ISR — never larger than the maximal ISR the answer is judged on — is below min
    ISR. Before the cluster machine reassigned partitions, no run had a leader tell a replica it
    does not track to retry (KAFKA-13837)."""
    newest, older = points("4.1", 200, "leader_branch"), points("3.5", 200, "leader_branch")
    assert sorted(set(LEADER_BRANCHES) - newest - older) == []
    assert LeaderBranch.PRODUCE_NOT_ENOUGH_AFTER_APPEND not in newest
    assert LeaderBranch.PRODUCE_NOT_ENOUGH_AFTER_APPEND in older
    assert LeaderBranch.HW_GATED_UNDER_MIN_ISR not in older
    assert LeaderBranch.HW_GATED_UNDER_MIN_ISR in newest


def test_the_brokers_own_alter_partition_requests_take_the_controllers_branches() -> None:
    """At the cluster level no step sends an AlterPartition; the leaders do, and the controller's
    answers to them are coverage too: accepted; refused for a member that is fenced or shutting
    down (INELIGIBLE_REPLICA), for a leader epoch or partition epoch that moved on meanwhile
    (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION); a change that completes a reassignment moving
    the leadership (NEW_LEADER_ELECTED); a deposed controller (NOT_CONTROLLER). A correct leader
    never sends what INVALID_REQUEST or an unknown partition answers."""
    reached = points("4.1", 200, "alter_partition")
    assert {"NONE", "INELIGIBLE_REPLICA", "FENCED_LEADER_EPOCH", "INVALID_UPDATE_VERSION", "NEW_LEADER_ELECTED",
            "NOT_CONTROLLER"} <= reached
    assert not reached & {"INVALID_REQUEST", "UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_ID"}
