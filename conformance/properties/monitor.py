"""Runs the cluster-level properties over a sequence of observations and keeps what they found:
every violation once (the first step it was seen), in order."""

from __future__ import annotations

from collections.abc import Iterable

from conformance.properties.cluster_level import STEP_PROPERTIES, History, Violation, p_live
from reference_impl.cluster import Cluster
from reference_impl.observation import ClusterObservation


class PropertyMonitor:
    def __init__(self, properties: Iterable[str] | None = None) -> None:
        names = list(STEP_PROPERTIES) if properties is None else list(properties)
        unknown = [n for n in names if n not in STEP_PROPERTIES]
        if unknown:
            raise KeyError(f"unknown properties {unknown} (known: {', '.join(STEP_PROPERTIES)})")
        self.checks = [(name, STEP_PROPERTIES[name]) for name in names]
        self.history = History()
        self.violations: list[Violation] = []
        self._seen: set[tuple[str, str]] = set()
        self.liveness_checked = False

    def observe(self, observation: ClusterObservation) -> list[Violation]:
        """Check every step property on `observation`; returns the violations not seen before."""
        new = []
        for _, check in self.checks:
            for violation in check(observation, self.history):
                if violation.key not in self._seen:
                    self._seen.add(violation.key)
                    new.append(violation)
        self.violations.extend(new)
        self.history = self.history.advance(observation)
        return new

    def check_liveness(
        self, cluster: Cluster, restart: bool = False, stable_ms: int | None = None, probe: bool = True,
        max_ms: int | None = None,
    ) -> list[Violation]:
        """Heal the cluster (`Cluster.heal`) and check P-LIVE once it has held for `stable_ms`
        (or the budget `max_ms` ran out)."""
        cluster.heal(
            restart=restart, until=lambda: not p_live(cluster.observe()), stable_ms=stable_ms, probe=probe,
            max_ms=max_ms,
        )
        observation = cluster.observe()
        self.observe(observation)
        found = p_live(observation, self.history)
        self.liveness_checked = True
        new = [v for v in found if v.key not in self._seen]
        self._seen.update(v.key for v in new)
        self.violations.extend(new)
        return found

    def violated(self, name: str) -> list[Violation]:
        return [v for v in self.violations if v.property == name]

    @property
    def ok(self) -> bool:
        return not self.violations
