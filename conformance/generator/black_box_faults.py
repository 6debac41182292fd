"""Composite faults for black-box clusters (real Kafka, cluster plug-ins): interleavings that a
loss needs and that independently drawn primitive faults rarely line up, drawn as one step whose
roles are bound when it runs, from the last observation (as `cluster_history.stale_expansion_steps`
does for KIP-903's family). Each runs as primitive operations that `kafka-cluster` answers, so it
means the same on real brokers as on a plug-in; the history records those (each with its `"by"`).

`deposed_controller`: the interleaving a deposed controller's decisions need to lose data
(KAFKA-1188, KAFKA-6082: a controller that lost office still elects and writes ISRs from the state
it had). After a controller fail-over, the partition's leader stops serving its followers (its
replication listener cut) for longer than replica.lag.time.max.ms while the followers stay
registered and unfenced (they still heartbeat): the active controller shrinks the ISR to the
leader, and a record is acknowledged with acks=all by the leader alone (min.insync.replicas 1).
Then the leader fails. The active controller has nobody in sync to elect; a deposed controller
still sees the followers in the ISR and elects one, which lacks the record.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Step = tuple[str, dict[str, Any]]

DEPOSED_CONTROLLER = "deposed_controller"

DEPOSED_CONTROLLER_WEIGHT = 2
"""How many of the black-box step mix's weights the fault takes (`history_campaign.step_strategy`:
one of thirteen); 0 switches it off (bench/deposed_controller.py --without)."""

LAG_WAIT_MS = 20000
"""How long to wait for the ISR shrink: several replica.lag.time.max.ms of kafka-cluster (3 s) and
of the simulated cluster plug-in; on Kafka's default (30 s) the wait ends unmet and the run goes on."""


def roles(view: dict[str, Any] | None) -> tuple[int, list[int]] | None:
    """The broker ids of a partition view's leader and of its other replicas in replica order (node
    ids 101… are brokers 1…); None without a leader or without a follower: nothing to bind."""
    if view is None or int(view.get("leader", -1)) < 100:
        return None
    leader = int(view["leader"]) - 100
    followers = [int(r) - 100 for r in view.get("replicas", []) if int(r) - 100 != leader]
    return (leader, followers) if followers else None


def deposed_controller_steps(args: dict[str, Any], view: dict[str, Any] | None) -> list[Step]:
    """Fail over the controller; cut the leader's replication listener (its followers' fetches
    stall; they keep heartbeating); one acks=1 record (a follower at the leader's end offset is
    never out of sync, so without a record nobody lags) and a wait until no follower is in the
    ISR; `records` records with acks=all; the leader fails (`leader_fault`: crash, pause or
    clean_restart); `after_ms` pass (a crashed or paused leader is fenced after the session
    timeout, 6 s on kafka-cluster). Bound at run time: the leader and the followers of the last
    observed view (no leader, or no follower: nothing to do). The link stays cut until the heal."""
    bound = roles(view)
    if bound is None:
        return []
    leader, followers = bound
    topic = str(args["topic"])
    by = {"by": DEPOSED_CONTROLLER}
    return [
        ("fail_over_controller", {**by}),
        ("net", {"broker": leader, "link": "replication", "mode": "cut", **by}),
        ("produce", {"topic": topic, "records": 1, "acks": "1", **by}),
        ("wait_isr", {"topic": topic, "without": followers, "timeout_ms": LAG_WAIT_MS, **by}),
        ("produce", {"topic": topic, "records": int(args.get("records", 2)), "acks": "all", **by}),
        (str(args.get("leader_fault", "crash")), {"broker": leader, **by}),
        ("tick", {"ms": int(args.get("after_ms", 9000)), **by}),
    ]


def deposed_controller_strategy(topic: str) -> st.SearchStrategy[Step]:
    """One `deposed_controller` step: the records acknowledged (1-5), how the leader fails (crash
    and pause need the session timeout to pass before anyone acts; a clean restart moves
    leadership at once) and how long passes after (9 s: past kafka-cluster's 6 s session, drawn 2
    in 3; 3 s: the leader not yet fenced)."""
    return st.builds(
        lambda records, leader_fault, after_ms: (DEPOSED_CONTROLLER, {
            "topic": topic, "records": records, "leader_fault": leader_fault, "after_ms": after_ms}),
        st.integers(1, 5), st.sampled_from(["crash", "pause", "clean_restart"]), st.sampled_from([9000, 9000, 3000]))


def deposed_controller_strategies(topic: str) -> list[st.SearchStrategy[Step]]:
    """`DEPOSED_CONTROLLER_WEIGHT` copies (Hypothesis's one_of weighs distinct strategies)."""
    return [deposed_controller_strategy(topic) for _ in range(DEPOSED_CONTROLLER_WEIGHT)]


COMPOSITES = {DEPOSED_CONTROLLER: deposed_controller_steps}
"""The composite faults of this module, by step name: `cluster_history.run_history` expands them."""
