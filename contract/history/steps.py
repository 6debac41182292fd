"""The history of one run: one append-only entry per executed step, the same shape at every level
(controller pair, simulated cluster, real cluster, kafka-jvm, plug-ins). Jepsen splits a test the
same way: the run only records, the checkers judge the record — during the run, step by step
(stop-at-first and shrinking need that), or offline from a run record (`isrcheck check`).

A step holds the operation and its arguments, each side's result and observation, and the wall
time; the ground truth (`ground_truth.ClusterObservation`) only where a simulation shows it. A
field a level does not record stays None, and a checker that needs it answers *unknown* rather
than passing (conformance/properties/checker.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.history.ground_truth import ClusterObservation

REFERENCE = "reference"
TARGET = "target"


@dataclass(frozen=True, slots=True)
class SideRecord:
    """What one side (the reference or the target) answered to a step, and what it showed after it."""

    result: dict[str, Any] | None
    """The operation's result fields (None: the side did not run it, or failed before answering)."""
    args: dict[str, Any] | None = None
    """The arguments this side was sent, resolved against its own state (broker epochs differ)."""
    observation: ControllerObservation | None = None
    """The controller's partitions and brokers after the step, as this side reports them."""
    views: tuple[dict[str, Any], ...] | None = None
    """Black-box views taken after the step: what a client and an operator see of each partition
    (`adapters/real_kafka`; the `observe` entries of a cluster history)."""
    ground_truth: ClusterObservation | None = None
    """The whole system after the step, replicas' logs included (simulations only)."""


@dataclass(frozen=True, slots=True)
class HistoryStep:
    index: int
    """1-based, the trace's step number."""
    op: str
    args: dict[str, Any]
    """The step as generated (before either side resolved it)."""
    target: SideRecord
    reference: SideRecord | None = None
    """None where no reference runs alongside (a black-box cluster) or where one simulation plays
    both sides (the reference against itself)."""
    t: float | None = None
    """Seconds since the run started when the step began (None where the level does not time steps)."""
    t_end: float | None = None


@dataclass
class RunHistory:
    """Append-only: a checker may read every step up to the last, and nothing is ever changed."""

    level: str
    steps: list[HistoryStep] = field(default_factory=list)

    def append(self, step: HistoryStep) -> None:
        self.steps.append(step)

    def __iter__(self) -> Iterator[HistoryStep]:
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def last(self) -> HistoryStep | None:
        return self.steps[-1] if self.steps else None
