"""The main job (`isrcheck pipeline`) as a user runs it: wall time (issue target: within 2.5
minutes on 2 cores) and the peak memory of its whole process tree, JVM included.

Every 0.2 s the benchmark reads /proc for every descendant of the pipeline process (campaign
workers, serve-controller children, Spark's JVM and its Python workers) and sums their resident
memory; the peak of that sum is printed beside the peak of the JVM alone. The pipeline's own
lines (one verdict per campaign) are passed through, then the verdict counts, the load average
before and after and the slowest campaigns. The output directory is removed unless --keep.

    python bench/pipeline.py [--keep DIR] [--write docs/results/pipeline.md] [-- extra pipeline options]

With `--write PATH` the figures are also written as markdown under a header naming the command,
the commit and the machine (bench/results_file.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from results_file import markdown_table, write_results

ROOT = Path(__file__).resolve().parent.parent
JOB_LINE = re.compile(r"^\[\s*\d+/\d+\] (\S+)\s+(.*) \((\d+) runs, ([\d.]+) s\)$")


def process_table() -> dict[int, tuple[int, int, str]]:
    """pid → (parent pid, resident KiB, command) for every process /proc shows now."""
    table: dict[int, tuple[int, int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/status", encoding="utf-8", errors="replace") as status:
                rss = next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read(300).replace(b"\0", b" ").decode(errors="replace")
        except (OSError, StopIteration, IndexError, ValueError):
            continue  # it ended while we looked
        table[int(entry)] = (int(fields[1]), rss, command)
    return table


def tree_memory(root: int) -> tuple[int, int, int]:
    """(KiB resident in `root` and all its descendants, of which in JVMs, processes counted)."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    total = jvm = count = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid not in table:
            continue
        _, rss, command = table[pid]
        total += rss
        count += 1
        if "java" in command.split(" ", 1)[0]:
            jvm += rss
        stack.extend(children.get(pid, []))
    return total, jvm, count


def counterexample_lengths(records: Path) -> dict[str, int]:
    """Campaign (its mutant, or its adapter) → the length of its shortest counterexample."""
    lengths: dict[str, int] = {}
    for path in records.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("counterexample"):
                who = f"{record['mutant'] or 'reference'}{' (wire)' if 'wire' in record['adapter'] else ''}"
                length = record["counterexample"]["length"]
                lengths[who] = min(length, lengths.get(who, length))
    return lengths


class Sampler(threading.Thread):
    def __init__(self, root: int, every_s: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.root, self.every_s = root, every_s
        self.peak_total = self.peak_jvm = self.peak_processes = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            total, jvm, count = tree_memory(self.root)
            self.peak_total = max(self.peak_total, total)
            self.peak_jvm = max(self.peak_jvm, jvm)
            self.peak_processes = max(self.peak_processes, count)
            self.done.wait(self.every_s)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="write the pipeline's output here and keep it")
    parser.add_argument("--write", type=Path, metavar="PATH",
                        help="also write the figures as markdown with the command, commit and machine")
    parser.add_argument("extra", nargs="*", help="more `isrcheck pipeline` options (after --)")
    args = parser.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="isrcheck-bench-pipeline-")) / "out"
    load_before = os.getloadavg()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "isrcheck", "pipeline", "--out", str(out), *args.extra], cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
    )
    sampler = Sampler(process.pid)
    sampler.start()
    verdicts: Counter[str] = Counter()
    jobs: list[tuple[float, str, str]] = []
    assert process.stdout is not None
    campaigns_done = None
    for line in process.stdout:
        print(line, end="", flush=True)
        match = JOB_LINE.match(line.strip())
        if match:
            verdicts[match.group(1)] += 1
            jobs.append((float(match.group(4)), match.group(2), match.group(1)))
        elif line.startswith("campaigns done"):
            campaigns_done = time.perf_counter() - started
    code = process.wait()
    wall = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    lengths = counterexample_lengths(out / "records")
    if args.keep is None:
        shutil.rmtree(out.parent, ignore_errors=True)
    print(f"\npipeline exit {code}: {wall:.1f} s wall (target ≤ 150 s on 2 cores); campaigns "
          f"{campaigns_done or 0:.1f} s, Spark summary and report {wall - (campaigns_done or wall):.1f} s")
    print("verdicts: " + ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items())))
    print(f"peak memory of the process tree: {sampler.peak_total / 1024:.0f} MB "
          f"(JVM {sampler.peak_jvm / 1024:.0f} MB; at most {sampler.peak_processes} processes)")
    print("counterexample lengths of the findings: "
          + (", ".join(f"{who} {length}" for who, length in sorted(lengths.items())) or "none"))
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    slowest = "; ".join(f"{label} {seconds:.1f} s ({verdict})"
                        for seconds, label, verdict in sorted(jobs, reverse=True)[:6])
    print("slowest campaigns: " + slowest)
    if args.write:
        table = markdown_table(("figure", "value"), [
            ("exit code", str(code)),
            ("wall time", f"{wall:.1f} s"),
            ("campaigns", f"{campaigns_done or 0:.1f} s"),
            ("Spark summary and report", f"{wall - (campaigns_done or wall):.1f} s"),
            ("verdicts", ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items()))),
            ("peak memory of the process tree",
             f"{sampler.peak_total / 1024:.0f} MB (JVM {sampler.peak_jvm / 1024:.0f} MB)"),
            ("slowest campaigns", slowest),
        ])
        write_results(args.write, "The main job (isrcheck pipeline): time and memory",
                      f"`isrcheck pipeline --out DIR {' '.join(args.extra)}`, one process tree, as a user runs it.",
                      table, load_before[0])
    return code


if __name__ == "__main__":
    sys.exit(main())
