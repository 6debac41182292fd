"""`isrcheck summarize RECORDS... --out DIR`: run records to a Parquet table and summary.json on Spark.

The heavy path, for record sets too large for one Python process or kept on a cluster; for a
report on a campaign of ordinary size `isrcheck report` summarizes in plain Python by itself.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from isrcheck.conformance.engine.spark_session import check_spark
from isrcheck.contract.errors import UsageError
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.summary_file import write_summary


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "summarize",
        help="summarize run records with Spark (a Parquet table + summary.json)",
        description="Summarize isrcheck.run/1 records with Spark. Writes one Parquet table, lines/ (status=valid: "
        "one row per run; status=corrupt: the skipped lines), and summary.json, which `isrcheck report` renders. "
        "Corrupt or truncated lines are counted and reported, never fatal.",
    )
    parser.add_argument("records", nargs="+", metavar="RECORDS",
                        help="record files (.jsonl) or directories, searched recursively for *.jsonl")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="output directory")
    add_spark_options(parser)
    parser.set_defaults(handler=run)


def add_spark_options(parser: argparse.ArgumentParser) -> None:
    """--master and --conf, shared with `isrcheck report --spark`."""
    parser.add_argument("--master", metavar="URL",
                        help="Spark master: local[*] (default), local[N], spark://HOST:PORT, yarn, "
                        "or sc://HOST:PORT for Spark Connect (paths must then be readable by the server)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="extra Spark setting, repeatable (e.g. spark.driver.memory=4g)")


def spark_conf(pairs: list[str]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair!r}: expected KEY=VALUE")
        conf[key.strip()] = value
    return conf


def summarize_with_spark(files: list[Path], out: Path, master: str | None,
                         conf: dict[str, str]) -> dict[str, Any]:
    """Start Spark, summarize, stop Spark; a failing job is reported in one line. A local JVM
    summarizing a small input runs C1 only (`spark_jit`)."""
    try:
        from pyspark.errors import PySparkException
    except ImportError:
        raise UsageError("pyspark is not installed (pip install pyspark)") from None
    from isrcheck.conformance.engine.spark_session import start_session, stop_session
    from isrcheck.reports.spark_jit import summary_conf
    from isrcheck.reports.spark_summary import summarize

    spark = start_session(master, summary_conf(files, master, conf))
    try:
        return summarize(spark, files, out)
    except PySparkException as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise UsageError(f"Spark job failed: {first_line}") from None
    finally:
        stop_session(spark)


def prepare_directory(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"{out}: cannot create output directory: {error.strerror or error}") from None


def warn_corrupt(command: str, summary: dict[str, Any]) -> None:
    """Skipped lines are not an error, but a person should know: one line on stderr."""
    corrupt = summary["corrupt"]
    if corrupt["lines"]:
        first = corrupt["examples"][0] if corrupt["examples"] else None
        where = f" (first: {first['file']}:{first['line']}: {first['reason']})" if first else ""
        print(f"isrcheck {command}: skipped {corrupt['lines']} corrupt line(s){where}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    files = find_record_files(args.records)
    conf = spark_conf(args.conf)
    check_spark(args.master)
    prepare_directory(args.out)
    started = time.monotonic()
    summary = summarize_with_spark(files, args.out, args.master, conf)
    path = write_summary(summary, args.out)
    totals = summary["totals"]
    warn_corrupt("summarize", summary)
    print(f"{totals['runs']} runs, {totals['findings']} findings in {totals['signatures']} signatures "
          f"from {len(files)} file(s) in {time.monotonic() - started:.1f} s -> {path}")
    return 0
