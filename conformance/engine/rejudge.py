"""`isrcheck check`: a run judged again, offline, from the history its record carries — with the
same checkers the run used live (`step_checkers`: the controller checker, the ground-truth
monitor's forms, the black-box forms of the properties) — so a verdict can be audited without
the system that produced it.

A controller-level history ends where its run ended, at its first finding; a black-box cluster
history is judged whole, as the run judged it when it finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from isrcheck.conformance.engine.step_checkers import (
    ControllerChecker,
    black_box_unknown,
    findings_of_entries,
    ground_truth_unknown,
    judge_ground_truth,
)
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.contract.history.history_json import (
    CLUSTER_LEVEL,
    CONTROLLER_LEVEL,
    cluster_history_from_json,
    controller_history_from_json,
)
from isrcheck.contract.operations.findings import Finding

BLACK_BOX_LEVEL = "cluster (black-box history)"


@dataclass(frozen=True)
class Rejudged:
    level: str
    findings: list[Finding]
    unknown: list[str]
    """The properties the history could not judge."""
    steps: int
    """History steps (entries, for a black-box history) judged."""


def rejudge_record(record: dict[str, Any]) -> Rejudged | None:
    """The record's run judged again from its history; None when it carries none."""
    history = record.get("history")
    if not isinstance(history, dict):
        return None
    if history.get("level") == CONTROLLER_LEVEL:
        return rejudge_controller(history)
    if history.get("level") == CLUSTER_LEVEL:
        return rejudge_cluster(history)
    if "entries" in history:
        entries = list(history.get("entries") or [])
        findings = findings_of_entries(entries, HistoryConfig.from_json(history.get("config") or {}))
        return Rejudged(BLACK_BOX_LEVEL, findings, black_box_unknown(entries), len(entries))
    return None


def rejudge_controller(data: dict[str, Any]) -> Rejudged:
    history, scans = controller_history_from_json(data)
    observable = data.get("observable_fields")
    observable_fields = None if observable is None else frozenset(observable)
    differential = bool(data.get("differential", True))
    checker = ControllerChecker(differential, observable_fields, scans)
    findings: list[Finding] = []
    for step in history:
        findings = checker.judge(step)
        if findings:
            break
    return Rejudged(CONTROLLER_LEVEL, findings, checker.unknown(history), len(history))


def rejudge_cluster(data: dict[str, Any]) -> Rejudged:
    """A simulated cluster's history: the ground-truth forms step by step, as the run's property
    monitor judged them (`Session.execute`: P-LIVE at a heal, then the step properties), up to the
    first violation; a run its target ended by failing keeps that failure (it is what happened,
    not a judgement of the history)."""
    history = cluster_history_from_json(data)
    findings, monitor = judge_ground_truth(history)
    failure = data.get("failure")
    if not findings and failure is not None:
        findings = [Finding(str(failure["kind"]), str(failure["operation"]), int(failure["step"]),
                            str(failure["message"]), property=failure.get("property"))]
    return Rejudged(CLUSTER_LEVEL, findings, ground_truth_unknown(monitor), len(history))
