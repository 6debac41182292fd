"""A parsed scenario (scenario-format.md): values the loader checks and the runner executes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from isrcheck.contract.operations.releases import ReleaseSpecifier


@dataclass(frozen=True)
class Step:
    index: int
    op: str
    args: dict[str, Any]
    expect: dict[str, Any] | None
    captures: dict[str, str]
    when: ReleaseSpecifier | None


@dataclass(frozen=True)
class Scenario:
    file: str
    name: str
    source: str | None
    level: str
    kafka: ReleaseSpecifier | None
    config: dict[str, Any]
    brokers: tuple[int, ...]
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class StepFailure:
    step: int
    op: str
    field: str | None
    expected: Any
    actual: Any
    message: str


@dataclass(frozen=True)
class ScenarioResult:
    scenario: Scenario
    status: str  # "passed" | "failed" | "skipped"
    reason: str | None = None
    failure: StepFailure | None = None
    details: dict[str, Any] = field(default_factory=dict)
    violations: tuple[Any, ...] = ()
    """Cluster level: every property violation the session's monitor saw (ground truth)."""
