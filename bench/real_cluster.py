"""Real-cluster runs per minute and seconds per fault (`kafka-cluster`, KAFKA_HOME processes).

Runs a seeded history campaign (`isrcheck run --adapter kafka-cluster --level cluster`) of N
runs against ../shared/kafka/<release> (or $KAFKA_HOME) and reads its records: runs per minute,
where a run's time goes (cluster start and stop = run duration minus the history's span; the
operations; the heal; the read-back), and the wall seconds each kind of fault operation took.

Usage: python bench/real_cluster.py [--release 3.9] [--runs 3] [--steps 10] [--seed 0]
       python bench/real_cluster.py --from-records DIR   (the figures of a campaign already run)
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

NEMESIS = {"crash", "restart", "clean_restart", "shutdown", "pause", "resume", "fail_over_controller", "net",
           "hold_alter_partition", "hold_api", "release_api"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="3.9")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from-records", type=Path, metavar="DIR", help="read a campaign's records instead")
    args = parser.parse_args()
    outcomes: dict[str, int] = {}
    if args.from_records is not None:
        runs = read_runs(args.from_records)
        wall = sum(run["duration_s"] for run in runs)
        for run in runs:
            outcomes[run["outcome"]] = outcomes.get(run["outcome"], 0) + 1
    else:
        with tempfile.TemporaryDirectory(prefix="isrcheck-bench-") as records:
            started = time.monotonic()
            result = run_campaign(CampaignConfig(adapter="kafka-cluster", release=args.release, level="cluster",
                                                 examples=args.runs, steps=args.steps, seed=args.seed,
                                                 records_dir=Path(records), batch_size=args.runs,
                                                 stop_at_first=False))
            wall = time.monotonic() - started
            runs = read_runs(Path(records))
            outcomes = dict(result.outcomes)
    per_op: dict[str, list[float]] = defaultdict(list)
    overhead, spans, observing = [], [], []
    composites = 0
    for run in runs:
        entries = run["history"]["entries"]
        span = max(e.get("t_end", e["t"]) for e in entries)
        spans.append(span)
        overhead.append(run["duration_s"] - span)
        previous_end = 0.0
        for e in entries:
            if e["type"] == "op":
                kind = e["op"] + (":disk" if e["args"].get("lose") == "disk" else "")
                per_op[kind].append(e["t_end"] - e["t"])
                composites += e["op"] == "pause" and e["args"].get("by") == "stale_expansion"
            elif "t_end" in e:  # an observation took from the entry before it to its return
                observing.append(e["t_end"] - previous_end)
            previous_end = e.get("t_end", e["t"])
    faults = sum(len(v) for k, v in per_op.items() if k.split(":")[0] in NEMESIS)
    print(json.dumps({
        "release": runs[0]["release"] if runs else args.release, "runs": len(runs), "wall_s": round(wall, 1),
        "runs_per_minute": round(60 * len(runs) / wall, 2),
        "faults": faults, "seconds_per_fault": round(wall / faults, 1) if faults else None,
        "start_and_stop_s_mean": round(statistics.mean(overhead), 1) if overhead else None,
        "history_span_s_mean": round(statistics.mean(spans), 1) if spans else None,
        "observations": len(observing),
        "observe_s_mean": round(statistics.mean(observing), 2) if observing else None,
        "observe_s_share_of_span": round(sum(observing) / sum(spans), 2) if observing and spans else None,
        "composite_faults": composites,
        "op_seconds_mean": {k: round(statistics.mean(v), 2) for k, v in sorted(per_op.items())},
        "op_count": {k: len(v) for k, v in sorted(per_op.items())},
        "outcomes": outcomes,
        "findings": sorted({f["signature"] for run in runs for f in run["findings"]}),
    }, indent=2))


def read_runs(directory: Path) -> list[dict[str, Any]]:
    return [run for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()
            if ((run := json.loads(line)).get("history") or {}).get("entries")]


if __name__ == "__main__":
    main()
