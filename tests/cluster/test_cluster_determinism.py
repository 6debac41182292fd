"""Same seed → same schedule → same result, also across processes with different hash seeds."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from cluster_helpers import TOPIC, new_cluster
from isrcheck.conformance.engine.random_schedules import ScheduleConfig, run_schedule

ROOT = Path(__file__).resolve().parents[2]


def traced_run(seed: int) -> list[tuple[object, ...]]:
    cluster = new_cluster(trace=True)
    rng = random.Random(seed)
    for _ in range(400):
        roll = rng.random()
        if roll < 0.05:
            cluster.produce(TOPIC, 0, rng.choice((-1, 1)), rng.randint(1, 3))
        elif roll < 0.07 and cluster.network.inflight:
            cluster.drop(rng.choice(list(cluster.network.inflight.values())))
        else:
            cluster.step(rng)
    assert cluster.trace is not None
    return cluster.trace


def test_same_seed_same_trace() -> None:
    first, second = traced_run(11), traced_run(11)
    assert first == second and len(first) > 300
    assert traced_run(12) != first


def test_same_seed_same_schedule_result() -> None:
    config = ScheduleConfig(actions=150)
    a, b = run_schedule(3, config), run_schedule(3, config)
    assert (a.actions, a.events, a.digest) == (b.actions, b.events, b.digest)
    assert run_schedule(4, config).digest != a.digest


def test_results_do_not_depend_on_the_hash_seed() -> None:
    """Nothing iterates a hash-ordered set of strings: two interpreters with different
    PYTHONHASHSEED produce the same digest as this one."""
    code = (
        "from isrcheck.conformance.engine.random_schedules import ScheduleConfig, run_schedule;"
        "print(run_schedule(5, ScheduleConfig(actions=150)).digest)"
    )
    expected = run_schedule(5, ScheduleConfig(actions=150)).digest
    for hash_seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                                check=True)
        assert output.stdout.strip() == expected
