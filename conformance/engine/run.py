"""One run, at every level: each step executed on the target — and first on the reference, where
the level runs one alongside — appended to the run's history (contract/history/steps.py) and
judged by the run's checker (Jepsen: the run records, the checkers read the record; etcd's
robustness tests: traffic, then validate). Stop-at-first and shrinking need the verdict of each
step as it happens, so the checker judges step by step; what only a finished history shows
(a real cluster's views in time order) it judges `at_end`.

What differs between levels and targets is decided once, when the run is made (`controller_run`,
`cluster_run`, `black_box_run`) — which sides execute and what they show (`sides.py`), which
checker reads the history (`step_checkers.py`) — never by flags inside the loop:

| run | reference alongside | the target shows | checker |
|---|---|---|---|
| controller | yes | partitions and brokers (when it is observed) | differential + properties, per step |
| simulated cluster, cluster plug-in | yes, unless the target *is* the reference | ground truth | properties, per step |
| black-box cluster (`kafka-cluster`) | no | views | properties, at the end |

At the cluster level the two sides are never compared: the same operations and drawn scheduler
choices lead to different message timings as soon as an implementation batches, retries or reacts
differently, which Kafka allows (the negative controls are exactly such variations). The reference
still runs alongside because the generator draws from its state, and a property it breaks is
itself reported (an isrcheck bug, kind `error`). When the target is the reference (no mutant), one
simulation plays both sides (`shared`): it is deterministic and never compared, so a second copy
would repeat every result and verdict at twice the cost; the trace still shows both columns.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

from isrcheck.adapters.base import Target, TargetFailure
from isrcheck.conformance.engine.sides import BlackBoxSide, ControllerSide, SimulatedSide
from isrcheck.conformance.engine.step_checkers import (
    BlackBoxChecker,
    Checker,
    ControllerChecker,
    GroundTruthChecker,
)
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.p_live import PROPERTY as P_LIVE
from isrcheck.conformance.scenario.run import StepError
from isrcheck.contract.history.steps import HistoryStep, RunHistory, SideRecord
from isrcheck.contract.operations.findings import CRASH, ERROR, VIOLATION, Finding
from isrcheck.contract.operations.step import Step

CONTROLLER_ADMIN = ("create_topic", "create_partitions", "elect_leaders", "reassign")
CLUSTER_ACTORS = {
    "produce": ("producer", "leader"), "events": ("network", "network"), "tick": ("clock", "cluster"),
    "crash": ("nemesis", "broker"), "restart": ("nemesis", "broker"), "drop": ("nemesis", "network"),
    "duplicate": ("nemesis", "network"), "hold": ("nemesis", "network"), "release": ("nemesis", "network"),
    "lag_metadata": ("nemesis", "broker"), "sync_metadata": ("nemesis", "broker"),
    "fail_over_controller": ("nemesis", "controller"), "heal": ("harness", "cluster"),
}


def controller_actors(op: str, args: dict[str, Any]) -> tuple[str, str]:
    """Who sends and who receives, for the report's sequence diagram."""
    if op in CONTROLLER_ADMIN:
        return "admin", "controller"
    if op == "fence_broker":
        return "clock", "controller"
    if op == "fail_over_controller":
        return "controller", "controller"
    if "broker" in args:
        return f"broker {args['broker']}", "controller"
    return "harness", "controller"


def cluster_actors(op: str, args: dict[str, Any]) -> tuple[str, str]:
    if op in ("controlled_shutdown", "register_broker", "unfence_broker"):
        return f"broker {args['broker']}", "controller"
    if op in ("create_topic", "elect_leaders"):
        return "admin", "controller"
    src, dst = CLUSTER_ACTORS.get(op, ("harness", "controller"))
    if dst == "broker" and "broker" in args:
        dst = f"broker {args['broker']}"
    return src, dst


def black_box_actors(op: str, args: dict[str, Any]) -> tuple[str, str]:
    if op in ("produce", "consume"):
        return "client", "cluster"
    if op in ("create_topic", "heal", "replica_logs"):
        return "harness", "cluster"
    return "nemesis", "cluster"


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


def target_finding(failure: Exception, op: str, index: int, args: dict[str, Any]) -> Finding:
    """What a target that failed in a step (or in observing after it) means for the run: a
    timeout, a crash or an error of its own, a livelock as P-LIVE's violation (docs/exec-protocol.md);
    a step that could not be carried out as written is isrcheck's error; anything else a plug-in
    raised is a crash — an outcome of this run, never an aborted campaign."""
    if isinstance(failure, TargetFailure):
        kind = failure.kind if failure.kind in ("timeout", "crash", "error") else VIOLATION
        prop = P_LIVE.id if failure.kind == "livelock" else None
        return Finding(kind, op, index, f"{op}: {failure}", property=prop, evidence={"args": args})
    if isinstance(failure, StepError):
        return Finding(ERROR, op, index, f"{op}: {failure}")
    return Finding(CRASH, op, index, f"{op}: {type(failure).__name__}: {failure}",
                   evidence={"traceback": traceback.format_exc(limit=5)})


Side: TypeAlias = ControllerSide | SimulatedSide | BlackBoxSide


@dataclass
class Run:
    """One run, stepped until its first finding. Made by `controller_run`, `cluster_run` or
    `black_box_run`, which decide its sides and its checker."""

    level: str
    reference: Target
    """The reference's target; the target itself in a black-box run or when one simulation plays both."""
    target: Target
    release: str
    target_side: Side
    reference_side: Side | None
    """None: no separate reference executes the steps (a black-box run, or one simulation for both)."""
    checker: Checker
    actors: Callable[[str, dict[str, Any]], tuple[str, str]]
    """Who sends and who receives each operation, for the report's sequence diagram."""
    shared: bool = False
    """One simulation plays both sides: the trace shows its results in both columns."""
    differential: bool = False
    partitions: list[tuple[str, int]] = field(default_factory=list)
    """The partitions a controller-level run observes (the generator adds each one it creates)."""
    brokers: list[int] = field(default_factory=lambda: [1, 2, 3, 4])
    trace: list[TraceStep] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skip_reason: str | None = None
    """The target refused the configuration at `open`: the run tested nothing."""
    silent: bool = False
    """Not opened and not recorded: a later run of a campaign already known to be skipped."""
    failure: Finding | None = None
    """The finding of a target that failed (timeout, crash, livelock) rather than broke a property."""
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.history = RunHistory(self.level)
        """Every executed step, both sides (what `isrcheck check` re-judges from a record)."""

    @property
    def stopped(self) -> bool:
        return bool(self.findings) or self.skip_reason is not None

    def unknown(self) -> list[str]:
        """The properties this run could not judge."""
        return self.checker.unknown(self.history)

    def reference_states(self) -> frozenset[str]:
        """The protocol states the reference went through, as its property monitor saw them (a
        simulated cluster; the shared simulation when one plays both sides): coverage points."""
        side = self.reference_side or self.target_side
        monitor = side.session.monitor if isinstance(side, SimulatedSide) else None
        return frozenset() if monitor is None else frozenset(monitor.states)

    def now(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def step(self, step: Step) -> list[Finding]:
        if self.stopped:
            return []
        index = len(self.trace) + 1
        src, dst = self.actors(step.op, step.args)
        trace = TraceStep(index, step.op, dict(step.args), src, dst, None, None, dict(step.captures))
        self.checker.before(step, index)
        self.trace.append(trace)
        reference: SideRecord | None = None
        t = self.now()
        if self.reference_side is not None:
            try:
                ref_args, trace.reference = self.reference_side.execute(step)
            except TargetFailure as failure:
                return self.stop([Finding(ERROR, step.op, index, f"the reference failed: {failure}")])
        try:
            tgt_args, trace.target = self.target_side.execute(step)
        except Exception as failure:
            found = target_finding(failure, step.op, index, trace.args)
            if isinstance(failure, TargetFailure):
                self.failure = found
            return self.stop([found])
        if self.shared:
            trace.reference = dict(trace.target)
        t_end = self.now()
        if self.reference_side is not None:
            reference = self.reference_side.observe(step, ref_args, trace.reference)
        try:
            target = self.target_side.observe(step, tgt_args, trace.target)
        except Exception as failure:
            found = target_finding(failure, f"observe after {step.op}", index, trace.args)
            return self.stop([replace(found, operation=step.op)])
        recorded = HistoryStep(index, step.op, trace.args, target, reference, t, t_end)
        self.history.append(recorded)
        return self.stop(self.checker.judge(recorded))

    def stop(self, findings: list[Finding]) -> list[Finding]:
        self.findings = findings
        return findings

    def finish(self) -> list[Finding]:
        """The findings only the whole history shows (a black-box run's, once it has healed)."""
        if not self.stopped:
            self.findings = self.checker.at_end(self.history)
        return self.findings


def controller_run(reference: Target, target: Target, release: str, differential: bool = True,
                   observes_target: bool = True, brokers: list[int] | None = None,
                   partitions: list[tuple[str, int]] | None = None) -> Run:
    """A controller pair: both sides resolve each step against their own state and are read back
    after it (the target only when `observes_target`), and compared when `differential`. Both
    read the same `partitions` (the generator adds each one it creates) and `brokers`."""
    partitions = [] if partitions is None else partitions
    brokers = [1, 2, 3, 4] if brokers is None else brokers
    return Run("controller", reference, target, release,
               ControllerSide(target, release, partitions, brokers, observes_target),
               ControllerSide(reference, release, partitions, brokers),
               ControllerChecker(differential, target.observable_fields, reference=reference), controller_actors,
               differential=differential,
               partitions=partitions, brokers=brokers)


def cluster_run(reference: Target, target: Target, release: str) -> Run:
    """A simulated cluster (or a plug-in showing its ground truth) beside the reference cluster;
    one simulation for both when the target is the reference."""
    if target is reference:
        side = SimulatedSide(reference, release)
        return Run("cluster", reference, target, release, side, None, GroundTruthChecker(side.session, None),
                   cluster_actors, shared=True)
    target_side, reference_side = SimulatedSide(target, release), SimulatedSide(reference, release)
    return Run("cluster", reference, target, release, target_side, reference_side,
               GroundTruthChecker(target_side.session, reference_side.session), cluster_actors)


def black_box_run(target: Target, release: str, config: HistoryConfig) -> Run:
    """A cluster seen from outside: no reference, views after every step, judged at the end."""
    started = time.monotonic()
    return Run("cluster", target, target, release, BlackBoxSide(target, started), None, BlackBoxChecker(config),
               black_box_actors, started=started)
