"""The leader-side decision branches the reference names as it takes them (leader.md §4–§13,
contract/operations/leader_branch.py): a quiet cluster takes only the ordinary ones, and each
fault built here takes the branch leader.md says it must — so no branch is named regardless of
what happened. What the default campaigns reach is in tests/engine/test_generation_reach.py."""

from __future__ import annotations

from typing import Any

from cluster_helpers import engine_session
from isrcheck.contract.operations.leader_branch import LEADER_BRANCHES, LeaderBranch

WRITE: list[tuple[str, dict[str, Any]]] = [
    ("produce", {"topic": "t", "partition": 0, "acks": "all", "records": 2}),
    ("events", {"seed": 0, "count": 200}),
]


def branches(steps: list[tuple[str, dict[str, Any]]], release: str = "4.1") -> set[str]:
    session = engine_session(release)
    for op, args in steps:
        session.execute(op, args)
    assert not session.violations, session.violations
    return set(session.target.cluster.observe().leader_branches)


def test_a_quiet_cluster_takes_only_the_ordinary_branches() -> None:
    """Writes acknowledged, the HW moving: nothing refused, proposed, fenced or truncated."""
    assert branches(WRITE) == {LeaderBranch.HW_ADVANCED, LeaderBranch.PRODUCE_ACKNOWLEDGED}


def test_a_follower_that_stops_fetching_is_shrunk_out_then_acks_all_is_refused() -> None:
    """§6 then §9: broker 3's fetches are held (its heartbeats go on, so the controller keeps it)
    while a write moves the leader's LEO past it: its leader proposes the shrink and commits the
    answer. Then broker 2's too: with one ISR
    member left of min ISR 2, acks=all is refused before the append (§8) and, from 3.7 only, the
    HW is gated (§7.1, KAFKA-15583)."""
    hold_three = [("hold", {"kind": "Fetch", "from": 3}), ("produce", {"topic": "t", "partition": 0, "acks": 1}),
                  ("tick", {"ms": 6000}), ("events", {"seed": 0, "count": 200})]
    reached = branches(hold_three)
    assert {LeaderBranch.SHRINK_PROPOSED, LeaderBranch.SUCCESS_COMMITTED} <= reached
    assert LeaderBranch.PRODUCE_NOT_ENOUGH_REPLICAS not in reached
    below_min = [*hold_three, ("hold", {"kind": "Fetch", "from": 2}),
                 ("produce", {"topic": "t", "partition": 0, "acks": 1}), ("tick", {"ms": 6000}),
                 ("events", {"seed": 0, "count": 200}), *WRITE]
    assert {LeaderBranch.PRODUCE_NOT_ENOUGH_REPLICAS, LeaderBranch.HW_GATED_UNDER_MIN_ISR} <= branches(below_min)
    older = branches(below_min, release="3.5")
    assert LeaderBranch.PRODUCE_NOT_ENOUGH_REPLICAS in older
    assert LeaderBranch.HW_GATED_UNDER_MIN_ISR not in older


MOVE_OFF_THREE = [("reassign", {"topic": "t", "partition": 0, "replicas": [1, 2]}),
                  ("events", {"seed": 0, "count": 200})]


def test_a_replica_added_before_its_leader_knows_is_told_to_retry() -> None:
    """§4, KAFKA-13837: broker 3 is added back to the partition; it learns so and fetches while
    the leader, its metadata held, does not track it yet. Without the held metadata the leader
    knows first and the branch is not taken."""
    add_back = [("reassign", {"topic": "t", "partition": 0, "replicas": [1, 2, 3]}),
                ("events", {"seed": 0, "count": 200})]
    assert LeaderBranch.FETCH_NOT_A_REPLICA in branches([*MOVE_OFF_THREE, ("lag_metadata", {"broker": 1}), *add_back])
    assert LeaderBranch.FETCH_NOT_A_REPLICA not in branches([*MOVE_OFF_THREE, *add_back])


def test_every_name_is_distinct() -> None:
    assert len(set(LEADER_BRANCHES)) == len(LEADER_BRANCHES)
