"""The controller forms of P-ELIG, P-LEAD and LeaderInIsr (conformance/properties/catalogue.py's
`judge_controller_step`) on hand-built controller views: each shown holding on an honest step and
failing on a step built to break it, in the order the engine reports them; and the *unknown*
accounting — a property whose forms read nothing a run recorded is never counted as holding."""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.catalogue import (
    ALL_PROPERTIES,
    BLACK_BOX,
    CONTROLLER_PROPERTIES,
    GROUND_TRUTH_ONLY,
    PROPERTIES,
    judge_controller_step,
    unknown_properties,
)
from isrcheck.conformance.properties.checker import (
    CONTROLLER_VIEW,
    GROUND_TRUTH,
    HOLDS,
    UNKNOWN,
    VIEWS,
    VIOLATED,
    verdict,
)
from isrcheck.contract.history.controller_view import ControllerObservation

BROKERS = {b: {"registered": True, "fenced": False, "in_controlled_shutdown": False, "broker_epoch": 10 + b}
           for b in (1, 2, 3)}


def partition(leader: int, isr: list[int], leader_epoch: int = 1, partition_epoch: int = 1) -> dict[str, Any]:
    return {"exists": True, "leader": leader, "isr": isr, "replicas": [1, 2, 3], "leader_epoch": leader_epoch,
            "partition_epoch": partition_epoch}


def view(**partitions: dict[str, Any]) -> ControllerObservation:
    return ControllerObservation({(name, 0): state for name, state in partitions.items()}, dict(BROKERS))


def request(isr: list[list[int]], broker: int = 1, leader_epoch: int = 1, partition_epoch: int = 1) -> dict[str, Any]:
    return {"topic": "t", "partition": 0, "broker": broker, "leader_epoch": leader_epoch,
            "partition_epoch": partition_epoch, "isr": isr, "version": 3}


ACCEPTED = {"top_level_error": "NONE", "error": "NONE"}


def test_an_honest_alter_partition_breaks_nothing() -> None:
    before, after = view(t=partition(1, [1, 2, 3])), view(t=partition(1, [1, 2], partition_epoch=2))
    assert judge_controller_step(1, "alter_partition", request([[1, 11], [2, 12]]), ACCEPTED, before, after) == []


def test_an_accepted_fenced_member_breaks_p_elig() -> None:
    before = view(t=partition(1, [1, 2]))
    before.brokers[3] = {**BROKERS[3], "fenced": True}
    after = view(t=partition(1, [1, 2, 3], partition_epoch=2))
    [finding] = judge_controller_step(4, "alter_partition", request([[1, 11], [2, 12], [3, 13]]), ACCEPTED,
                                      before, after)
    assert (finding.property, finding.step, finding.evidence["broker"], finding.evidence["reason"]) == (
        "P-ELIG", 4, 3, "fenced")


def test_a_stale_sender_that_changed_the_partition_breaks_p_lead() -> None:
    before, after = view(t=partition(1, [1, 2, 3])), view(t=partition(2, [2, 3], partition_epoch=2))
    findings = judge_controller_step(2, "alter_partition", request([[2, 12], [3, 13]], broker=2), ACCEPTED,
                                     before, after)
    assert [f.property for f in findings] == ["P-LEAD"]
    assert "broker 2 was not the leader (1)" in findings[0].message


def test_a_sender_dropped_from_its_own_isr_and_a_leader_outside_the_isr_break_leader_in_isr() -> None:
    before, after = view(t=partition(1, [1, 2, 3])), view(t=partition(1, [2, 3], partition_epoch=2))
    findings = judge_controller_step(3, "alter_partition", request([[2, 12], [3, 13]]), ACCEPTED, before, after)
    assert [f.property for f in findings] == ["LeaderInIsr", "LeaderInIsr"]
    assert "removed the leader itself" in findings[0].message
    assert "leader 1 is not in its ISR [2, 3]" in findings[1].message


def test_state_forms_are_reported_partition_by_partition() -> None:
    """The engine's order (and so every trace hash): for each partition in observation order,
    LeaderInIsr before P-LEAD."""
    before = view(a=partition(1, [1], leader_epoch=5), b=partition(1, [1]))
    after = view(a=partition(2, [1], leader_epoch=4), b=partition(3, [1]))
    findings = judge_controller_step(7, "fence_broker", {"broker": 2}, {"error": "NONE"}, before, after)
    assert [(f.property, f.evidence["partition"]) for f in findings] == [
        ("LeaderInIsr", "a-0"), ("P-LEAD", "a-0"), ("LeaderInIsr", "b-0")]


def test_each_property_is_defined_once_and_reads_what_its_levels_record() -> None:
    assert set(PROPERTIES) == {*ALL_PROPERTIES, *BLACK_BOX, *CONTROLLER_PROPERTIES}
    assert {n for n, p in PROPERTIES.items() if CONTROLLER_VIEW in p.reads} == set(CONTROLLER_PROPERTIES)
    assert {n for n, p in PROPERTIES.items() if GROUND_TRUTH in p.reads} == set(ALL_PROPERTIES)
    assert {n for n, p in PROPERTIES.items() if VIEWS in p.reads} == set(BLACK_BOX)


def test_what_a_history_cannot_show_is_unknown_not_a_pass() -> None:
    assert set(unknown_properties("cluster", [VIEWS])) == GROUND_TRUTH_ONLY
    assert unknown_properties("cluster", [GROUND_TRUTH]) == ["P-HWC", "P-FENCE"]
    assert unknown_properties("controller", []) == list(CONTROLLER_PROPERTIES)
    assert unknown_properties("controller", [CONTROLLER_VIEW]) == []
    assert unknown_properties("cluster", [GROUND_TRUTH, VIEWS], not_judged=["P-LIVE"]) == ["P-LIVE"]
    assert (verdict(False, []), verdict(True, []), verdict(False, ["v"])) == (UNKNOWN, HOLDS, VIOLATED)
