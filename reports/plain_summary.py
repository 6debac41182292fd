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
    title: str | None = None
    ticket: str | None = None


@dataclass
class _Bug:
    findings: int = 0
    runs: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)
    releases: set[str] = field(default_factory=set)
    mutant: str | None = None
    title: str | None = None
    ticket: str | None = None
    negative_control: bool = False
    first_seen: str = ""
    last_seen: str = ""
    # signature → [findings, run ids]
    signatures: dict[str, tuple[list[int], set[str]]] = field(default_factory=dict)
    shortest_key: tuple[int, int, str, str, int] | None = None
    shortest: dict[str, Any] | None = None


@dataclass
class _Ran:
    runs: int = 0
    campaigns: set[str] = field(default_factory=set)
    seed_min: int | None = None
    seed_max: int | None = None
    versions: set[str] = field(default_factory=set)
    commits: set[str] = field(default_factory=set)


def _least(current: str | None, value: Any) -> str | None:
    """The smallest non-null string seen: both summaries pick a group's title this way."""
    if not isinstance(value, str):
        return current
    return value if current is None or value < current else current


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
    mutants: dict[tuple[str, str], _Mutant] = field(default_factory=lambda: defaultdict(_Mutant))
    bugs: dict[str, _Bug] = field(default_factory=dict)
    ran: dict[tuple[str, str, str, str, str | None], _Ran] = field(default_factory=lambda: defaultdict(_Ran))
    checked: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    properties_checked: Counter[str] = field(default_factory=Counter)
    properties_violated: Counter[str] = field(default_factory=Counter)
    properties_unknown: Counter[str] = field(default_factory=Counter)
    """Runs whose history could not judge the property (the record's `unknown`): never counted as held."""
    coverage: Counter[str] = field(default_factory=Counter)

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
        unknown = set(record.get("unknown") or [])
        for name in set(record.get("properties") or []) - unknown:  # judged: listed, and not unknown
            self.checked[target, release, name] += 1
            self.properties_checked[name] += 1
        self.properties_unknown.update(unknown)
        for name in {f["property"] for f in findings if f["kind"] == "violation" and f["property"] is not None}:
            self.properties_violated[name] += 1
        self.coverage.update(set(record.get("coverage") or []))
        self._add_ran(record)
        for index, finding in enumerate(findings):
            self._add_finding(record, index, finding)
            self._add_to_bug(record, index, finding)
        for name in signatures:
            self.signatures[name].runs += 1
        if mutant is not None:
            detecting = [f for f in findings if f["kind"] != layout.NOT_DETECTING]
            first_step = min((f["step"] for f in detecting), default=None)
            stats = self.mutants[mutant, target]
            stats.runs.append((started, run_id, record["steps"], first_step))
            stats.signatures.update(f["signature"] for f in detecting)
            stats.negative_control |= record.get("negative_control") is True
            stats.title = _least(stats.title, record.get("mutant_title"))
            stats.ticket = _least(stats.ticket, record.get("mutant_ticket"))

    def _add_ran(self, record: dict[str, Any]) -> None:
        key = (record["target"], record["adapter"], record["level"], record["release"], record["mutant"])
        ran = self.ran[key]
        ran.runs += 1
        ran.campaigns.add(record["campaign_id"])
        seed = record["seed"]
        ran.seed_min = seed if ran.seed_min is None else min(ran.seed_min, seed)
        ran.seed_max = seed if ran.seed_max is None else max(ran.seed_max, seed)
        if isinstance(record.get("isrcheck_version"), str):
            ran.versions.add(record["isrcheck_version"])
        if isinstance(record.get("commit"), str):
            ran.commits.add(record["commit"])

    def _add_to_bug(self, record: dict[str, Any], index: int, finding: dict[str, Any]) -> None:
        findings = record["findings"]
        key = layout.bug_key(finding["kind"], record["mutant"], record["adapter"], record["level"],
                             finding["operation"], findings[0]["operation"], finding.get("known"))
        started, run_id = record["started_at"], record["run_id"]
        bug = self.bugs.setdefault(key, _Bug(first_seen=started, last_seen=started))
        bug.findings += 1
        bug.runs.add(run_id)
        bug.targets.add(record["target"])
        bug.releases.add(record["release"])
        bug.first_seen = min(bug.first_seen, started)
        bug.last_seen = max(bug.last_seen, started)
        if layout.bug_kind(key) == "mutant":
            bug.mutant = record["mutant"]
            bug.title = _least(bug.title, record.get("mutant_title"))
            bug.ticket = _least(bug.ticket, record.get("mutant_ticket"))
            bug.negative_control |= record.get("negative_control") is True
        counts, runs = bug.signatures.setdefault(finding["signature"], ([0], set()))
        counts[0] += 1
        runs.add(run_id)
        counterexample = record["counterexample"]
        if counterexample is not None:
            candidate = (0 if index == 0 else 1, counterexample["length"], started, run_id, index)
            if bug.shortest_key is None or candidate < bug.shortest_key:
                bug.shortest_key = candidate
                bug.shortest = shortest_entry(record, finding["signature"])

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
            "bugs": self._bugs(),
            "ran": self._ran(),
            "properties": properties_section(self.properties_checked, self.properties_violated,
                                             self.properties_unknown),
            "coverage": [{"point": point, "runs": self.coverage[point]} for point in sorted(self.coverage)],
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
            "mutants": len({name for name, _ in self.mutants}),
            "campaigns": len(self.campaigns),
            "corrupt_lines": reader.corrupt,
            "first_started_at": min(started, default=None),
            "last_started_at": max(started, default=None),
        }

    def _matrix(self) -> dict[str, Any]:
        columns = layout.column_order([*(column for _, _, column in self.cells),
                                       *(name for _, _, name in self.checked)])
        rows = []
        for target, release in sorted(self.matrix_runs, key=lambda k: (k[0], layout.release_key(k[1]))):
            rows.append({
                "target": target,
                "release": release,
                "runs": self.matrix_runs[target, release],
                "runs_with_findings": self.matrix_failing[target, release],
                "cells": {c: self.cells[target, release, c] for c in columns
                          if self.cells[target, release, c]},
                "checked": {c: self.checked[target, release, c] for c in columns
                            if self.checked[target, release, c]},
            })
        return {"columns": columns, "rows": rows}

    def _bugs(self) -> list[dict[str, Any]]:
        entries = []
        for key, bug in self.bugs.items():
            entries.append(bug_entry(
                key, bug.findings, len(bug.runs), bug.targets, bug.releases, bug.mutant, bug.title, bug.ticket,
                bug.negative_control, bug.first_seen, bug.last_seen,
                [(name, counts[0], len(runs)) for name, (counts, runs) in bug.signatures.items()], bug.shortest))
        return sorted(entries, key=lambda e: layout.bug_sort_key(e["kind"], e["findings"], e["bug"]))

    def _ran(self) -> list[dict[str, Any]]:
        return sort_ran([ran_entry(key, ran.runs, len(ran.campaigns), ran.seed_min, ran.seed_max, ran.versions,
                                   ran.commits) for key, ran in self.ran.items()])

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
        for (name, target), stats in self.mutants.items():
            runs = sorted(stats.runs, key=lambda run: (run[0], run[1]))
            entry: dict[str, Any] = mutant_entry(name, target, len(runs),
                                                 sum(run[3] is not None for run in runs),
                                                 sorted(stats.signatures), stats.negative_control,
                                                 stats.title, stats.ticket)
            prior_steps = 0
            for ordinal, (started, run_id, steps, first_step) in enumerate(runs, start=1):
                if first_step is not None:
                    entry.update(runs_to_first_finding=ordinal,
                                 steps_to_first_finding=prior_steps + first_step,
                                 first_finding_at=started, first_finding_run=run_id)
                    break
                prior_steps += steps
            entries.append(entry)
        return sorted(entries, key=lambda e: (e["mutant"], e["target"]))


def shortest_entry(record: dict[str, Any], signature: str) -> dict[str, Any]:
    """What the report shows of the run holding a signature's shortest counterexample."""
    findings = record["findings"]
    counterexample = record["counterexample"]
    shown = [f for f in counterexample.get("findings") or [] if f.get("signature") == signature]
    return {
        "run_id": record["run_id"],
        "started_at": record["started_at"],
        "target": record["target"],
        "release": record["release"],
        "mutant": record["mutant"],
        "seed": record["seed"],
        "level": record["level"],
        # whether the two sides' results were compared: at the cluster level they never are
        "compared": bool(record["differential"]) and record["level"] != "cluster",
        "length": record["counterexample"]["length"],
        # false when the counterexample was shrunk for another finding of the run (the first)
        "first_finding": findings[0]["signature"] == signature,
        # what the counterexample itself found (docs/records.md): its message is about its steps;
        # a record without those falls back to the run's finding, marked so the report can say so
        "finding": shown[0] if shown else next(f for f in findings if f["signature"] == signature),
        "finding_of_counterexample": bool(shown),
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


def mutant_entry(name: str, target: str, runs: int, detecting: int, signatures: list[str],
                 negative_control: bool, title: str | None, ticket: str | None) -> dict[str, Any]:
    """One mutant as one target ran it (in process, or served over the wire): `negative_control`,
    title and ticket come from the records (the catalogue's word, written by the engine): a
    mutant id the catalogue does not know (a plug-in's own) is an ordinary mutant."""
    return {
        "mutant": name,
        "target": target,
        "title": title,
        "ticket": ticket,
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


def bug_entry(key: str, findings: int, runs: int, targets: set[str], releases: set[str], mutant: str | None,
              title: str | None, ticket: str | None, negative_control: bool, first_seen: str, last_seen: str,
              signatures: list[tuple[str, int, int]], shortest: dict[str, Any] | None) -> dict[str, Any]:
    """One root cause (`summary_layout.bug_key`) with its signatures folded under it."""
    return {
        "bug": key,
        "kind": layout.bug_kind(key),
        "mutant": mutant,
        "title": title,
        "ticket": ticket,
        "negative_control": negative_control,
        "findings": findings,
        "runs": runs,
        "targets": sorted(targets),
        "releases": layout.sorted_releases(releases),
        "first_seen": first_seen,
        "last_seen": last_seen,
        "signatures": [{"signature": name, "findings": count, "runs": in_runs}
                       for name, count, in_runs in sorted(signatures, key=lambda s: (-s[1], s[0]))],
        "shortest": shortest,
    }


def ran_entry(key: tuple[str, str, str, str, str | None], runs: int, campaigns: int, seed_min: int | None,
              seed_max: int | None, versions: set[str], commits: set[str]) -> dict[str, Any]:
    """What ran against one target at one level and release, with which isrcheck and seeds."""
    target, adapter, level, release, mutant = key
    return {"target": target, "adapter": adapter, "level": level, "release": release, "mutant": mutant,
            "runs": runs, "campaigns": campaigns, "seed_min": seed_min, "seed_max": seed_max,
            "versions": sorted(versions), "commits": sorted(commits)}


def sort_ran(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda e: (e["level"], e["target"], layout.release_key(e["release"]), e["adapter"]))


def properties_section(checked: Counter[str], violated: Counter[str], unknown: Counter[str]) -> list[dict[str, Any]]:
    """Every property some run checked, could not judge, or some finding named: runs that judged it
    (listed in the record's `properties` and not in its `unknown`), runs that broke it, runs whose
    history could not judge it — an unknown is shown as such, never as a pass."""
    names = layout.column_order(set(checked) | set(violated) | set(unknown))
    return [{"property": name, "runs_checked": checked.get(name, 0), "runs_violated": violated.get(name, 0),
             "runs_unknown": unknown.get(name, 0)} for name in names]


def summarize_files(files: Sequence[Path]) -> dict[str, Any]:
    """Read `files` (already expanded by `records_io.find_record_files`) into summary.json."""
    reader = RecordReader(files, keep_examples=layout.CORRUPT_EXAMPLES)
    summary = PlainSummary()
    for record in reader:
        summary.add(record)
    return summary.document(reader)
