"""The checkers of a run's history, one per thing a target can show (`conformance/engine/sides.py`),
the same live (`run.Run`, step by step: stop-at-first and shrinking need that) and offline
(`isrcheck check` on a record's history, `rejudge.py`).

* `ControllerChecker` — the differential (one more checker, over the two sides of a step), then
  the properties over the target's side: its answer and its observation before and after. A
  divergence a known-divergence rule explains is marked so (docs/known-divergences.md). A step
  whose target side carries no observation judges no property: they are *unknown*.
* `GroundTruthChecker` — the ground-truth forms of the properties, step by step, as the property
  monitor judged the ground truth each step records (P-LIVE at a heal); on the reference too,
  where one runs alongside (a property the reference breaks is isrcheck's error, not a finding).
* `BlackBoxChecker` — the black-box forms, over the whole history once the run has healed and
  read back (`cluster_history.py`): a real cluster's views are judged in time order, not per step.

Each answers `before(step, index)` (what it must read before the step runs), `judge(step)` (the
findings of the step just recorded), `at_end(history)` (the findings only a finished history
shows) and `unknown(history)` (the properties it could not judge).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Protocol

from isrcheck.adapters.base import Target
from isrcheck.conformance.engine.differential import compare_observations, compare_results
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.catalogue import (
    judge_controller_step,
    judge_views,
    unknown_properties,
    views_not_judged,
)
from isrcheck.conformance.properties.checker import CONTROLLER_VIEW, GROUND_TRUTH, VIEWS
from isrcheck.conformance.properties.monitor import PropertyMonitor
from isrcheck.conformance.scenario.run import Session
from isrcheck.contract.history.black_box_json import black_box_entries
from isrcheck.contract.history.controller_view import EMPTY, ControllerObservation
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.contract.history.steps import HistoryStep, RunHistory
from isrcheck.contract.operations.findings import ERROR, VIOLATION, Finding
from isrcheck.contract.operations.known_divergences import DivergingStep, classified
from isrcheck.contract.operations.known_violations import classified_violation
from isrcheck.contract.operations.step import Step

MAX_PARTITION_SCAN = 1024
"""Partitions of one topic read from the reference before a create_partitions (far above what a
run creates: the generator stops at a few)."""


class Checker(Protocol):
    def before(self, step: Step, index: int) -> None: ...

    def judge(self, step: HistoryStep) -> list[Finding]: ...

    def at_end(self, history: RunHistory) -> list[Finding]: ...

    def unknown(self, history: RunHistory) -> list[str]: ...


def judge_pair_step(step: HistoryStep, target_before: ControllerObservation, reference_before: ControllerObservation,
                    differential: bool, observable: frozenset[str] | None) -> list[Finding]:
    """Every finding of one controller-level step: divergences first (when `differential`), then violations."""
    target, reference = step.target, step.reference
    assert target.result is not None and target.args is not None
    findings: list[Finding] = []
    if differential and reference is not None and reference.result is not None:
        for finding in (
            compare_results(step.index, step.op, reference.result, target.result),
            None if target.observation is None or reference.observation is None
            else compare_observations(step.index, step.op, reference.observation, target.observation, observable),
        ):
            if finding is not None:
                findings.append(finding)
        if findings:  # a divergence a known-divergence rule explains is marked so (not a finding)
            findings = classified(findings, DivergingStep(step.op, target.args, reference_before,
                                                          reference.result, target.result))
    if target.observation is not None:
        findings.extend(judge_controller_step(step.index, step.op, target.args, target.result,
                                              target_before, target.observation))
    return findings


@dataclass
class ControllerChecker:
    differential: bool
    observable: frozenset[str] | None
    """The fields the target's observations report truthfully (None: all; `Target.observable_fields`)."""
    reference_scans: dict[int, ControllerObservation] = field(default_factory=dict)
    """Step → the reference's partitions read before a create_partitions, which a known-divergence
    rule reads (`before`); a record's history carries them."""
    target_before: ControllerObservation = EMPTY
    reference_before: ControllerObservation = EMPTY
    reference: Target | None = None
    """The reference, read before a create_partitions (live); None offline, where the record's
    scans stand in."""

    def before(self, step: Step, index: int) -> None:
        """Before a create_partitions, the reference's partitions of its topic, whether or not the
        run observes them (a replay observes fewer): what a known-divergence rule reads
        (known_divergences.DivergingStep) besides the last observation."""
        topic = step.args.get("topic")
        if self.reference is None or step.op != "create_partitions" or not isinstance(topic, str):
            return
        partitions = dict(self.reference_before.partitions)
        for partition in range(MAX_PARTITION_SCAN):
            state = self.reference.observe("partition", {"topic": topic, "partition": partition})
            if not state.get("exists", True):
                break
            partitions[(topic, partition)] = state
        self.reference_scans[index] = ControllerObservation(partitions, self.reference_before.brokers)

    def judge(self, step: HistoryStep) -> list[Finding]:
        reference_before = self.reference_scans.get(step.index, self.reference_before)
        findings = judge_pair_step(step, self.target_before, reference_before, self.differential, self.observable)
        if step.target.observation is not None:
            self.target_before = step.target.observation
        if step.reference is not None and step.reference.observation is not None:
            self.reference_before = step.reference.observation
        return findings

    def at_end(self, history: RunHistory) -> list[Finding]:
        return []

    def unknown(self, history: RunHistory) -> list[str]:
        """All the properties when the target was never observed."""
        observed = any(step.target.observation is not None for step in history)
        return unknown_properties("controller", [CONTROLLER_VIEW] if observed else [])


def monitor_finding(monitor: PropertyMonitor | None, step: HistoryStep, truth: ClusterObservation | None
                    ) -> Finding | None:
    """The first violation `monitor` holds after judging `step`'s ground truth `truth`, as a
    finding; marked known when a known-violation rule matches it there (Kafka's own behaviour,
    which the reference follows: docs/known-divergences.md)."""
    status = {} if monitor is None else monitor.status("all")
    if status.get("status") != "violated":
        return None
    first = status["first"]
    return classified_violation(Finding(VIOLATION, step.op, step.index, first["message"], property=first["property"],
                                        evidence=first.get("evidence") or {}), truth)


@dataclass
class GroundTruthChecker:
    """Reads the verdicts of the monitors that judged each side's ground truth as it was taken
    (`Session.execute`, which also answers a heal's `live`); offline, `judge_ground_truth` feeds
    a fresh monitor the recorded ground truth the same way."""

    target: Session
    """The target side's `Session` (its `monitor`)."""
    reference: Session | None
    """The reference side's `Session`, where a separate reference runs alongside."""

    def before(self, step: Step, index: int) -> None:
        return None

    def judge(self, step: HistoryStep) -> list[Finding]:
        found = monitor_finding(self.target.monitor, step, step.target.ground_truth)
        if found is not None:
            return [found]
        if self.reference is None or step.reference is None:
            return []
        broken = monitor_finding(self.reference.monitor, step, step.reference.ground_truth)
        if broken is None:
            return []
        if broken.known is not None:  # the reference broke it as Kafka does: the run ends, known
            return [dataclasses.replace(broken, message=f"the reference, as Kafka: {broken.message}")]
        return [Finding(ERROR, step.op, step.index, f"the reference violated {broken.property}: {broken.message}",
                        property=broken.property)]

    def at_end(self, history: RunHistory) -> list[Finding]:
        return []

    def unknown(self, history: RunHistory) -> list[str]:
        return ground_truth_unknown(self.target.monitor)


def ground_truth_unknown(monitor: PropertyMonitor | None) -> list[str]:
    """Every property when the target showed no ground truth (no monitor), and P-LIVE when no heal ran."""
    return unknown_properties("cluster", [GROUND_TRUTH] if monitor is not None else [],
                              ["P-LIVE"] if monitor is None or monitor.liveness is None else [])


def judge_ground_truth(history: RunHistory) -> tuple[list[Finding], PropertyMonitor | None]:
    """`GroundTruthChecker` offline: a fresh monitor fed each recorded ground truth in order
    (P-LIVE at a heal, then the step properties), up to the first violation."""
    monitor: PropertyMonitor | None = None
    for step in history:
        truth = step.target.ground_truth
        if truth is None:
            continue
        if monitor is None:
            monitor = PropertyMonitor()
        if step.op == "heal":
            monitor.check_liveness(truth)
        monitor.observe(truth)
        found = monitor_finding(monitor, step, truth)
        if found is not None:
            return [found], monitor
    return [], monitor


@dataclass
class BlackBoxChecker:
    config: HistoryConfig

    def before(self, step: Step, index: int) -> None:
        return None

    def judge(self, step: HistoryStep) -> list[Finding]:
        return []

    def at_end(self, history: RunHistory) -> list[Finding]:
        return findings_of_entries(black_box_entries(history), self.config)

    def unknown(self, history: RunHistory) -> list[str]:
        return black_box_unknown(black_box_entries(history))


def black_box_unknown(entries: list[dict[str, Any]]) -> list[str]:
    """The properties a black-box history's entries cannot judge: the ground-truth-only ones, and
    those with nothing to judge in this run (P-LIVE without a heal, P-LOG without replica logs)."""
    return unknown_properties("cluster", [VIEWS], views_not_judged(entries))


def findings_of_entries(entries: list[dict[str, Any]], config: HistoryConfig) -> list[Finding]:
    """The black-box properties judged on a history's entries, each violation as a finding at the
    operation (or observation) whose entry it names."""
    by_index = {e["i"]: e for e in entries}
    findings = []
    for v in judge_views(entries, config):
        entry = by_index.get(v.step, {})
        kind = entry.get("type")
        operation = entry.get("op") or (kind if kind in ("observe", "replica_logs") else "cluster")
        findings.append(Finding(VIOLATION, operation, v.step, v.message, property=v.property, evidence=v.evidence))
    return findings
