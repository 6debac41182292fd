"""Run one step on the reference and on the target side by side (the engine's core).

Each side has its own `Session` (captures, `current` resolution), because broker epochs and
topic ids are the target's own. After the step both sides are observed; the differential
checker compares them and the property checkers judge the target's answers alone.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field, replace
from typing import Any

from isrcheck.adapters.base import Target, TargetFailure
from isrcheck.conformance.engine.observation import observe_controller
from isrcheck.conformance.engine.step_checkers import judge_pair_step
from isrcheck.conformance.properties.catalogue import unknown_properties
from isrcheck.conformance.properties.checker import CONTROLLER_VIEW
from isrcheck.conformance.scenario.run import Session, StepError
from isrcheck.contract.history.controller_view import EMPTY, ControllerObservation
from isrcheck.contract.history.steps import HistoryStep, RunHistory, SideRecord
from isrcheck.contract.operations.findings import CRASH, ERROR, Finding
from isrcheck.contract.operations.step import Step

MAX_PARTITION_SCAN = 1024
"""Partitions of one topic read from the reference before a create_partitions (far above what a
run creates: the generator stops at a few)."""


def actors(op: str, args: dict[str, Any]) -> tuple[str, str]:
    """Who sends and who receives, for the report's sequence diagram."""
    if op in ("create_topic", "create_partitions", "elect_leaders", "reassign"):
        return "admin", "controller"
    if op == "fence_broker":
        return "clock", "controller"
    if op == "fail_over_controller":
        return "controller", "controller"
    if "broker" in args:
        return f"broker {args['broker']}", "controller"
    return "harness", "controller"


@dataclass
class TraceStep:
    index: int
    op: str
    args: dict[str, Any]
    src: str
    dst: str
    reference: dict[str, Any] | None
    target: dict[str, Any] | None
    captures: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = {"index": self.index, "op": self.op, "args": self.args, "src": self.src, "dst": self.dst,
                "reference": self.reference, "target": self.target}
        if self.captures:
            data["as"] = self.captures
        return data


@dataclass
class PairRun:
    """One run: the reference and the target, stepped together until the first finding."""

    reference: Target
    target: Target
    release: str
    differential: bool = True
    observes_target: bool = True
    brokers: list[int] = field(default_factory=lambda: [1, 2, 3, 4])
    partitions: list[tuple[str, int]] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skip_reason: str | None = None
    """The target refused the configuration at `open`: the run tested nothing."""
    silent: bool = False
    """Not opened and not recorded: a later run of a campaign already known to be skipped."""

    def __post_init__(self) -> None:
        self.ref_session = Session(self.reference, self.release)
        self.tgt_session = Session(self.target, self.release)
        self.ref_seen: ControllerObservation = EMPTY
        self.tgt_seen: ControllerObservation = EMPTY
        self.history = RunHistory("controller")
        """Every executed step, both sides (what `isrcheck check` re-judges from a record)."""
        self.reference_scans: dict[int, ControllerObservation] = {}
        """Step → the reference's partitions read before a create_partitions (`reference_before`)."""

    @property
    def stopped(self) -> bool:
        return bool(self.findings) or self.skip_reason is not None

    def unknown(self) -> list[str]:
        """The properties this run could not judge: all of them when the target was never observed."""
        observed = any(step.target.observation is not None for step in self.history)
        return unknown_properties("controller", [CONTROLLER_VIEW] if observed else [])

    def target_failed(self, op: str, index: int, call: Any) -> list[Finding] | None:
        """Run `call` (a call on the target); a target that fails in it is an outcome of this run
        (timeout or crash, docs/exec-protocol.md), never an aborted campaign."""
        try:
            call()
        except TargetFailure as failure:
            return [Finding(failure.kind, op, index, f"{op}: {failure}", evidence={"args": self.trace[-1].args})]
        except StepError as error:
            return [Finding(ERROR, op, index, f"{op}: {error}")]
        except Exception as error:  # a plug-in bug is an outcome, never an aborted campaign
            return [Finding(CRASH, op, index, f"{op}: {type(error).__name__}: {error}",
                            evidence={"traceback": traceback.format_exc(limit=5)})]
        return None

    def reference_before(self, step: Step) -> ControllerObservation:
        """The reference's state a known-divergence rule reads (known_divergences.DivergingStep):
        what was observed after the previous step and, before a create_partitions, every existing
        partition of its topic, whether or not this run observes them (a replay observes fewer)."""
        topic = step.args.get("topic")
        if step.op != "create_partitions" or not isinstance(topic, str):
            return self.ref_seen
        partitions = dict(self.ref_seen.partitions)
        for index in range(MAX_PARTITION_SCAN):
            state = self.reference.observe("partition", {"topic": topic, "partition": index})
            if not state.get("exists", True):
                break
            partitions[(topic, index)] = state
        return ControllerObservation(partitions, self.ref_seen.brokers)

    def step(self, step: Step) -> list[Finding]:
        if self.stopped:
            return []
        index = len(self.trace) + 1
        src, dst = actors(step.op, step.args)
        ref_before = self.reference_before(step)
        _, ref_result = self.ref_session.run_resolved(step)
        self.ref_session.capture(step, ref_result)
        trace = TraceStep(index, step.op, dict(step.args), src, dst, ref_result, None, dict(step.captures))
        self.trace.append(trace)
        answered: list[tuple[dict[str, Any], dict[str, Any]]] = []
        failed = self.target_failed(step.op, index, lambda: answered.append(self.tgt_session.run_resolved(step)))
        if failed:
            self.findings = failed
            return self.findings
        tgt_args, tgt_result = answered[0]
        self.tgt_session.capture(step, tgt_result)
        trace.target = tgt_result
        tgt_before = self.tgt_seen
        self.ref_seen = observe_controller(self.reference, self.partitions, self.brokers)
        if self.observes_target:
            def observe_target() -> None:
                self.tgt_seen = observe_controller(self.target, self.partitions, self.brokers)

            failed = self.target_failed(f"observe after {step.op}", index, observe_target)
            if failed:
                self.findings = [replace(f, operation=step.op) for f in failed]
                return self.findings
        recorded = HistoryStep(
            index, step.op, trace.args,
            SideRecord(tgt_result, tgt_args, self.tgt_seen if self.observes_target else None),
            SideRecord(ref_result, None, self.ref_seen),
        )
        self.history.append(recorded)
        if step.op == "create_partitions":
            self.reference_scans[index] = ref_before
        findings = judge_pair_step(recorded, tgt_before, ref_before, self.differential, self.target.observable_fields)
        self.findings = findings
        return findings
