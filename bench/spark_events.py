"""Where a Spark application's time went, from its event log: one line per job.

    isrcheck summarize RECORDS --out OUT --conf spark.eventLog.enabled=true \\
        --conf spark.eventLog.dir=/tmp/events
    python bench/spark_events.py /tmp/events/local-*          # a log file, or a directory of them

For each job: its wall time, the executor run and CPU seconds of its tasks (summed over stages),
the number of tasks, the input and shuffle bytes, and the line of the driver program that
started it (Spark's call site). The totals say how much of the application's time is in jobs at
all (the rest is session start, planning and the driver).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Job:
    """What the event log says about one job."""

    job: int
    site: str = ""
    start_ms: int = 0
    end_ms: int = 0
    stages: list[int] = field(default_factory=list)


@dataclass
class Stage:
    run_ms: int = 0
    cpu_ns: int = 0
    tasks: int = 0
    input_bytes: int = 0
    shuffle_read: int = 0
    shuffle_write: int = 0


def file_text(path: Path) -> str:
    """A log part as text; Spark compresses them with zstd by default (read with the zstd tool)."""
    if path.suffix == ".zstd":
        return subprocess.run(["zstd", "-dc", str(path)], capture_output=True, check=True).stdout.decode()
    return path.read_text(encoding="utf-8")


def event_lines(path: Path) -> list[str]:
    """A log file's lines; a rolling log (`eventlog_v2_*`, Spark 4's default) is a directory of parts."""
    if path.is_dir():
        parts = sorted(path.glob("events_*"), key=lambda p: int(p.name.split("_")[1]))
        return [line for part in parts for line in file_text(part).splitlines()]
    return file_text(path).splitlines()


def read_events(path: Path) -> tuple[dict[int, Job], dict[int, Stage], tuple[int, int]]:
    jobs: dict[int, Job] = {}
    stages: dict[int, Stage] = defaultdict(Stage)
    span = (0, 0)
    for line in event_lines(path):
        event = json.loads(line)
        kind = event["Event"]
        if kind == "SparkListenerApplicationStart":
            span = (event["Timestamp"], span[1])
        elif kind == "SparkListenerApplicationEnd":
            span = (span[0], event["Timestamp"])
        elif kind == "SparkListenerJobStart":
            properties = event.get("Properties") or {}
            site = properties.get("callSite.short") or properties.get("spark.job.description") or ""
            jobs[event["Job ID"]] = Job(event["Job ID"], site, event["Submission Time"],
                                        stages=list(event.get("Stage IDs") or []))
        elif kind == "SparkListenerJobEnd" and event["Job ID"] in jobs:
            jobs[event["Job ID"]].end_ms = event["Completion Time"]
        elif kind == "SparkListenerTaskEnd":
            metrics = event.get("Task Metrics") or {}
            stage = stages[event["Stage ID"]]
            stage.tasks += 1
            stage.run_ms += metrics.get("Executor Run Time", 0)
            stage.cpu_ns += metrics.get("Executor CPU Time", 0)
            stage.input_bytes += (metrics.get("Input Metrics") or {}).get("Bytes Read", 0)
            shuffle_read = metrics.get("Shuffle Read Metrics") or {}
            stage.shuffle_read += shuffle_read.get("Remote Bytes Read", 0) + shuffle_read.get("Local Bytes Read", 0)
            stage.shuffle_write += (metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
    return jobs, stages, span


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path, help="event log files or directories holding them")
    args = parser.parse_args(argv)
    paths = [p for path in args.logs for p in (
        sorted(path.iterdir()) if path.is_dir() and not path.name.startswith("eventlog_v2_") else [path])]
    for path in paths:
        jobs, stages, (started, ended) = read_events(path)
        print(f"{path.name}: {len(jobs)} jobs, application {(ended - started) / 1000:.1f} s")
        print(f"{'job':>4} {'wall s':>7} {'run s':>7} {'cpu s':>7} {'tasks':>6} {'in MB':>7} {'shuf MB':>8}  call site")
        wall = run = cpu = 0.0
        for job in sorted(jobs.values(), key=lambda j: j.job):
            mine = [stages[s] for s in job.stages if s in stages]
            job_wall = (job.end_ms - job.start_ms) / 1000
            job_run = sum(s.run_ms for s in mine) / 1000
            job_cpu = sum(s.cpu_ns for s in mine) / 1e9
            wall, run, cpu = wall + job_wall, run + job_run, cpu + job_cpu
            print(f"{job.job:>4} {job_wall:>7.2f} {job_run:>7.2f} {job_cpu:>7.2f} {sum(s.tasks for s in mine):>6} "
                  f"{sum(s.input_bytes for s in mine) / 1e6:>7.1f} "
                  f"{sum(s.shuffle_read + s.shuffle_write for s in mine) / 1e6:>8.1f}  {job.site}")
        print(f"{'all':>4} {wall:>7.2f} {run:>7.2f} {cpu:>7.2f}   (jobs; the rest of the application is start-up, "
              "planning and the driver)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
