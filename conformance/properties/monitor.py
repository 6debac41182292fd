"""Runs the cluster-level properties over a sequence of observations and keeps what they found:
every violation once (the first step it was seen), in order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from isrcheck.conformance.properties.catalogue import ALL_PROPERTIES, STEP_PROPERTIES, TIME_BOUNDED, Check
from isrcheck.conformance.properties.checker import Violation
from isrcheck.conformance.properties.ground_truth_memory import History
from isrcheck.conformance.properties.p_live import ground_truth as p_live
from isrcheck.conformance.properties.state_coverage import run_long_states, state_points
from isrcheck.contract.history.ground_truth import ClusterObservation


class PropertyMonitor:
    def __init__(self, properties: Iterable[str] | None = None) -> None:
        names = list(STEP_PROPERTIES) if properties is None else list(properties)
        unknown = [n for n in names if n not in STEP_PROPERTIES]
        if unknown:
            raise KeyError(f"unknown properties {unknown} (known: {', '.join(STEP_PROPERTIES)})")
        self.checks = [(name, STEP_PROPERTIES[name]) for name in names]
        self.timed_checks = [(name, check) for name, check in self.checks if name in TIME_BOUNDED]
        self.history = History()
        self.violations: list[Violation] = []
        self._seen: set[tuple[str, str]] = set()
        self.liveness: list[Violation] | None = None
        """P-LIVE's violations at the last heal; None before any heal."""
        self.states: set[str] = set()
        """The protocol states the observations went through (state_coverage.py), for coverage."""
        self._last: ClusterObservation | None = None

    def observe(self, observation: ClusterObservation) -> list[Violation]:
        """Check every step property on `observation`; returns the violations not seen before."""
        last = self._last
        if last is not None and unchanged(observation, last):
            # Every step property reads only what `unchanged` compares (plus the step number, which
            # no violation's identity holds), and the History it reads after `last` differs from
            # the one `last` was judged with only by what `last` itself added: records exposed
            # below an established leader's HW that this same leader holds, and epochs whose first
            # actor is this same leader. So each check would answer violations already seen —
            # but for those that read the clock (TIME_BOUNDED), judged again — and the History
            # after this observation keeps the same maps. The state points are those of `last`
            # (already collected) but for the run-long sets, which grow on their own.
            new = self._judge(self.timed_checks, observation) if observation.now_ms != last.now_ms else []
            self.history = History(observation, self.history.exposed, self.history.epoch_actors)
            self.states |= run_long_states(observation, last)
            self._last = observation
            return new
        new = self._judge(self.checks, observation)
        self.history = self.history.advance(observation)
        self.states |= state_points(observation, self._last)
        self._last = observation
        return new

    def _judge(self, checks: list[tuple[str, Check]], observation: ClusterObservation) -> list[Violation]:
        """The violations `checks` find on `observation` that were not seen before, kept."""
        new = []
        for _, check in checks:
            for violation in check(observation, self.history):
                if violation.key not in self._seen:
                    self._seen.add(violation.key)
                    new.append(violation)
        self.violations.extend(new)
        return new

    def check_liveness(self, observation: ClusterObservation) -> list[Violation]:
        """P-LIVE on the observation taken after a heal (`Cluster.heal`, stopped early once
        `healed` holds or its budget ran out)."""
        self.observe(observation)
        found = p_live(observation, self.history)
        self.liveness = found
        new = [v for v in found if v.key not in self._seen]
        self._seen.update(v.key for v in new)
        self.violations.extend(new)
        return found

    def status(self, name: str) -> dict[str, Any]:
        """The answer to a scenario's `check_property` step: `holds`, `violated` (with the first
        violation) or, for P-LIVE before any heal, `unchecked`."""
        if name not in (*ALL_PROPERTIES, "all"):
            raise KeyError(f"unknown property {name!r} (known: {', '.join(ALL_PROPERTIES)}, all)")
        if name == "P-LIVE" and self.liveness is None:
            return {"status": "unchecked", "violations": 0}
        found = [v for v in self.violations if name == "all" or v.property == name]
        return {"status": "violated" if found else "holds", "violations": len(found),
                "first": found[0].to_json() if found else None}

    @property
    def ok(self) -> bool:
        return not self.violations


def unchanged(observation: ClusterObservation, last: ClusterObservation) -> bool:
    """Whether everything a step property reads is as it was in `last`."""
    return (
        _same(observation.replicas, last.replicas) and _same(observation.brokers, last.brokers)
        and _same(observation.partitions, last.partitions)
        and _same(observation.registrations, last.registrations)
        and _same(observation.acked, last.acked) and _same(observation.admissions, last.admissions)
        and _same(observation.data_loss, last.data_loss) and _same(observation.unclean, last.unclean)
        and _same(observation.shutting_down, last.shutting_down)
        and _same(observation.epoch_leaders, last.epoch_leaders)
        and _same(observation.epoch_isrs, last.epoch_isrs)
        and _same(observation.produce_decisions, last.produce_decisions)
    )


def _same(now: object, before: object) -> bool:
    """The same object (`Cluster.observe` hands out the last observation's maps and views again
    while nothing in them changed), else equal values (the views are frozen values: the checks
    read nothing but their fields)."""
    return now is before or now == before


def healed(observation: ClusterObservation) -> bool:
    """Whether a heal may stop: P-LIVE holds of `observation`."""
    return not p_live(observation)
