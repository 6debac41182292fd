"""Running a mutant's proof scenario (tests/mutants/scenarios/) on the cluster model, with the
mutant's `cluster_options`, and collecting every property the monitor saw violated. (A plain
module, imported by name: tests/ has no packages.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isrcheck.adapters.reference.cluster_target import ReferenceClusterTarget
from isrcheck.conformance.properties.checker import Violation
from isrcheck.conformance.scenario.load import load_file
from isrcheck.conformance.scenario.run import run_scenario
from isrcheck.reference_impl.mutants import mutant_named

SCENARIOS = Path(__file__).resolve().parent / "scenarios"

SETTLE_CAP = 5_000
"""Scheduler events one `settle` may take before the cluster counts as livelocked (the model's
default, 200,000, takes a minute to reach; a mutant that livelocks gets there in a few seconds)."""


class CappedClusterTarget(ReferenceClusterTarget):
    """The reference cluster target whose `settle` gives up after `SETTLE_CAP` events."""

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        super().open(release, config)
        cluster = self.cluster
        settle = cluster.settle
        cluster.settle = lambda max_events=SETTLE_CAP: settle(max_events)  # type: ignore[method-assign]


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str
    reason: str | None
    violations: tuple[Violation, ...]

    @property
    def violated(self) -> set[str]:
        """Properties seen violated; a livelock (`settle` never quiet) counts as P-LIVE."""
        found = {v.property for v in self.violations}
        if self.reason is not None and "never went quiet" in self.reason:
            found.add("P-LIVE")
        return found


def run_file(path: Path, mutant: str | None, release: str = "4.1") -> list[Outcome]:
    """Every scenario of `path` on a fresh cluster target (the reference, or with `mutant`)."""
    options = {} if mutant is None else mutant_named(mutant).cluster_kwargs()
    outcomes = []
    for scenario in load_file(path):
        target = CappedClusterTarget(**options)
        result = run_scenario(scenario, target, release)
        outcomes.append(Outcome(scenario.name, result.status, result.reason, result.violations))
    return outcomes
