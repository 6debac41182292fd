"""What a property is, once: an id, its docstring, and a form for each kind of history field it
can be judged on. A run's history (isrcheck.contract.history) carries, per step, some of:

* `controller_view` — the request sent and the controller's partitions and brokers before and
  after it, as the target reports them (controller level);
* `ground_truth` — the whole system after the step, replicas' logs included (a simulation);
* `views` — what a client and an operator see of each partition, with the wall time (a black-box
  cluster's history).

A property is judged on whichever of these the run has; a property none of whose forms reads what
the run recorded is *unknown* for that run — counted in the record (`unknown`), never a pass.
Each form answers the violations it found (none: the property holds on that evidence).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from isrcheck.contract.operations.findings import VIOLATION, Finding

CONTROLLER_VIEW = "controller_view"
GROUND_TRUTH = "ground_truth"
VIEWS = "views"
FIELDS = (CONTROLLER_VIEW, GROUND_TRUTH, VIEWS)

HOLDS = "holds"
VIOLATED = "violated"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Violation:
    """One violation of one property: where it shows in the history (a step, or a black-box
    history's entry) and its evidence (JSON-able)."""

    property: str
    step: int
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property, "step": self.step, "message": self.message, "evidence": self.evidence}

    def to_finding(self, operation: str = "cluster") -> Finding:
        return Finding(VIOLATION, operation, self.step, self.message, property=self.property, evidence=self.evidence)

    @builtins.property
    def key(self) -> tuple[str, str]:
        """Identity across steps: the same violation seen again on the next step is not new."""
        return self.property, self.message


@dataclass(frozen=True)
class Property:
    """One property of docs/protocol/bugs.md's table, with the form that judges it on each kind of
    history field it can be judged on (a form is None where that field cannot show it)."""

    id: str
    controller_request: Callable[..., Finding | None] | None = None
    """controller_view, per accepted request: (step, args, result, before, after) → a finding."""
    controller_state: Callable[..., Finding | None] | None = None
    """controller_view, per partition after any step: (step, op, key, state, before) → a finding."""
    ground_truth: Callable[..., list[Violation]] | None = None
    """(observation, memory) → violations (`ground_truth_memory.History` is the memory)."""
    views: Callable[..., list[Violation]] | None = None
    """(history entries, HistoryConfig) → violations."""
    views_judged: Callable[[list[dict[str, Any]]], bool] | None = None
    """Whether a black-box history holds what the views form judges (None: any history does);
    when it does not, the property is unknown for that run."""

    @builtins.property
    def reads(self) -> frozenset[str]:
        """The history fields this property can be judged on."""
        found = set()
        if self.controller_request is not None or self.controller_state is not None:
            found.add(CONTROLLER_VIEW)
        if self.ground_truth is not None:
            found.add(GROUND_TRUTH)
        if self.views is not None:
            found.add(VIEWS)
        return frozenset(found)

    def judged_on(self, recorded: Iterable[str]) -> bool:
        """Whether a history recording `recorded` fields can judge this property at all."""
        return bool(self.reads & set(recorded))


def verdict(judged: bool, violations: Iterable[object]) -> str:
    """holds / violated / unknown, from whether the property could be judged and what it found."""
    if any(True for _ in violations):
        return VIOLATED
    return HOLDS if judged else UNKNOWN
