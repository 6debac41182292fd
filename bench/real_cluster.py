"""Real-cluster runs per minute and seconds per fault (`kafka-cluster`, KAFKA_HOME processes).

Runs a seeded history campaign (`isrcheck run --adapter kafka-cluster --level cluster`) of N
runs against ../shared/kafka/<release> (or $KAFKA_HOME) and reads its records: runs per minute,
where a run's time goes (cluster start-up; the check of a kept cluster between runs; the
operations; the heal; the observations; the read-back; the read of every replica's log after the
heal, with its share of the run), and the wall seconds each kind of fault
operation took. Which cluster each run ran on is in its first `create_topic` result (`cluster`:
id, fresh or kept, seconds its open took), so cluster starts are counted from what ran.

`--workers N` shares the runs between N worker processes, each with its own kept cluster on its
own port block (`isrcheck run --workers N`); runs per minute are then counted over the campaign's
wall time, from the first run's start to the last run's end.

`--compare` runs the same seeded campaign twice in one process — one fresh cluster per run
(`reuse=0`), then clusters kept between runs — and prints both side by side with the per-step
cost table and the load average before and after each. With `--stop-at-first` each campaign stops
at its first finding and the table shows the run and the minutes it took.

Usage: python bench/real_cluster.py [--release 3.9] [--runs 3] [--steps 10] [--seed 0]
       python bench/real_cluster.py --compare [--release 3.3] [--runs 6] [--steps 4] [--seed 0]
       python bench/real_cluster.py --compare --stop-at-first --release 3.3 --steps 3 --seed 903 --runs 20
       python bench/real_cluster.py --runs 8 --steps 6 --workers 2
       python bench/real_cluster.py --from-records DIR   (the figures of a campaign already run)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

NEMESIS = {"crash", "restart", "clean_restart", "shutdown", "pause", "resume", "fail_over_controller", "net",
           "hold_alter_partition", "hold_api", "release_api"}
ARMS = (("one cluster per run", "kafka-cluster,reuse=0"), ("cluster kept between runs", "kafka-cluster"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="3.9")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="worker processes, each with its own cluster")
    parser.add_argument("--compare", action="store_true", help="one cluster per run, then kept clusters")
    parser.add_argument("--stop-at-first", action="store_true", help="stop each campaign at its first finding")
    parser.add_argument("--from-records", type=Path, metavar="DIR", help="read a campaign's records instead")
    args = parser.parse_args()
    if args.from_records is not None:
        runs = read_runs(args.from_records)
        outcomes: dict[str, int] = {}
        for run in runs:
            outcomes[run["outcome"]] = outcomes.get(run["outcome"], 0) + 1
        print(json.dumps(figures(runs, campaign_span(runs), outcomes), indent=2))
        return
    if not args.compare:
        print(json.dumps(campaign("kafka-cluster", args), indent=2))
        return
    columns = [(label, campaign(adapter, args)) for label, adapter in ARMS]
    print(table(columns))


def campaign(adapter: str, args: argparse.Namespace) -> dict[str, Any]:
    """One campaign of `args.runs` runs (stopping at the first finding with --stop-at-first)."""
    with tempfile.TemporaryDirectory(prefix="isrcheck-bench-") as records:
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        result = run_campaign(CampaignConfig(adapter=adapter, release=args.release, level="cluster",
                                             examples=args.runs, steps=args.steps, seed=args.seed,
                                             records_dir=Path(records), workers=args.workers,
                                             batch_size=-(-args.runs // args.workers),
                                             stop_at_first=args.stop_at_first, shrink_budget_s=1))
        wall = time.monotonic() - started
        runs = read_runs(Path(records))
    out = figures(runs, wall, dict(result.outcomes))
    out["workers"] = args.workers
    out["load_before_after"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    if result.seconds_to_first_finding is not None:
        found = next((n for n, run in enumerate(runs, 1) if run["findings"]), None)
        out["found_at_run"] = found
        out["minutes_to_finding"] = round(result.seconds_to_first_finding / 60, 1)
    return out


def figures(runs: list[dict[str, Any]], wall: float, outcomes: dict[str, int]) -> dict[str, Any]:
    per_op: dict[str, list[float]] = defaultdict(list)
    overhead, spans, observing, start_up, kept_check, log_reads = [], [], [], [], [], []
    log_records: list[int] = []
    composites, starts = 0, set()
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
                cluster = e["result"].get("cluster") if e["op"] == "create_topic" else None
                if cluster:
                    starts.add(cluster["cluster_id"]) if cluster["fresh"] else None
                    (start_up if cluster["fresh"] else kept_check).append(float(cluster["open_s"]))
            elif e["type"] == "replica_logs":  # every replica's log after the heal: P-LOG's evidence
                log_reads.append(e["t_end"] - e["t"])
                log_records += [len(log) for log in (e.get("replicas") or {}).values()]
            elif "t_end" in e:  # an observation took from the entry before it to its return
                observing.append(e["t_end"] - previous_end)
            previous_end = e.get("t_end", e["t"])
    faults = sum(len(v) for k, v in per_op.items() if k.split(":")[0] in NEMESIS)
    return {
        "release": runs[0]["release"] if runs else None, "runs": len(runs), "wall_s": round(wall, 1),
        "runs_per_minute": round(60 * len(runs) / wall, 2) if wall else None,
        "cluster_starts": len(starts),
        "start_up_s_mean": mean(start_up), "kept_cluster_check_s_mean": mean(kept_check),
        "outside_history_s_mean": mean(overhead),
        "faults": faults, "seconds_per_fault": round(wall / faults, 1) if faults else None,
        "history_span_s_mean": mean(spans),
        "observations": len(observing), "observe_s_mean": mean(observing),
        "observe_s_share_of_span": round(sum(observing) / sum(spans), 2) if observing and spans else None,
        "p_log_judged_runs": sum("P-LOG" not in run.get("unknown", ["P-LOG"]) for run in runs),
        "replica_log_reads": len(log_reads), "replica_log_read_s_mean": (round(statistics.mean(log_reads), 4)
                                                                         if log_reads else None),
        "replica_log_read_s_max": round(max(log_reads), 3) if log_reads else None,
        "replica_log_records_max": max(log_records, default=None),
        "replica_log_read_share_of_run": (round(sum(log_reads) / sum(run["duration_s"] for run in runs), 6)
                                          if log_reads else None),
        "composite_faults": composites,
        "op_seconds_mean": {k: round(statistics.mean(v), 2) for k, v in sorted(per_op.items())},
        "op_count": {k: len(v) for k, v in sorted(per_op.items())},
        "outcomes": outcomes,
        "findings": sorted({f["signature"] for run in runs for f in run["findings"]}),
    }


def mean(values: list[float]) -> float | None:
    return round(statistics.mean(values), 2) if values else None


def table(columns: list[tuple[str, dict[str, Any]]]) -> str:
    """The figures of each campaign side by side: one row per figure, then per operation."""
    rows: list[tuple[str, list[Any]]] = []

    def row(label: str, key: str) -> None:
        rows.append((label, [c.get(key) for _, c in columns]))

    row("load average before, after", "load_before_after")
    row("runs", "runs")
    row("wall s", "wall_s")
    row("runs per minute", "runs_per_minute")
    row("cluster starts", "cluster_starts")
    row("start-up s (per fresh cluster)", "start_up_s_mean")
    row("kept-cluster check s (per run)", "kept_cluster_check_s_mean")
    row("outside the history s (per run)", "outside_history_s_mean")
    row("history span s (per run)", "history_span_s_mean")
    row("observation s (each)", "observe_s_mean")
    row("observations", "observations")
    row("runs with P-LOG judged", "p_log_judged_runs")
    row("replica log reads (one per run)", "replica_log_reads")
    row("replica log read s (mean)", "replica_log_read_s_mean")
    row("replica log read share of run", "replica_log_read_share_of_run")
    row("records in a replica's log (max)", "replica_log_records_max")
    row("seconds per fault", "seconds_per_fault")
    row("found at run", "found_at_run")
    row("minutes to finding", "minutes_to_finding")
    row("outcomes", "outcomes")
    row("findings", "findings")
    for op in sorted({op for _, c in columns for op in c["op_seconds_mean"]}):
        rows.append((f"{op} s (count)", [f"{c['op_seconds_mean'][op]} ({c['op_count'][op]})"
                                         if op in c["op_seconds_mean"] else "-" for _, c in columns]))
    width = max(len(label) for label, _ in rows) + 2
    cells = [[json.dumps(v) if isinstance(v, (dict, list)) else str(v) for v in values] for _, values in rows]
    col = [max(len(name), *(len(c[i]) for c in cells)) + 2 for i, (name, _) in enumerate(columns)]
    lines = ["".ljust(width) + "".join(name.ljust(col[i]) for i, (name, _) in enumerate(columns))]
    for (label, _), values in zip(rows, cells, strict=True):
        lines.append(label.ljust(width) + "".join(v.ljust(col[i]) for i, v in enumerate(values)))
    return "\n".join(lines)


def campaign_span(runs: list[dict[str, Any]]) -> float:
    """Wall seconds from the first run's start to the last run's end (runs of several workers overlap)."""
    if not runs:
        return 0.0
    starts = [datetime.fromisoformat(run["started_at"].replace("Z", "+00:00")).timestamp() for run in runs]
    return max(start + run["duration_s"] for start, run in zip(starts, runs, strict=True)) - min(starts)


def read_runs(directory: Path) -> list[dict[str, Any]]:
    return [run for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()
            if ((run := json.loads(line)).get("history") or {}).get("entries")]


if __name__ == "__main__":
    main()
