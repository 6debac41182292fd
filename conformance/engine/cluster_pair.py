"""One cluster-level run: the reference cluster and the target cluster stepped together.

At this level the two sides are not compared with each other: the same operations and the same
drawn scheduler choices still lead to different message timings as soon as an implementation
batches, retries or reacts differently — which Kafka allows (the negative controls are exactly
such variations). So a cluster-level finding is a property violation on the target's own
observations (P-ACK, P-HWV, P-ELIG, P-LOG, P-HWM, P-1IF, P-LEAD, LeaderInIsr after every step,
P-LIVE after the heal). The reference runs alongside because the generator draws from its state,
and a property failing on the reference is itself reported (an isrcheck bug, kind `error`).

When the target *is* the reference (the reference against itself: `RunContext.target_is_reference`),
the run is given one simulation as both sides and steps it once. The simulation is deterministic
and the two sides are never compared at this level, so a second copy would only repeat every
result, every property verdict and every finding of the first at twice the cost; the trace still
shows both columns (equal), and a property the reference breaks is reported as the target's
violation, as it was before (the target's properties are judged first).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any

from isrcheck.adapters.base import Target, TargetFailure
from isrcheck.conformance.engine.pair import TraceStep
from isrcheck.conformance.properties.catalogue import unknown_properties
from isrcheck.conformance.properties.checker import GROUND_TRUTH
from isrcheck.conformance.properties.p_live import PROPERTY as P_LIVE
from isrcheck.conformance.scenario.run import Session, StepError
from isrcheck.contract.history.steps import HistoryStep, RunHistory, SideRecord
from isrcheck.contract.operations.findings import CRASH, ERROR, VIOLATION, Finding
from isrcheck.contract.operations.step import Step

CLUSTER_ACTORS = {
    "produce": ("producer", "leader"), "events": ("network", "network"), "tick": ("clock", "cluster"),
    "crash": ("nemesis", "broker"), "restart": ("nemesis", "broker"), "drop": ("nemesis", "network"),
    "duplicate": ("nemesis", "network"), "hold": ("nemesis", "network"), "release": ("nemesis", "network"),
    "lag_metadata": ("nemesis", "broker"), "sync_metadata": ("nemesis", "broker"),
    "fail_over_controller": ("nemesis", "controller"), "heal": ("harness", "cluster"),
}


def cluster_actors(op: str, args: dict[str, Any]) -> tuple[str, str]:
    src, dst = CLUSTER_ACTORS.get(op, ("harness", "controller"))
    if dst == "broker" and "broker" in args:
        dst = f"broker {args['broker']}"
    if op == "controlled_shutdown" or op in ("register_broker", "unfence_broker"):
        return f"broker {args['broker']}", "controller"
    if op in ("create_topic", "elect_leaders"):
        return "admin", "controller"
    return src, dst


@dataclass
class ClusterPairRun:
    reference: Target
    target: Target
    release: str
    trace: list[TraceStep] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skip_reason: str | None = None
    """The target refused the configuration at `open`: the run tested nothing."""
    silent: bool = False
    """Not opened and not recorded: a later run of a campaign already known to be skipped."""

    def __post_init__(self) -> None:
        self.ref_session = Session(self.reference, self.release)
        self.tgt_session = self.ref_session if self.shared else Session(self.target, self.release)
        self.history = RunHistory("cluster")
        """Every executed step with the target's ground truth after it (what `isrcheck check`
        re-judges from a record), or, for the step that ended the run by failing, the failure."""
        self.failure: Finding | None = None
        """The finding of a target that failed (timeout, crash, livelock) rather than a property."""

    @property
    def shared(self) -> bool:
        """One simulation plays both sides (the reference against itself)."""
        return self.target is self.reference

    @property
    def stopped(self) -> bool:
        return bool(self.findings) or self.skip_reason is not None

    def unknown(self) -> list[str]:
        """The properties this run could not judge: every one a target that shows no ground truth
        cannot be judged on (it is not a black box, so no history of views either), and P-LIVE
        when no heal ran."""
        monitor = self.tgt_session.monitor
        return unknown_properties("cluster", [GROUND_TRUTH] if monitor is not None else [],
                                  ["P-LIVE"] if monitor is None or monitor.liveness is None else [])

    def step(self, step: Step) -> list[Finding]:
        if self.stopped:
            return []
        index = len(self.trace) + 1
        src, dst = cluster_actors(step.op, step.args)
        trace = TraceStep(index, step.op, dict(step.args), src, dst, None, None, dict(step.captures))
        self.trace.append(trace)
        try:
            trace.reference = self.ref_session.run_step(step)
        except TargetFailure as failure:
            self.findings = [Finding(ERROR, step.op, index, f"the reference failed: {failure}")]
            return self.findings
        try:
            trace.target = dict(trace.reference) if self.shared else self.tgt_session.run_step(step)
        except TargetFailure as failure:
            kind = failure.kind if failure.kind in ("timeout", "crash", "error") else VIOLATION
            prop = P_LIVE.id if failure.kind == "livelock" else None
            self.findings = [Finding(kind, step.op, index, f"{step.op}: {failure}", property=prop)]
            self.failure = self.findings[0]
            return self.findings
        except StepError as error:
            self.findings = [Finding(ERROR, step.op, index, f"{step.op}: {error}")]
            return self.findings
        except Exception as error:
            self.findings = [Finding(CRASH, step.op, index, f"{step.op}: {type(error).__name__}: {error}",
                                     evidence={"traceback": traceback.format_exc(limit=5)})]
            return self.findings
        self.history.append(HistoryStep(index, step.op, trace.args,
                                        SideRecord(trace.target, ground_truth=self.tgt_session.last_truth)))
        target_status = self.tgt_session.property_status("all") if self.tgt_session.monitor else {}
        if target_status.get("status") == "violated":
            first = target_status["first"]
            self.findings = [Finding(VIOLATION, step.op, index, first["message"], property=first["property"],
                                     evidence=first.get("evidence") or {})]
            return self.findings
        if self.shared:
            return self.findings  # the reference's verdicts are the target's, judged just above
        reference_status = self.ref_session.property_status("all") if self.ref_session.monitor else {}
        if reference_status.get("status") == "violated":
            first = reference_status["first"]
            self.findings = [Finding(ERROR, step.op, index, f"the reference violated {first['property']}: "
                                     f"{first['message']}", property=first["property"])]
        return self.findings
