"""`isrcheck replay RECORDS.jsonl --run RUN_ID`: re-execute a recorded interleaving step by step
against the same target (reference side by side), printing both answers and the findings."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from isrcheck.adapters.base import Target
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.commands.run import LABELS
from isrcheck.conformance.engine.run import Run, controller_run
from isrcheck.conformance.engine.step_minimiser import replay_cluster_steps
from isrcheck.conformance.engine.targets import SharedTarget, TargetSpec
from isrcheck.contract.errors import UsageError
from isrcheck.contract.operations.step import Step


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "replay", help="replay a recorded run",
        description="Re-execute the steps of one recorded run (a finding collected with --collect) on the "
        "reference and the target, and report whether the same finding happens again.",
    )
    parser.add_argument("records", type=Path, help="a .jsonl records file")
    parser.add_argument("--run", required=True, metavar="RUN_ID", help="the run_id to replay")
    parser.set_defaults(handler=run)


def find_record(path: Path, run_id: str) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and record.get("run_id") == run_id:
                    return record
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None
    raise UsageError(f"{path}: no run {run_id!r}")


def run(args: argparse.Namespace) -> int:
    record = find_record(args.records, args.run)
    counterexample = record.get("counterexample") or {}
    steps = counterexample.get("steps") or []
    black_box = "entries" in (record.get("history") or {})  # a black-box cluster's history (others carry steps)
    if not steps and black_box:  # a black-box cluster run that passed: its operations
        steps = [e for e in record["history"].get("entries", [])
                 if e.get("type") == "op" and e.get("op") not in ("heal", "consume")]
    if not steps:
        raise UsageError(f"run {args.run} recorded no steps to replay")
    release = record["release"]
    if black_box:
        return replay_history(record, steps)
    cluster = record.get("level") == "cluster"
    make_target = TargetSpec(record["adapter"], record.get("mutant")).factory("cluster" if cluster else "controller")
    parsed = [Step(int(e["index"]), e["op"], dict(e["args"]), None, dict(e.get("as", {})), None) for e in steps]
    pair: Run
    if cluster:
        pair = replay_cluster_steps(parsed, make_target, release)
    else:
        reference: Target = ReferenceTarget()
        target = make_target()
        settings = record.get("settings") or {}  # the controller configuration the run had (`--setting`)
        reference.open(release, settings)
        target.open(release, settings)
        pair = controller_run(reference, target, release, differential=bool(record.get("differential", True)))
        pair.partitions.extend(sorted({(str(s["args"]["topic"]), p) for s in steps if s["op"] == "create_topic"
                                       for p in range(len(s["args"]["assignment"]))}))
        try:
            for step in parsed:
                if pair.step(step):
                    break
        finally:  # a real controller stops with the replay, its keep-alive thread before it
            target.close()
            if isinstance(make_target, SharedTarget):
                make_target.shutdown()
    for trace in pair.trace:
        print(f"{trace.index:>3} {trace.src} → {trace.dst}: {trace.op} {json.dumps(trace.args)}")
        print(f"      reference: {json.dumps(trace.reference)}")
        if trace.target != trace.reference:
            print(f"      target:    {json.dumps(trace.target)}")
    for finding in pair.findings:
        label = "KNOWN" if finding.known else LABELS.get(finding.kind, "FOUND")
        print(f"{label} {finding.signature}: {finding.message}")
    if pair.findings and all(f.known for f in pair.findings):
        print("reproduced: a known divergence (docs/known-divergences.md), not a finding")
        return 0
    if pair.findings:
        return 1
    print("the recorded finding did not reproduce")
    return 0


def replay_history(record: dict[str, Any], steps: list[dict[str, Any]]) -> int:
    """A black-box cluster run: the recorded operations again on a fresh cluster, judged on the
    new history (the cluster's answers and timings are its own: a real system may not repeat)."""
    from isrcheck.conformance.engine.cluster_history import run_history
    from isrcheck.conformance.properties.black_box_history import HistoryConfig

    target = TargetSpec(record["adapter"]).factory("cluster")()
    config = HistoryConfig.from_json(record["history"].get("config") or {})
    history, findings = run_history(target, record["release"], [(s["op"], dict(s["args"])) for s in steps], config)
    for entry in history:
        if entry["type"] == "op":
            print(f"{entry['i']:>3} {entry['t']:>7.2f}s {entry['op']} {json.dumps(entry['args'])} → "
                  f"{json.dumps(entry['result'])[:300]}")
    for finding in findings:
        print(f"FOUND {finding.property} at entry {finding.step}: {finding.message}")
    if findings:
        return 1
    print("the recorded finding did not reproduce")
    return 0
