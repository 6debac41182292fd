"""`isrcheck check RECORDS...`: judge runs again, offline, on the histories their records carry
(`history`: every black-box cluster run, every run that did not pass, and every run of `isrcheck run
--record-history`; docs/records.md), with the checkers the run used live, and say where the
verdict differs from the one recorded and which properties the history could not judge. Exit 1
when any run violates a property or diverges, or a verdict differs from its record."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from isrcheck.conformance.engine.rejudge import rejudge_record
from isrcheck.contract.errors import UsageError
from isrcheck.contract.operations.findings import VIOLATION, Finding


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check", help="re-judge recorded run histories offline",
        description="Judge each run again on the history its record carries: the black-box cluster properties "
        "(P-ACK, P-HWC, P-ELIG, P-FENCE, LeaderInIsr, P-LIVE) on a cluster history, the differential and the "
        "controller properties (P-ELIG, P-LEAD, LeaderInIsr) on a controller-level history.")
    parser.add_argument("records", type=Path, nargs="+", help=".jsonl records files")
    parser.add_argument("--run", metavar="RUN_ID", help="only this run")
    parser.set_defaults(handler=run)


def records_in(paths: list[Path]) -> list[dict[str, Any]]:
    found = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise UsageError(f"{path}: cannot read: {error.strerror}") from None
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):  # one record, pretty-printed (docs/evidence/*.record.json)
            found.append(whole)
            continue
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                found.append(record)
    return found


def verdict_of(findings: list[Finding]) -> str:
    """The run's verdict from its findings: a property broken, a divergence, only known ones, none."""
    if any(f.kind == VIOLATION for f in findings):
        return "violated"
    if any(f.known is None for f in findings):
        return "diverged"
    return "known" if findings else "holds"


def run(args: argparse.Namespace) -> int:
    judged = failed = disagree = 0
    for record in records_in(args.records):
        if args.run is not None and record.get("run_id") != args.run:
            continue
        rejudged = rejudge_record(record)
        if rejudged is None:
            continue
        judged += 1
        recorded = sorted({str(f.get("signature")) for f in record.get("findings", [])})
        now = sorted({f.signature for f in rejudged.findings})
        verdict = verdict_of(rejudged.findings)
        agree = ""
        if recorded != now:
            disagree += 1
            agree = f" (recorded: {', '.join(recorded) or 'nothing'})"
        print(f"{record['run_id']} {record.get('target')} Kafka {record.get('release')} [{rejudged.level}, "
              f"{rejudged.steps} steps]: {verdict}{agree}")
        for finding in rejudged.findings:
            what = finding.property or finding.field or finding.kind
            print(f"  {what} at step {finding.step}: {finding.message}")
        if rejudged.unknown:
            print(f"  unknown (not judged on this history): {', '.join(rejudged.unknown)}")
        failed += verdict in ("violated", "diverged")
    if judged == 0:
        raise UsageError("no record with a history (black-box cluster runs and runs with a finding carry one; "
                         "every run with 'isrcheck run --record-history')")
    print(f"{judged} runs judged, {failed} violate a property or diverge, {disagree} disagree with their record")
    return 1 if failed or disagree else 0
