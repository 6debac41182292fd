"""The bridge between Hypothesis examples and campaign runs: each example is one run, with a
fresh reference and target, written as one record when it ends (docs/records.md).

In stop-at-first mode the first finding fails the example so Hypothesis shrinks it; while it
shrinks, only findings with the same signature count as failures (so it keeps the same bug).
The finding itself is handed to `on_found` as soon as its run ends, before shrinking starts, so
that a campaign killed while shrinking still has it on disk; shrinking only improves it.

A wall-clock `deadline` (the campaign's `--budget`) is checked before every run and every step:
past it, `BudgetExhausted` ends the batch at once, wherever Hypothesis is (generating or
shrinking), and the run in progress is dropped rather than recorded half-done.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import event
from isrcheck.adapters.base import Target, TargetFailure, UnsupportedConfiguration
from isrcheck.conformance.engine.hypothesis_internals import example_overran
from isrcheck.conformance.engine.run import Run, cluster_run, controller_run
from isrcheck.contract.errors import UsageError
from isrcheck.contract.operations.findings import CRASH, ERROR, Finding
from isrcheck.contract.operations.step import Step


class BudgetExhausted(BaseException):
    """The campaign's deadline passed. A BaseException, like KeyboardInterrupt, because Hypothesis
    must not take it for a failure of the example and start shrinking it: it propagates at once."""


class CannotTest(BaseException):
    """The target could not be set up at all (a `UsageError` at `open`: a harness that does not
    compile, a missing KAFKA_HOME): "could not test" (exit 2), never a run's finding. A
    BaseException so that Hypothesis neither counts nor shrinks it; the campaign re-raises the
    `UsageError` it carries."""

    def __init__(self, error: UsageError) -> None:
        super().__init__(str(error))
        self.error = error


class FindingFailure(AssertionError):
    """Raised inside a Hypothesis example so that it shrinks the interleaving."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(f"{finding.signature}: {finding.message}")
        self.finding = finding


@dataclass
class FinishedRun:
    run: Run
    seconds: float
    started_at: float
    cut_short: bool = False
    """Hypothesis stopped the run before its steps were done: it ran out of the choices it allowed
    the example (hypothesis_internals.example_overran), and does not count it as an example."""


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
    observable_fields: frozenset[str] | None = None
    """The fields the target's observations report truthfully (None: all; `Target.observable_fields`)."""
    level: str = "controller"
    target_is_reference: bool = False
    """The target is the reference itself (cluster level, no mutant): each run uses one simulation
    as both sides (`Run.shared`) instead of stepping two identical ones."""
    first_signature: str | None = None
    shrinking: bool = False
    last_failing: FinishedRun | None = None
    held: FinishedRun | None = None
    found_at: float | None = None
    """time.monotonic() when the first finding's run ended, before shrinking began."""
    steps_executed: int = 0
    deadline: float | None = None
    """time.time() after which no run or step starts (None: no budget)."""
    on_found: Callable[[FinishedRun], None] | None = None
    """Called with the first finding's run before shrinking starts (to put it on disk)."""
    out_of_time: bool = False
    skip_reason: str | None = None
    """Why the target refused the campaign's configuration (UnsupportedConfiguration at `open`).
    The configuration is the same for every run, so only the first such run is opened and
    recorded; the later ones of the batch are not even opened (`silent`), and the worker stops."""
    _started: dict[int, float] = field(default_factory=dict)

    def supports(self, op: str) -> bool:
        return op not in self.unsupported

    def observes(self, field: str) -> bool:
        return self.observable_fields is None or field in self.observable_fields

    def check_deadline(self) -> None:
        if self.deadline is not None and time.time() >= self.deadline:
            self.out_of_time = True
            raise BudgetExhausted()

    def start_run(self) -> Any:
        self.check_deadline()
        reference = self.make_reference()
        target = reference if self.target_is_reference else self.make_target()
        reference.open(self.release, self.config)
        if self.level == "cluster":
            run = cluster_run(reference, target, self.release)
        else:
            run = controller_run(reference, target, self.release, self.differential, self.observes_target)
        if self.skip_reason is not None:
            run.skip_reason, run.silent = self.skip_reason, True
        elif target is not reference:
            try:
                target.open(self.release, self.config)
            except UnsupportedConfiguration as error:
                run.skip_reason = self.skip_reason = str(error) or type(error).__name__
            except UsageError as error:
                raise CannotTest(error) from None
            except TargetFailure as failure:
                run.findings = [Finding(failure.kind, "open", 0, f"open: {failure}")]
            except Exception as error:  # a plug-in bug is an outcome (crash), as during execute
                run.findings = [Finding(CRASH, "open", 0, f"open: {type(error).__name__}: {error}",
                                        evidence={"traceback": traceback.format_exc(limit=5)})]
        self._started[id(run)] = time.time()
        return run

    def execute(self, run: Run, step: Step) -> None:
        if run.stopped:
            return
        self.check_deadline()
        try:
            findings = run.step(step)
        except Exception as error:  # isrcheck's own failure (the reference, a checker): recorded as `error`
            run.findings = findings = [Finding(
                ERROR, step.op, len(run.trace), f"isrcheck failed: {type(error).__name__}: {error}",
                evidence={"traceback": traceback.format_exc(limit=8)},
            )]
        if not self.shrinking:
            self.steps_executed += 1
        if not findings or not self.stop_at_first or all(f.known for f in findings):
            return  # a run that only diverged as a known divergence ends there, but is no failure to shrink
        signature = findings[0].signature
        if self.first_signature is None:
            self.first_signature = signature
        if signature == self.first_signature:
            event(signature)
            raise FindingFailure(findings[0])

    def finish_run(self, run: Run) -> None:
        started = self._started.pop(id(run), time.time())
        finished = FinishedRun(run, time.time() - started, started, cut_short=example_overran())
        run.reference.close()
        if run.skip_reason is None and run.target is not run.reference:
            run.target.close()
        if self.out_of_time or run.silent:
            return  # cut short by the budget, or a refused configuration already recorded once
        failing = (bool(run.findings) and run.findings[0].signature == self.first_signature
                   and not all(f.known for f in run.findings))
        if self.stop_at_first and failing:
            if not self.shrinking:
                self.held = finished
                self.found_at = time.monotonic()
                self.shrinking = True
                if self.on_found is not None:
                    self.on_found(finished)
            self.last_failing = finished
            return
        if not self.shrinking:
            self.on_run(finished)
