"""Every property, defined once (one module each: `p_ack.py` … `leader_in_isr.py`), and which of
them each kind of history is judged on, in the order their violations are reported.

* a controller's answers and observations (`CONTROLLER_VIEW`): P-ELIG, P-LEAD, LeaderInIsr;
* a simulation's ground truth after every step (`GROUND_TRUTH`): P-ACK, P-HWV, P-ELIG, P-LOG,
  P-HWM, P-1IF, P-LEAD, LeaderInIsr, P-ADM, P-SHRINK; P-LIVE after a heal;
* a black-box cluster history (`VIEWS`): P-ACK, P-HWC, P-ELIG, P-FENCE, LeaderInIsr, P-LIVE, and
  P-LOG when the history holds every replica's log read after the heal.

A property the history of a run cannot show is *unknown* for that run (`unknown_properties`):
listed in its record, never counted as holding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from isrcheck.conformance.properties import (
    leader_in_isr,
    p_1if,
    p_ack,
    p_adm,
    p_elig,
    p_fence,
    p_hwc,
    p_hwm,
    p_hwv,
    p_lead,
    p_live,
    p_log,
    p_shrink,
)
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.checker import VIEWS, Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History
from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.contract.operations.findings import Finding

PROPERTIES: dict[str, Property] = {
    module.PROPERTY.id: module.PROPERTY
    for module in (
        p_ack, p_hwv, p_elig, p_log, p_hwm, p_1if, p_lead, leader_in_isr, p_adm, p_shrink, p_live, p_hwc, p_fence,
    )
}

CONTROLLER_PROPERTIES = ("P-ELIG", "P-LEAD", "LeaderInIsr")
"""Judged after every controller-level step on the target's answers and observations."""

Check = Callable[[ClusterObservation, History], list[Violation]]


def _ground_truth_form(name: str) -> Check:
    form = PROPERTIES[name].ground_truth
    assert form is not None
    return form


STEP_PROPERTIES: dict[str, Check] = {
    name: _ground_truth_form(name)
    for name in ("P-ACK", "P-HWV", "P-ELIG", "P-LOG", "P-HWM", "P-1IF", "P-LEAD", "LeaderInIsr", "P-ADM", "P-SHRINK")
}
"""Judged on the ground truth after every step."""

TIME_BOUNDED = frozenset({"P-SHRINK"})
"""Step properties that read the clock: a step where nothing but time moved can still violate them."""

ALL_PROPERTIES = (*STEP_PROPERTIES, "P-LIVE")
"""Judged on a simulation's ground truth (P-LIVE after a heal)."""

BLACK_BOX = ("P-ACK", "P-HWC", "P-ELIG", "P-FENCE", "LeaderInIsr", "P-LIVE", "P-LOG")
"""Judged on a black-box cluster history."""

GROUND_TRUTH_ONLY = frozenset(name for name in ALL_PROPERTIES if VIEWS not in PROPERTIES[name].reads)
"""Properties that need every replica's log, HW, in-flight requests, a leader's admission decisions or its
followers' progress: a black box is never judged on them."""

LEVEL_PROPERTIES = {"controller": CONTROLLER_PROPERTIES, "cluster": tuple(dict.fromkeys((*ALL_PROPERTIES, *BLACK_BOX)))}
"""What a run of each level is about: the properties a full history of that level is judged on."""


REQUEST_FORMS = tuple(form for name in CONTROLLER_PROPERTIES if (form := PROPERTIES[name].controller_request))
"""The forms judging an accepted AlterPartition request, in reporting order."""
STATE_FORMS = tuple(form for name in ("LeaderInIsr", "P-LEAD") if (form := PROPERTIES[name].controller_state))
"""The forms judging each partition's state after any step, in reporting order."""


def judge_controller_step(
    step: int, op: str, args: dict[str, Any], result: dict[str, Any],
    before: ControllerObservation, after: ControllerObservation,
) -> list[Finding]:
    """Every controller-level property for one executed step: the request forms of an accepted
    AlterPartition (P-ELIG, P-LEAD, LeaderInIsr), then the state forms partition by partition."""
    findings: list[Finding] = []
    if op == "alter_partition":
        for request in REQUEST_FORMS:
            finding = request(step, args, result, before, after)
            if finding is not None:
                findings.append(finding)
    for key, state in after.partitions.items():
        if not state.get("exists"):
            continue
        for form in STATE_FORMS:
            finding = form(step, op, key, state, before)
            if finding is not None:
                findings.append(finding)
    return findings


def judge_ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """Every step property on one observation of the ground truth."""
    return [v for check in STEP_PROPERTIES.values() for v in check(observation, history)]


def judge_views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """Every black-box property on one cluster history, in history order."""
    found = []
    for name in BLACK_BOX:
        form = PROPERTIES[name].views
        assert form is not None
        found += form(history, config)
    return sorted(found, key=lambda v: (v.step, v.property))


def views_not_judged(history: list[dict[str, Any]]) -> list[str]:
    """The black-box properties a history holds nothing to judge on (P-ACK without a read-back,
    P-LIVE without a heal, P-LOG without every replica's log read after the heal)."""
    return [name for name in BLACK_BOX
            if (judged := PROPERTIES[name].views_judged) is not None and not judged(history)]


def unknown_properties(level: str, recorded: Iterable[str], not_judged: Iterable[str] = ()) -> list[str]:
    """The properties of `level` a run's history could not judge: none of their forms reads a
    field it recorded, or (`not_judged`) the form had nothing to judge in this run (P-LIVE without
    a heal, P-ACK with nothing read back)."""
    fields = set(recorded)
    missing = set(not_judged)
    return [name for name in LEVEL_PROPERTIES[level] if not PROPERTIES[name].judged_on(fields) or name in missing]

