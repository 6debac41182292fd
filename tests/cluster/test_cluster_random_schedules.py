"""The reference passes every property on seeded random schedules (conformance/generator/schedule.py):
messages delivered in and out of order, dropped and duplicated, partitions between nodes, crashes
(with data loss where Kafka's guarantee covers it), restarts, controlled shutdowns, controller
fail-overs with zombies, metadata lag, preferred elections; P-LIVE after a final heal.

A failure prints the seed; `run_schedule(seed, ScheduleConfig(release=...))` replays it exactly.
"""

from __future__ import annotations

import pytest
from isrcheck.conformance.engine.random_schedules import ScheduleConfig, run_schedule

DEFAULT = [("4.1", start, 250) for start in range(0, 1000, 250)] + [
    (release, 0, 200) for release in ("4.0", "3.9", "3.7", "3.5", "3.3")
]
"""2,000 schedules of 100 actions: the 4.1 profile (eligible leader replicas on, data-loss crashes
allowed) gets most of them."""


def check(release: str, start: int, count: int, actions: int = 100) -> None:
    config = ScheduleConfig(release=release, actions=actions)
    failures = []
    for seed in range(start, start + count):
        result = run_schedule(seed, config)
        if not result.ok:
            failures.append(result.summary())
    assert not failures, f"{len(failures)} schedules failed on {release}:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize(("release", "start", "count"), DEFAULT)
def test_reference_passes_random_schedules(release: str, start: int, count: int) -> None:
    check(release, start, count)


@pytest.mark.slow
@pytest.mark.parametrize("release", ["4.1", "4.0", "3.9", "3.8", "3.7", "3.5", "3.3"])
def test_reference_passes_many_long_random_schedules(release: str) -> None:
    check(release, 100_000, 3000, actions=120)
    check(release, 200_000, 500, actions=600)
