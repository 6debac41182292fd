"""`isrcheck check RECORDS...`: judge the black-box cluster properties again, offline, on the
histories that records carry (`history`, written for `kafka-cluster` runs; docs/records.md),
and say where the verdict differs from the one recorded. Exit 1 when any run violates a property."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from isrcheck.conformance.engine.history_campaign import rejudge
from isrcheck.contract.errors import UsageError


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check", help="re-judge recorded cluster histories offline",
        description="Judge the black-box cluster properties (P-ACK, P-HWC, P-ELIG, P-FENCE, LeaderInIsr, P-LIVE) "
        "again on the history each record carries.")
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
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                found.append(record)
    return found


def run(args: argparse.Namespace) -> int:
    judged = violated = 0
    for record in records_in(args.records):
        if args.run is not None and record.get("run_id") != args.run:
            continue
        if not record.get("history"):
            continue
        judged += 1
        violations = rejudge(record)
        recorded = sorted({f.get("property") for f in record.get("findings", []) if f.get("property")})
        now = sorted({v.property for v in violations})
        verdict = "violated" if violations else "holds"
        agree = "" if recorded == now else f" (recorded: {', '.join(recorded) or 'nothing'})"
        print(f"{record['run_id']} {record.get('target')} Kafka {record.get('release')}: {verdict}{agree}")
        for v in violations:
            print(f"  {v.property} at entry {v.i}: {v.message}")
        violated += bool(violations)
    if judged == 0:
        raise UsageError("no record with a history (only black-box cluster runs carry one)")
    print(f"{judged} runs judged, {violated} violate a property")
    return 1 if violated else 0
