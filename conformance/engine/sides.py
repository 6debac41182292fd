"""How one system under a run executes a step and shows what it did: one `Side` per kind of
system, chosen once per run by what the system can show (`adapters/base.py`), never per step.

Every side answers the same two calls: `execute` (the step's concrete arguments and the result)
and `observe` (the step's `SideRecord`: the result with what the system shows after it). What differs is only
what there is to show:

* `ControllerSide` — a controller (the reference's, a real one over the wire, Kafka's in process,
  an `exec:` plug-in): its arguments resolved against its own state (broker epochs and topic ids
  are its own), then its partitions and brokers read back (`ControllerObservation`).
* `SimulatedSide` — a cluster that shows its ground truth (the simulated cluster, a mutant, a
  cluster plug-in that answers `ground_truth`): every replica's log and the controller's state.
* `BlackBoxSide` — a cluster seen from outside (a real cluster, `kafka-cluster`): per partition
  what a client and an operator see (`views`), timed, because its timings are its own. An
  exception of the system is part of what happened, kept in the result, not a failure of the run.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from isrcheck.adapters.base import REPLICA_LOGS, Target
from isrcheck.conformance.engine.observation import observe_controller
from isrcheck.conformance.scenario.run import Session
from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.history.steps import SideRecord
from isrcheck.contract.operations.step import Step

READS = ("consume", REPLICA_LOGS)
"""Black-box operations that only read: no observation follows them (the run's final reads)."""


@dataclass
class ControllerSide:
    target: Target
    release: str
    partitions: list[tuple[str, int]]
    """The partitions the run observes (the generator adds each one it creates)."""
    brokers: list[int]
    observed: bool = True
    """False: the target's state is not read after a step (its answers alone are compared)."""
    session: Session = field(init=False)

    def __post_init__(self) -> None:
        self.session = Session(self.target, self.release)

    def execute(self, step: Step) -> tuple[dict[str, Any], dict[str, Any]]:
        args, result = self.session.run_resolved(step)
        self.session.capture(step, result)
        return args, result

    def observe(self, step: Step, args: dict[str, Any], result: dict[str, Any]) -> SideRecord:
        observation: ControllerObservation | None = None
        if self.observed:
            observation = observe_controller(self.target, self.partitions, self.brokers)
        return SideRecord(result, args, observation)


@dataclass
class SimulatedSide:
    target: Target
    release: str
    session: Session = field(init=False)

    def __post_init__(self) -> None:
        self.session = Session(self.target, self.release)

    def execute(self, step: Step) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.session.run_resolved(step)

    def observe(self, step: Step, args: dict[str, Any], result: dict[str, Any]) -> SideRecord:
        """The ground truth the session judged after the operation (None: the target shows none)."""
        return SideRecord(result, ground_truth=self.session.last_truth)


@dataclass
class BlackBoxSide:
    target: Target
    started: float
    """time.monotonic() when the run started: every time in the history counts from it."""
    topics: set[str] = field(default_factory=set)
    """Every topic created so far: each is observed after every step."""

    def now(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def execute(self, step: Step) -> tuple[dict[str, Any], dict[str, Any]]:
        if step.op == REPLICA_LOGS:
            return dict(step.args), self.replica_logs(step.args)
        try:
            result = dict(self.target.execute(step.op, step.args))
        except Exception as error:  # a real system answers in many ways; the history keeps what happened
            result = {"exception": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=3)}
        if step.op == "create_topic":
            self.topics.add(str(step.args["topic"]))
        return dict(step.args), result

    def observe(self, step: Step, args: dict[str, Any], result: dict[str, Any]) -> SideRecord:
        return SideRecord(result, args, views=() if step.op in READS else tuple(self.views()))

    def replica_logs(self, args: dict[str, Any]) -> dict[str, Any]:
        """Every replica's log of one partition (`adapters.base.REPLICA_LOGS`, a target that declares
        `observes_replica_logs`); a target that fails to read them: why (P-LOG is then unknown)."""
        try:
            answer = self.target.observe(REPLICA_LOGS, args)
            # as JSON will record it: node ids as strings, records as lists (a plug-in answering int
            # ids or tuples is judged live as its record is re-judged)
            return {"replicas": {str(node): [list(record) for record in log]
                                 for node, log in answer["replicas"].items()}}
        except Exception as error:  # the history keeps what happened
            return {"error": f"{type(error).__name__}: {error}"}

    def views(self) -> list[dict[str, Any]]:
        """One view per topic. ``t`` is when the view's Metadata was answered — the start of the
        observation plus the target's ``metadata_after_s``, or the start when it does not say —
        not when the observation returned: a ListOffsets to a paused leader waits its request
        timeout after the Metadata answer, and the ISR seen is as old as that answer."""
        views = []
        for topic in sorted(self.topics):
            started = self.now()
            view = dict(self.target.observe("partition", {"topic": topic, "partition": 0}))
            seen = round(started + float(view.get("metadata_after_s", 0.0)), 3)
            views.append({"t": seen, "partition": f"{topic}-0", "view": view, "t_end": self.now()})
        return views
