"""Benchmark: summary wall time on Spark (local[*] by default) beside the plain-Python summary.

    python bench/summary.py                       # N = 10^4, 10^5, 10^6
    python bench/summary.py --sizes 10000,100000  # choose sizes
    python bench/summary.py --master local[2] --conf spark.driver.memory=4g

For each N it writes N synthetic records (`isrcheck.reports.synthetic`: mostly passes, findings over about
thirty signatures, several targets, releases and mutants, one truncated line in 20,000) into a
temporary directory as four worker files, summarizes them both ways, checks that the two
summary.json documents agree, and prints a table. The Spark session is started once and warmed on
a small set first, so the table shows steady-state throughput; start-up and warm-up are printed
on their own lines (a one-off `isrcheck summarize` pays both).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# run from a checkout without installing: the repository root holds the `reports` package
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.synthetic import write_records

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
VOLATILE = ("engine", "generated_at")


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(float(part)) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated counts, e.g. 10000,1e5") from None
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


def _comparable(summary: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in summary.items() if k not in VOLATILE}, sort_keys=True)


def _size_mb(files: list[Path]) -> float:
    return sum(f.stat().st_size for f in files) / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_sizes, default=list(DEFAULT_SIZES),
                        help="comma-separated record counts (default 10000,100000,1000000)")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default local[*])")
    parser.add_argument("--conf", action="append", default=["spark.driver.memory=4g"], metavar="KEY=VALUE",
                        help="Spark setting, repeatable (default spark.driver.memory=4g)")
    parser.add_argument("--files", type=int, default=4, help="record files per set (default 4)")
    parser.add_argument("--no-spark", action="store_true", help="time the plain-Python summary only")
    parser.add_argument("--workdir", type=Path, help="where to write records (default: a temporary directory)")
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="isrcheck-bench-"))
    spark = None
    try:
        if not args.no_spark:
            from isrcheck.reports.spark_summary import summarize

            from isrcheck.spark_session import start_session

            conf = dict(pair.split("=", 1) for pair in args.conf)
            started = time.perf_counter()
            spark = start_session(args.master, conf)
            print(f"spark session start ({args.master}): {time.perf_counter() - started:.1f} s", flush=True)
            warm = workdir / "warm-up"
            files = write_records(warm / "records", 2_000, files=2, seed=99)
            started = time.perf_counter()
            summarize(spark, files, warm / "out")
            print(f"spark warm-up on 2,000 records: {time.perf_counter() - started:.1f} s", flush=True)
        print(f"{'N':>10} {'MB':>7} {'generate s':>11} {'plain s':>9} {'spark s':>9} {'spark/plain':>12} "
              f"{'runs':>10} {'signatures':>11} {'agree':>6}", flush=True)
        for size in args.sizes:
            directory = workdir / f"n{size}"
            started = time.perf_counter()
            files = write_records(directory / "records", size, files=args.files, seed=7)
            generate = time.perf_counter() - started
            files = find_record_files([directory / "records"])

            started = time.perf_counter()
            plain = summarize_files(files)
            plain_s = time.perf_counter() - started
            spark_s, agree = float("nan"), "-"
            if spark is not None:
                started = time.perf_counter()
                distributed = summarize(spark, files, directory / "out")
                spark_s = time.perf_counter() - started
                agree = "yes" if _comparable(plain) == _comparable(distributed) else "NO"
            ratio = f"{spark_s / plain_s:.2f}x" if spark is not None else "-"
            print(f"{size:>10,} {_size_mb(files):>7.1f} {generate:>11.1f} {plain_s:>9.1f} {spark_s:>9.1f} "
                  f"{ratio:>12} {plain['totals']['runs']:>10,} {plain['totals']['signatures']:>11} {agree:>6}",
                  flush=True)
            shutil.rmtree(directory, ignore_errors=True)
    finally:
        if spark is not None:
            spark.stop()
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
