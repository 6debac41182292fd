"""Where a Spark command's JVM spends its CPU, by thread: JIT compilers, driver, tasks, collector.

    python bench/spark_threads.py -- isrcheck summarize RECORDS --out OUT --master 'local[2]'
    python bench/spark_threads.py -- isrcheck summarize RECORDS --out OUT \\
        --conf spark.driver.defaultJavaOptions=-XX:TieredStopAtLevel=1

Runs the command to its end and, every 0.3 s while it runs, reads the CPU time of every thread
of each Java process it started (/proc/PID/task/TID/stat), keeping each thread's last reading
(a thread that ends keeps what it had used). Then prints the command's CPU seconds (the kernel's
accounting of it and everything it waited for, as `bench/summary.py` counts them) and the JVM
threads' CPU grouped by thread name with the trailing number dropped: `C2 CompilerThread` and
`C1 CompilerThread` are HotSpot's two JIT compilers, `Executor task launch worker` Spark's tasks,
`Thread` the py4j threads that run the driver's calls (analysis, planning, code generation), `GC
Thread` the collector, `java` the JVM's main thread (class loading at start-up). The event log
(`bench/spark_events.py`) says which jobs ran; this says what ran beside them.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def children(parent: int) -> list[int]:
    """Processes whose parent is `parent` (pyspark's `spark-submit` execs into the JVM)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry))
    return found


def java_threads(pid: int) -> dict[tuple[int, str], tuple[str, float]]:
    """CPU seconds of each thread of `pid`, by (pid, thread id): name, user + system time."""
    threads = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        threads[pid, tid] = (name, (int(fields[11]) + int(fields[12])) / TICKS)
    return threads


def group(name: str) -> str:
    """A thread's name without its number: `C2 CompilerThread0` -> `C2 CompilerThread`."""
    return re.sub(r"[-#\s]*\d+$", "", name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (put it after --)")
    if command[0] == "isrcheck":
        command = [sys.executable, "-m", "isrcheck", *command[1:]]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    last: dict[tuple[int, str], tuple[str, float]] = {}
    while process.poll() is None:
        for pid in children(process.pid):
            if Path(f"/proc/{pid}/comm").exists() and "java" in Path(f"/proc/{pid}/comm").read_text(errors="replace"):
                last.update(java_threads(pid))
        time.sleep(0.3)
    wall = time.perf_counter() - started
    # poll() reaped the command: its CPU, and that of all it waited for, is our children's
    own = resource.getrusage(resource.RUSAGE_CHILDREN)
    groups: Counter[str] = Counter()
    for name, seconds in last.values():
        groups[group(name)] += seconds
    print(f"exit {process.returncode}; {wall:.1f} s wall; command CPU {own.ru_utime + own.ru_stime:.1f} s; "
          f"JVM threads sampled {sum(groups.values()):.1f} s; load1 at end {os.getloadavg()[0]:.2f}")
    for name, seconds in groups.most_common():
        if seconds >= 0.05:
            print(f"  {seconds:7.1f}  {name}")
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
