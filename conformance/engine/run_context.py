"""The bridge between Hypothesis examples and campaign runs: each example is one run, with a
fresh reference and target, written as one record when it ends (docs/records.md).

In stop-at-first mode the first finding fails the example so Hypothesis shrinks it; while it
shrinks, only findings with the same signature count as failures (so it keeps the same bug),
and no records are written until the minimal counterexample is known.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import event
from isrcheck.adapters.base import Target, TargetFailure
from isrcheck.conformance.engine.cluster_pair import ClusterPairRun
from isrcheck.conformance.engine.pair import PairRun

from isrcheck.operations.findings import Finding
from isrcheck.operations.step import Step


class FindingFailure(AssertionError):
    """Raised inside a Hypothesis example so that it shrinks the interleaving."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(f"{finding.signature}: {finding.message}")
        self.finding = finding


@dataclass
class FinishedRun:
    run: PairRun | ClusterPairRun
    seconds: float
    started_at: float


@dataclass
class RunContext:
    make_reference: Callable[[], Target]
    make_target: Callable[[], Target]
    release: str
    config: dict[str, Any]
    on_run: Callable[[FinishedRun], None]
    stop_at_first: bool = True
    differential: bool = True
    observes_target: bool = True
    unsupported: frozenset[str] = frozenset()
    level: str = "controller"
    first_signature: str | None = None
    shrinking: bool = False
    last_failing: FinishedRun | None = None
    held: FinishedRun | None = None
    found_at: float | None = None
    """time.monotonic() when the first finding's run ended, before shrinking began."""
    steps_executed: int = 0
    _started: dict[int, float] = field(default_factory=dict)

    def supports(self, op: str) -> bool:
        return op not in self.unsupported

    def start_run(self) -> Any:
        reference, target = self.make_reference(), self.make_target()
        reference.open(self.release, self.config)
        run: PairRun | ClusterPairRun
        if self.level == "cluster":
            run = ClusterPairRun(reference, target, self.release)
        else:
            run = PairRun(reference, target, self.release, self.differential, self.observes_target)
        try:
            target.open(self.release, self.config)
        except TargetFailure as failure:
            run.findings = [Finding(failure.kind, "open", 0, f"open: {failure}")]
        self._started[id(run)] = time.time()
        return run

    def execute(self, run: PairRun | ClusterPairRun, step: Step) -> None:
        if run.stopped:
            return
        findings = run.step(step)
        if not self.shrinking:
            self.steps_executed += 1
        if not findings or not self.stop_at_first:
            return
        signature = findings[0].signature
        if self.first_signature is None:
            self.first_signature = signature
        if signature == self.first_signature:
            event(signature)
            raise FindingFailure(findings[0])

    def finish_run(self, run: PairRun | ClusterPairRun) -> None:
        started = self._started.pop(id(run), time.time())
        finished = FinishedRun(run, time.time() - started, started)
        for side in (run.reference, run.target):
            side.close()
        failing = bool(run.findings) and run.findings[0].signature == self.first_signature
        if self.stop_at_first and failing:
            if not self.shrinking:
                self.held = finished
                self.found_at = time.monotonic()
                self.shrinking = True
            self.last_failing = finished
            return
        if not self.shrinking:
            self.on_run(finished)
