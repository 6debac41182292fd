"""`--workers 2` against `--workers 1` (issue target on 2 cores: at least 1.8× the steps per second).

Each campaign is a whole `isrcheck run` process, start-up included, as a user runs it; the two
run one after the other (alternating, `--repeat` times), with the same seed, so they run the same
batches. Printed per campaign: wall time, steps/s, the CPU time of the process tree, and the load
average before it started. The speed-up is only as good as the second core is free: on a machine
whose other users keep the cores busy (load average above the core count) a worker gets less
than a core, and the CPU column shows that both did the same work.

    python bench/workers.py [--examples 400] [--steps 50] [--level controller] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def campaign(workers: int, args: argparse.Namespace) -> dict[str, float]:
    load = os.getloadavg()[0]
    cpu = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "isrcheck", "run", "--level", args.level, "--examples", str(args.examples),
         "--steps", str(args.steps), "--seed", str(args.seed), "--workers", str(workers), "--json"],
        capture_output=True, text=True, check=False, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"isrcheck run --workers {workers} failed ({done.returncode}): {done.stderr[-800:]}")
    result = json.loads(done.stdout)
    return {"workers": workers, "wall_s": wall, "steps": result["steps"], "steps_per_s": result["steps"] / wall,
            "cpu_s": children_cpu() - cpu, "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=400)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--level", default="controller")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; {args.level} level, {args.examples} runs of {args.steps} steps")
    print(f"{'workers':>7} {'wall s':>7} {'steps':>6} {'steps/s':>8} {'CPU s':>6} {'load':>5}")
    ratios = []
    for _ in range(args.repeat):
        one, two = campaign(1, args), campaign(2, args)
        for figure in (one, two):
            print(f"{figure['workers']:>7.0f} {figure['wall_s']:>7.2f} {figure['steps']:>6.0f} "
                  f"{figure['steps_per_s']:>8.0f} {figure['cpu_s']:>6.2f} {figure['load']:>5.2f}", flush=True)
        ratios.append(two["steps_per_s"] / one["steps_per_s"])
    print("speed-up of 2 workers: " + ", ".join(f"{r:.2f}×" for r in ratios) + " (target ≥ 1.8× on 2 free cores)")


if __name__ == "__main__":
    main()
