"""The cluster-level generator reaches KIP-903's family and the deposed-controller interleaving by
design: the rates at which Hypothesis draws each interleaving's shape, measured on the strategy
itself (no cluster runs), with and without the composite faults — the figures docs/real-kafka.md
states for the generation budget."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from isrcheck.conformance.engine.cluster_history import STALE_EXPANSION, stale_expansion_steps
from isrcheck.conformance.engine.history_campaign import steps_strategy
from isrcheck.conformance.generator import black_box_faults
from isrcheck.conformance.generator.black_box_faults import DEPOSED_CONTROLLER, deposed_controller_steps

Steps = list[tuple[str, dict[str, Any]]]
DRAWS = 600


def draw_runs(strategy: st.SearchStrategy[Steps]) -> list[Steps]:
    runs: list[Steps] = []

    @settings(max_examples=DRAWS, database=None, derandomize=True, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(steps: Steps) -> None:
        runs.append(steps)

    collect()
    return runs


def kip903_point(step: tuple[str, dict[str, Any]]) -> bool:
    op, args = step
    return op == STALE_EXPANSION and args["lose"] == "disk" and args["isolate"] and args["leader_fault"] != "none"


def primitive_kip903_order(steps: Steps) -> bool:
    """KIP-903's order from primitive steps alone: hold a broker's AlterPartition, cut its
    replication listener, disk-loss restart of another broker, then a crash of the first."""
    want = ["hold", "cut", "disk", "crash"]
    held = None
    for op, args in steps:
        if op == "hold_alter_partition" and want[0] == "hold":
            held = args["broker"]
        met = {"hold": op == "hold_alter_partition",
               "cut": op == "net" and args == {"broker": held, "link": "replication", "mode": "cut"},
               "disk": op == "restart" and args["lose"] == "disk" and args["broker"] != held,
               "crash": op == "crash" and args["broker"] == held}[want[0]]
        if met:
            want = want[1:]
            if not want:
                return True
    return False


def test_the_composite_fault_draws_kip903s_point_in_about_a_quarter_of_three_step_runs() -> None:
    runs = draw_runs(steps_strategy(3, 3))
    with_point = sum(any(kip903_point(s) for s in steps[1:]) for steps in runs)
    rate = with_point / len(runs)
    assert 0.1 <= rate <= 0.5, rate
    assert not any(primitive_kip903_order(steps) for steps in runs)  # the primitives alone: never in 600
    assert primitive_kip903_order([("hold_alter_partition", {"broker": 1}), ("produce", {}),
                                   ("net", {"broker": 1, "link": "replication", "mode": "cut"}),
                                   ("restart", {"broker": 2, "lose": "disk"}), ("crash", {"broker": 1})])


def test_topics_are_drawn_with_both_replication_factors_and_every_leader() -> None:
    runs = draw_runs(steps_strategy(3, 3))
    creates = [steps[0][1] for steps in runs]
    assert {len(c["replicas"]) for c in creates} == {2, 3}
    assert {c["replicas"][0] for c in creates} == {1, 2, 3}
    assert all(c["configs"] == ({"min.insync.replicas": "1"} if len(c["replicas"]) == 2 else {}) for c in creates)


def test_the_composite_binds_its_roles_from_the_last_observed_view() -> None:
    """Leader 103 of replicas [103, 101, 102]: member 0 is 101 (the first follower in replica
    order); KIP-903's point expands to the interleaving of kip903_steps, on those brokers."""
    view = {"exists": True, "leader": 103, "isr": [103, 101, 102], "replicas": [103, 101, 102]}
    args = {"topic": "t", "member": 0, "lose": "disk", "isolate": True, "leader_fault": "crash", "records": 2,
            "after_ms": 500}
    steps = stale_expansion_steps(args, view)
    ops = [(op, a.get("broker"), a.get("lose") or a.get("mode") or a.get("api")) for op, a in steps]
    assert ops == [("pause", 1, None), ("produce", None, None), ("wait_isr", None, None), ("produce", None, None),
                   ("hold_api", 3, "AlterPartition"), ("resume", 1, None), ("wait_held", 3, "AlterPartition"),
                   ("net", 3, "cut"), ("restart", 1, "disk"), ("tick", None, None),
                   ("release_api", 3, "AlterPartition"), ("tick", None, None), ("crash", 3, None),
                   ("tick", None, None)]
    assert steps[2][1]["without"] == [1] and steps[3][1]["acks"] == "all" and steps[3][1]["records"] == 2
    assert stale_expansion_steps({**args, "member": 1}, view)[0] == ("pause", {"broker": 2, "by": STALE_EXPANSION})
    assert stale_expansion_steps(args, {**view, "leader": -1}) == []  # no leader: nothing to bind
    assert [op for op, _ in stale_expansion_steps({**args, "isolate": False, "leader_fault": "none"}, view)].count(
        "net") == 0


def primitive_deposed_controller_order(steps: Steps) -> bool:
    """The deposed-controller interleaving from primitive steps alone, loosely (any broker, not only
    the leader): a controller fail-over, a cut of some broker's replication listener, an acks=all
    write, then that broker crashes, pauses or restarts cleanly."""
    want, cut = "fail_over", None
    for op, args in steps:
        if want == "fail_over" and op == "fail_over_controller":
            want = "cut"
        elif want == "cut" and op == "net" and args["link"] == "replication" and args["mode"] in ("cut", "hold"):
            want, cut = "write", args["broker"]
        elif want == "write" and op == "produce" and args["acks"] == "all":
            want = "fault"
        elif want == "fault" and op in ("crash", "pause", "clean_restart") and args["broker"] == cut:
            return True
    return False


def test_the_deposed_controller_fault_is_drawn_in_most_runs_and_never_when_switched_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured on 600 draws of up to 10 steps: the composite in 367 runs (61%), 144 of them on a
    replication-2 topic (24%, the loss's setting); the primitive order, even loosely, in none."""
    runs = draw_runs(steps_strategy(3, 10))
    with_fault = [steps for steps in runs if any(op == DEPOSED_CONTROLLER for op, _ in steps[1:])]
    on_two = [steps for steps in with_fault if len(steps[0][1]["replicas"]) == 2]
    assert 0.45 <= len(with_fault) / len(runs) <= 0.8, len(with_fault)
    assert 0.15 <= len(on_two) / len(runs) <= 0.35, len(on_two)
    assert not any(primitive_deposed_controller_order(steps) for steps in runs)
    assert primitive_deposed_controller_order([
        ("fail_over_controller", {}), ("net", {"broker": 2, "link": "replication", "mode": "cut"}),
        ("produce", {"acks": "all"}), ("crash", {"broker": 2})])
    monkeypatch.setattr(black_box_faults, "DEPOSED_CONTROLLER_WEIGHT", 0)
    assert not any(op == DEPOSED_CONTROLLER for steps in draw_runs(steps_strategy(3, 10)) for op, _ in steps)


def test_the_deposed_controller_fault_binds_the_leader_and_its_followers_from_the_last_view() -> None:
    view = {"exists": True, "leader": 102, "isr": [102, 103], "replicas": [103, 102]}
    args = {"topic": "t", "records": 4, "leader_fault": "pause", "after_ms": 9000}
    steps = deposed_controller_steps(args, view)
    assert [(op, a.get("broker"), a.get("acks")) for op, a in steps] == [
        ("fail_over_controller", None, None), ("net", 2, None), ("produce", None, "1"), ("wait_isr", None, None),
        ("produce", None, "all"), ("pause", 2, None), ("tick", None, None)]
    assert steps[1][1]["link"] == "replication" and steps[1][1]["mode"] == "cut"
    assert steps[3][1]["without"] == [3] and steps[4][1]["records"] == 4 and steps[6][1]["ms"] == 9000
    assert all(a["by"] == DEPOSED_CONTROLLER for _, a in steps)
    assert deposed_controller_steps(args, {**view, "leader": -1}) == []  # no leader: nothing to bind
    assert deposed_controller_steps(args, {**view, "replicas": [102]}) == []  # no follower to strand
    assert deposed_controller_steps(args, None) == []
