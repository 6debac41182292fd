"""`isrcheck report INPUT... -o report.html`: one self-contained HTML page from records or a summary.

Records are summarized on the spot, in plain Python unless `--spark` is given (no JVM to start,
which is faster below a few hundred thousand runs); a summary.json, or the directory
`isrcheck summarize` wrote, is rendered as it is.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from isrcheck.commands.summarize import add_spark_options, spark_conf, summarize_with_spark, warn_corrupt
from isrcheck.contract.errors import UsageError
from isrcheck.reports.html_report import render_report
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.summary_file import is_summary_input, load_summary


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="render an HTML report from run records or a summary",
        description="Render one self-contained HTML file (no external resources) from isrcheck.run/1 "
        "records, a summary.json, or a directory written by `isrcheck summarize`.",
    )
    parser.add_argument("inputs", nargs="+", metavar="RECORDS_OR_SUMMARY",
                        help="record files or directories (*.jsonl, recursively), or one summary.json "
                        "or summary directory")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help="the HTML file to write")
    parser.add_argument("--title", default="isrcheck report", help="page title")
    parser.add_argument("--spark", action="store_true",
                        help="summarize records with Spark instead of plain Python")
    add_spark_options(parser)
    parser.set_defaults(handler=run)


def load_inputs(args: argparse.Namespace) -> dict[str, Any]:
    paths = [Path(item) for item in args.inputs]
    summaries = [path for path in paths if is_summary_input(path)]
    if summaries:
        if len(paths) > 1:
            raise UsageError("give one summary (summary.json or a summarize directory), or record files, "
                             "not both or several")
        return load_summary(summaries[0])
    if len(paths) == 1 and paths[0].suffix == ".json":
        return load_summary(paths[0])  # names the problem: missing, unreadable or not a summary
    if not args.spark and (args.master is not None or args.conf):
        raise UsageError(f"{'--master' if args.master is not None else '--conf'} needs --spark")
    files = find_record_files(args.inputs)
    if args.spark:
        with tempfile.TemporaryDirectory(prefix="isrcheck-report-") as scratch:
            summary = summarize_with_spark(files, Path(scratch), args.master, spark_conf(args.conf))
    else:
        summary = summarize_files(files)
    warn_corrupt("report", summary)
    return summary


def run(args: argparse.Namespace) -> int:
    output: Path = args.output
    if output.is_dir():
        raise UsageError(f"{output}: is a directory; give the HTML file to write")
    summary = load_inputs(args)
    page = render_report(summary, title=args.title)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(page, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"{output}: cannot write: {error.strerror or error}") from None
    totals = summary.get("totals", {})
    print(f"{output}: {totals.get('runs', 0)} runs, {totals.get('signatures', 0)} signatures")
    return 0
