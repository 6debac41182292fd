"""Benchmark: the Spark summary beside the plain-Python summary, whole processes, same files.

    python bench/summary.py                                  # N = 10^4, 10^5, 10^6 on local[2]
    python bench/summary.py --sizes 1e7 --workdir /work/tmp  # 10^7: ~4.4 GB of records
    python bench/summary.py --master spark://127.0.0.1:27077 # a standalone cluster
    python bench/summary.py --compare-ref main               # main's Spark beside this checkout's

For each N it writes N synthetic records (`isrcheck.reports.synthetic`: mostly passes, findings
over about thirty signatures, several targets, releases and mutants, one truncated line in
20,000) as four worker files, then, one after the other on the same files, runs

  plain  a Python process that reads them with `plain_summary` and writes summary.json
  spark  `python -m isrcheck summarize` (Spark start, the job, Spark stop: what a user runs)

With --compare-ref REV, the Spark side runs twice per size, first with the code of git revision
REV (exported under the work directory and put first on PYTHONPATH) and then with this checkout,
both against the same plain run: one row each, labelled by `code`, so a change's before and after
come from the same minutes of the same machine.

The benchmark prints for each its wall time and CPU seconds (the process and every process it waited for:
Spark's JVM and Python workers included), the Spark/plain ratios, the load average of the
machine when the pair started, and whether the two summary.json documents agree. On a shared
machine the wall times vary with the load; the CPU seconds and the ratio of the pair vary less.
With --workdir, records already written there for a size are reused (`records.done` marks them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# run from a checkout without installing
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
VOLATILE = ("engine", "generated_at")


@dataclass(frozen=True)
class Measured:
    """One summary process: wall seconds, CPU seconds of it and its waited-for descendants."""

    wall: float
    cpu: float
    ok: bool
    error: str = ""


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(float(part)) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated counts, e.g. 10000,1e5") from None
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


def measure(command: list[str], code: Path = ROOT) -> Measured:
    """Run `command` to its end in `code` (a checkout: `python -m` imports from the working
    directory first) with `code` also first on PYTHONPATH; CPU seconds from the
    kernel's accounting of the child (wait4), which includes every descendant it waited for."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=code)
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    error = "" if process.returncode == 0 else stderr.decode(errors="replace").strip().splitlines()[-1:]
    return Measured(wall, usage.ru_utime + usage.ru_stime, process.returncode == 0, str(error))


def _comparable(path: Path) -> str:
    summary = json.loads(path.read_text(encoding="utf-8"))
    return json.dumps({k: v for k, v in summary.items() if k not in VOLATILE}, sort_keys=True)


def records_for(directory: Path, size: int, files: int) -> tuple[list[Path], float]:
    """The record files for `size`, written unless a previous run left them complete."""
    from isrcheck.reports.synthetic import write_records

    done = directory / "records.done"
    if done.exists() and done.read_text() == str(size):
        return sorted((directory / "records").glob("*.jsonl")), 0.0
    shutil.rmtree(directory / "records", ignore_errors=True)
    started = time.perf_counter()
    written = write_records(directory / "records", size, files=files, seed=7)
    done.write_text(str(size))
    return written, time.perf_counter() - started


def export_revision(revision: str, workdir: Path) -> tuple[str, Path]:
    """The tree of git `revision` of this checkout, exported once under `workdir`: its short name
    and directory. `isrcheck` imported from there finds that tree's modules beside it (its
    `__init__` puts its own checkout on the package path), whichever one is installed."""
    try:
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", f"{revision}^{{commit}}"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(f"bench/summary.py: --compare-ref {revision!r}: not a git revision of {ROOT}") from None
    directory = workdir / f"code-{sha}"
    if not (directory / "code.done").exists():
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
        (directory / "code.done").write_text(sha)
    return sha, directory


def this_checkout() -> str:
    """This checkout's commit, `+` when its tracked files differ from it."""
    try:
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD"], check=False).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "this"
    return sha + ("+" if dirty else "")


def plain_once(records: Path, out: Path) -> int:
    """The plain side of a pair, in its own process: read, summarize, write summary.json."""
    from isrcheck.reports.plain_summary import summarize_files
    from isrcheck.reports.records_io import find_record_files
    from isrcheck.reports.summary_file import write_summary

    write_summary(summarize_files(find_record_files([records])), out)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_sizes, default=list(DEFAULT_SIZES),
                        help="comma-separated record counts (default 10000,100000,1000000)")
    parser.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="extra Spark setting for `isrcheck summarize`, repeatable")
    parser.add_argument("--files", type=int, default=4, help="record files per set (default 4)")
    parser.add_argument("--no-spark", action="store_true", help="time the plain-Python summary only")
    parser.add_argument("--workdir", type=Path,
                        help="where records and outputs go, kept between runs (default: a temporary directory)")
    parser.add_argument("--compare-ref", metavar="REV",
                        help="also run the Spark side with the code of git revision REV, beside this checkout's")
    parser.add_argument("--plain-once", nargs=2, type=Path, metavar=("RECORDS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.plain_once:
        return plain_once(*args.plain_once)

    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="isrcheck-bench-"))).resolve()
    conf = [option for pair in args.conf for option in ("--conf", pair)]
    codes: list[tuple[str | None, Path]] = [(None, ROOT)]  # this checkout: named when it runs
    if args.compare_ref and not args.no_spark:
        codes.insert(0, export_revision(args.compare_ref, workdir))
    print(f"plain: one Python process; spark: `isrcheck summarize --master {args.master}` "
          f"{' '.join(conf)}; {os.cpu_count()} CPUs; code: {', '.join(name or 'this checkout' for name, _ in codes)}",
          flush=True)
    print(f"{'N':>10} {'MB':>7} {'code':>9} {'load1':>6} {'plain s':>8} {'plain cpu':>9} {'spark s':>8} "
          f"{'spark cpu':>9} {'wall x':>7} {'cpu x':>6} {'agree':>6}", flush=True)
    try:
        for size in args.sizes:
            directory = workdir / f"n{size}"
            files, _ = records_for(directory, size, args.files)
            megabytes = sum(f.stat().st_size for f in files) / 1e6
            plain = measure([sys.executable, str(Path(__file__).resolve()), "--plain-once",
                             str(directory / "records"), str(directory / "plain")])
            for named, code in (codes if not args.no_spark else codes[:1]):
                name = named or this_checkout()  # as it is when its run starts (`+`: with changes)
                load = os.getloadavg()[0]
                spark = None
                if not args.no_spark:
                    spark = measure([sys.executable, "-m", "isrcheck", "summarize", str(directory / "records"),
                                     "--out", str(directory / "spark"), "--master", args.master, *conf], code)
                agree = "-"
                if spark is not None:
                    agree = "yes" if plain.ok and spark.ok and _comparable(directory / "plain" / "summary.json") \
                        == _comparable(directory / "spark" / "summary.json") else "NO"
                spark_wall = f"{spark.wall:>8.1f}" if spark else f"{'-':>8}"
                spark_cpu = f"{spark.cpu:>9.1f}" if spark else f"{'-':>9}"
                ratios = (f"{spark.wall / plain.wall:>6.2f}x {spark.cpu / plain.cpu:>5.2f}x" if spark
                          else f"{'-':>7} {'-':>6}")
                print(f"{size:>10,} {megabytes:>7.1f} {name:>9} {load:>6.2f} {plain.wall:>8.1f} {plain.cpu:>9.1f} "
                      f"{spark_wall} {spark_cpu} {ratios} {agree:>6}", flush=True)
                if spark is not None and not spark.ok:
                    print(f"  spark failed: {spark.error}", flush=True)
                shutil.rmtree(directory / "spark", ignore_errors=True)
            if not plain.ok:
                print(f"  plain failed: {plain.error}", flush=True)
            shutil.rmtree(directory / "plain", ignore_errors=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
