"""Runs the seeded random schedules of `isrcheck.conformance.generator.schedule` on the
simulated cluster: every step property is checked after every action, P-LIVE after a final heal."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

from isrcheck.conformance.generator.schedule import Generator, ScheduleConfig, build_cluster
from isrcheck.conformance.properties.checker import Violation
from isrcheck.conformance.properties.monitor import PropertyMonitor, healed
from isrcheck.conformance.properties.p_live import livelock
from isrcheck.reference_impl.cluster import QuiescenceError

__all__ = ["ScheduleConfig", "ScheduleResult", "run_schedule"]


@dataclass(frozen=True)
class ScheduleResult:
    seed: int
    violations: tuple[Violation, ...]
    actions: tuple[str, ...]
    events: int
    digest: str

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        if self.ok:
            return f"seed {self.seed}: ok ({len(self.actions)} actions, {self.events} events)"
        first = self.violations[0]
        return f"seed {self.seed}: {first.property} at step {first.step}: {first.message}"



def run_schedule(seed: int, config: ScheduleConfig | None = None) -> ScheduleResult:
    config = ScheduleConfig() if config is None else config
    rng = random.Random(seed)
    cluster = build_cluster(config)
    monitor = PropertyMonitor()
    generator = Generator(cluster, rng, config)
    actions: list[str] = []
    monitor.observe(cluster.observe())
    try:
        for _ in range(config.actions):
            cluster.next_step()
            actions.append(generator.next())
            monitor.observe(cluster.observe())
        if config.liveness:
            cluster.next_step()
            restart = rng.random() < 0.5
            actions.append(f"heal restart={restart}")
            cluster.heal(restart=restart, until=lambda: healed(cluster.observe()), probe=True)
            monitor.check_liveness(cluster.observe())
    except (QuiescenceError, RecursionError) as error:
        monitor.violations.append(livelock(
            cluster.steps, f"livelock: {type(error).__name__}: {str(error)[:200]}",
            {"action": actions[-1] if actions else None},
        ))
    final = cluster.observe().to_json()
    digest = hashlib.sha256(
        json.dumps({"actions": actions, "events": cluster.events, "final": final}, sort_keys=True).encode()
    ).hexdigest()
    return ScheduleResult(seed, tuple(monitor.violations), tuple(actions), cluster.events, digest)
