"""`summary.json` computed in plain Python, one pass over the records.

No JVM to start, so it is the fast path for the HTML report on a laptop-sized campaign, and the
yardstick the Spark summary is checked against: for the same records both produce the same
document, apart from `engine` and `generated_at` (see `summary_layout` for the shared rules).
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from isrcheck.reports import summary_layout as layout
from isrcheck.reports.records_io import RecordReader
from isrcheck.reports.summary_file import now_utc


@dataclass
class _Signature:
    findings: int = 0
    runs: int = 0
    targets: set[str] = field(default_factory=set)
    releases: set[str] = field(default_factory=set)
    mutants: set[str] = field(default_factory=set)
    first_seen: str = ""
    last_seen: str = ""
    first_key: tuple[str, str, int] | None = None
    parts: dict[str, Any] = field(default_factory=dict)
    shortest_key: tuple[int, int, str, str] | None = None
    shortest: dict[str, Any] | None = None


@dataclass
class _Mutant:
    # per run in input order: (started_at, run_id, steps, first detecting step or None)
    runs: list[tuple[str, str, int, int | None]] = field(default_factory=list)
    signatures: set[str] = field(default_factory=set)
    negative_control: bool = False


@dataclass
class PlainSummary:
    """Accumulates records one at a time; `document()` turns the totals into summary.json."""

    runs: int = 0
    steps_total: int = 0
    seconds: Decimal | None = None
    findings: int = 0
    runs_with_findings: int = 0
    campaigns: set[str] = field(default_factory=set)
    outcomes: Counter[str] = field(default_factory=Counter)
    targets: set[str] = field(default_factory=set)
    releases: set[str] = field(default_factory=set)
    steps: array[int] = field(default_factory=lambda: array("q"))
    durations: array[float] = field(default_factory=lambda: array("d"))
    # (started_at, run_id, findings, signatures) per run, for the timeline
    order: list[tuple[str, str, int, tuple[str, ...]]] = field(default_factory=list)
    matrix_runs: Counter[tuple[str, str]] = field(default_factory=Counter)
    matrix_failing: Counter[tuple[str, str]] = field(default_factory=Counter)
    cells: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    signatures: dict[str, _Signature] = field(default_factory=dict)
    mutants: dict[str, _Mutant] = field(default_factory=lambda: defaultdict(_Mutant))

    def add(self, record: dict[str, Any]) -> None:
        started, run_id = record["started_at"], record["run_id"]
        target, release, mutant = record["target"], record["release"], record["mutant"]
        findings: list[dict[str, Any]] = record["findings"]
        self.runs += 1
        self.steps_total += record["steps"]
        seconds = layout.seconds_decimal(float(record["duration_s"]))
        if seconds is not None:
            self.seconds = seconds if self.seconds is None else self.seconds + seconds
        self.findings += len(findings)
        self.runs_with_findings += bool(findings)
        self.campaigns.add(record["campaign_id"])
        self.outcomes[record["outcome"]] += 1
        self.targets.add(target)
        self.releases.add(release)
        self.steps.append(record["steps"])
        self.durations.append(float(record["duration_s"]))
        self.matrix_runs[target, release] += 1
        self.matrix_failing[target, release] += bool(findings)
        signatures = tuple(dict.fromkeys(f["signature"] for f in findings))
        self.order.append((started, run_id, len(findings), signatures))
        for column in {layout.matrix_column(f["kind"], f["property"]) for f in findings}:
            self.cells[target, release, column] += 1
        for index, finding in enumerate(findings):
            self._add_finding(record, index, finding)
        for name in signatures:
            self.signatures[name].runs += 1
        if mutant is not None:
            detecting = [f for f in findings if f["kind"] != layout.NOT_DETECTING]
            first_step = min((f["step"] for f in detecting), default=None)
            self.mutants[mutant].runs.append((started, run_id, record["steps"], first_step))
            self.mutants[mutant].signatures.update(f["signature"] for f in detecting)
            self.mutants[mutant].negative_control |= record.get("negative_control") is True

    def _add_finding(self, record: dict[str, Any], index: int, finding: dict[str, Any]) -> None:
        started, run_id = record["started_at"], record["run_id"]
        stats = self.signatures.setdefault(finding["signature"], _Signature(first_seen=started,
                                                                           last_seen=started))
        stats.findings += 1
        stats.targets.add(record["target"])
        stats.releases.add(record["release"])
        if record["mutant"] is not None:
            stats.mutants.add(record["mutant"])
        stats.first_seen = min(stats.first_seen, started)
        stats.last_seen = max(stats.last_seen, started)
        key = (started, run_id, index)
        if stats.first_key is None or key < stats.first_key:
            stats.first_key = key
            stats.parts = {name: finding[name] for name in ("kind", "operation", "property", "field")}
            stats.parts["codes"] = list(finding["codes"])
        counterexample = record["counterexample"]
        if counterexample is not None:
            # a counterexample is shrunk for its run's first finding (docs/records.md); a run where
            # this signature comes later still shows it, but ranks after any run it owns
            owned = record["findings"][0]["signature"] == finding["signature"]
            candidate = (0 if owned else 1, counterexample["length"], started, run_id)
            if stats.shortest_key is None or candidate < stats.shortest_key:
                stats.shortest_key = candidate
                stats.shortest = shortest_entry(record, finding["signature"])

    def document(self, reader: RecordReader) -> dict[str, Any]:
        return {
            "format": layout.FORMAT,
            "engine": "python",
            "generated_at": now_utc(),
            "inputs": {"files": len(reader.files), "lines": reader.lines},
            "totals": self._totals(reader),
            "corrupt": corrupt_section(reader.corrupt, reader.reasons,
                                       [vars(example) for example in reader.examples]),
            "outcomes": {name: self.outcomes[name] for name in layout.outcome_order(self.outcomes)},
            "targets": sorted(self.targets),
            "releases": layout.sorted_releases(self.releases),
            "matrix": self._matrix(),
            "signatures": self._signatures(),
            "distributions": {
                "steps": distribution(sorted(self.steps), layout.STEPS_EDGES, integral=True),
                "duration_s": distribution(sorted(self.durations), layout.DURATION_EDGES, integral=False),
            },
            "timeline": self._timeline(),
            "mutants": self._mutants(),
        }

    def _totals(self, reader: RecordReader) -> dict[str, Any]:
        started = [entry[0] for entry in self.order]
        return {
            "runs": self.runs,
            "steps": self.steps_total,
            "seconds": layout.seconds_total(self.seconds),
            "findings": self.findings,
            "runs_with_findings": self.runs_with_findings,
            "signatures": len(self.signatures),
            "targets": len(self.targets),
            "releases": len(self.releases),
            "mutants": len(self.mutants),
            "campaigns": len(self.campaigns),
            "corrupt_lines": reader.corrupt,
            "first_started_at": min(started, default=None),
            "last_started_at": max(started, default=None),
        }

    def _matrix(self) -> dict[str, Any]:
        columns = layout.column_order(column for _, _, column in self.cells)
        rows = []
        for target, release in sorted(self.matrix_runs, key=lambda k: (k[0], layout.release_key(k[1]))):
            rows.append({
                "target": target,
                "release": release,
                "runs": self.matrix_runs[target, release],
                "runs_with_findings": self.matrix_failing[target, release],
                "cells": {c: self.cells[target, release, c] for c in columns
                          if self.cells[target, release, c]},
            })
        return {"columns": columns, "rows": rows}

    def _signatures(self) -> list[dict[str, Any]]:
        entries = []
        for name, stats in self.signatures.items():
            entries.append({
                "signature": name,
                **stats.parts,
                "column": layout.matrix_column(stats.parts["kind"], stats.parts["property"]),
                "findings": stats.findings,
                "runs": stats.runs,
                "targets": sorted(stats.targets),
                "releases": layout.sorted_releases(stats.releases),
                "mutants": sorted(stats.mutants),
                "first_seen": stats.first_seen,
                "last_seen": stats.last_seen,
                "shortest": stats.shortest,
            })
        return sorted(entries, key=lambda e: (-e["findings"], e["signature"]))

    def _timeline(self) -> dict[str, Any]:
        ordered = sorted(self.order, key=lambda entry: (entry[0], entry[1]))
        buckets: list[dict[str, Any]] = []
        seen: set[str] = set()
        for rank, (started, _, findings, signatures) in enumerate(ordered):
            index = layout.bucket_of(rank, len(ordered))
            if index == len(buckets):
                buckets.append({"bucket": index, "runs": 0, "runs_with_findings": 0, "findings": 0,
                                "new_signatures": 0, "first_started_at": started})
            bucket = buckets[index]
            bucket["runs"] += 1
            bucket["runs_with_findings"] += bool(findings)
            bucket["findings"] += findings
            bucket["new_signatures"] += len(set(signatures) - seen)
            bucket["last_started_at"] = started
            seen.update(signatures)
        return {"buckets": finish_timeline(buckets)}

    def _mutants(self) -> list[dict[str, Any]]:
        entries = []
        for name, stats in self.mutants.items():
            runs = sorted(stats.runs, key=lambda run: (run[0], run[1]))
            entry: dict[str, Any] = mutant_entry(name, len(runs),
                                                 sum(run[3] is not None for run in runs),
                                                 sorted(stats.signatures), stats.negative_control)
            prior_steps = 0
            for ordinal, (started, run_id, steps, first_step) in enumerate(runs, start=1):
                if first_step is not None:
                    entry.update(runs_to_first_finding=ordinal,
                                 steps_to_first_finding=prior_steps + first_step,
                                 first_finding_at=started, first_finding_run=run_id)
                    break
                prior_steps += steps
            entries.append(entry)
        return sorted(entries, key=lambda e: e["mutant"])


def shortest_entry(record: dict[str, Any], signature: str) -> dict[str, Any]:
    """What the report shows of the run holding a signature's shortest counterexample."""
    findings = record["findings"]
    return {
        "run_id": record["run_id"],
        "started_at": record["started_at"],
        "target": record["target"],
        "release": record["release"],
        "mutant": record["mutant"],
        "seed": record["seed"],
        "length": record["counterexample"]["length"],
        # false when the counterexample was shrunk for another finding of the run (the first)
        "first_finding": findings[0]["signature"] == signature,
        "finding": next(f for f in findings if f["signature"] == signature),
        "run_first_signature": findings[0]["signature"],
        "counterexample": record["counterexample"],
        "replay": record["replay"],
    }


def corrupt_section(lines: int, reasons: Counter[str], examples: list[dict[str, Any]]) -> dict[str, Any]:
    ranked = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))[: layout.CORRUPT_REASONS]
    return {
        "lines": lines,
        "reasons": [{"reason": reason, "lines": count} for reason, count in ranked],
        "examples": examples[: layout.CORRUPT_EXAMPLES],
    }


def distribution(values: Sequence[float], edges: Sequence[float], integral: bool) -> dict[str, Any] | None:
    """min / median / p90 / max and a 1-2-5 histogram of already sorted values."""
    if not values:
        return None
    counts: Counter[int] = Counter(layout.bin_index(v, edges) for v in values)
    return {
        "min": values[0],
        "median": layout.percentile(values, layout.PERCENTILES[0]),
        "p90": layout.percentile(values, layout.PERCENTILES[1]),
        "max": values[-1],
        "histogram": layout.histogram(dict(counts), edges, integral),
    }


def finish_timeline(buckets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add the running totals a discovery curve plots: runs so far, signatures so far."""
    runs = signatures = 0
    for bucket in buckets:
        runs += bucket["runs"]
        signatures += bucket["new_signatures"]
        bucket["runs_so_far"] = runs
        bucket["signatures_so_far"] = signatures
    return buckets


def mutant_entry(name: str, runs: int, detecting: int, signatures: list[str], negative_control: bool
                 ) -> dict[str, Any]:
    """`negative_control` comes from the records (the catalogue's word, written by the engine): a
    mutant id the catalogue does not know (a plug-in's own) is an ordinary mutant."""
    return {
        "mutant": name,
        "runs": runs,
        "runs_with_findings": detecting,
        "detected": detecting > 0,
        "negative_control": negative_control,
        "signatures": signatures,
        "runs_to_first_finding": None,
        "steps_to_first_finding": None,
        "first_finding_at": None,
        "first_finding_run": None,
    }


def summarize_files(files: Sequence[Path]) -> dict[str, Any]:
    """Read `files` (already expanded by `records_io.find_record_files`) into summary.json."""
    reader = RecordReader(files, keep_examples=layout.CORRUPT_EXAMPLES)
    summary = PlainSummary()
    for record in reader:
        summary.add(record)
    return summary.document(reader)
