"""Volume triage per release and adapter: long `--collect` campaigns against real Kafka, and a
table of every signature seen with its triage (a known divergence's rule, or an untriaged finding).

    python bench/volume.py --releases 3.3,3.5,3.7,3.9 --adapters kafka-jvm --minutes 5 --out /tmp/volume
    python bench/volume.py --releases 3.9 --adapters kafka-local --minutes 10 --seeds 11,12,13 --out /tmp/volume
    python bench/volume.py --table /tmp/volume          # the table of records already written (also
                                                        # an `isrcheck qualify --out /tmp/volume/NAME`'s)
    python bench/volume.py --table /tmp/volume /tmp/more --write docs/results/volume.md

Each campaign is one `isrcheck run --level L --budget S --collect --records DIR` process (L is
cluster for kafka-cluster, controller otherwise)
(so its JVM or controller stops with it), one at a time; with `--seeds` the minutes of a release
and adapter are shared between the seeds, without it between `--campaigns` unseeded campaigns
(each seed is read back from the records). Kafka homes are `<repo>/../shared/kafka/<release>` unless `--kafka-root`.
Run it under `nice` on a shared machine. The triage column is read from the records: a finding a
known-divergence rule matched carries the rule (docs/known-divergences.md); anything else is
printed as an untriaged finding, with a replay command in its record.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from isrcheck.reports.records_io import RecordReader
from results_file import write_results  # type: ignore[import-not-found]
from volume_triage import TRIAGE_RULES, triage_of  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[1]
UNTRIAGED = "FINDING (untriaged)"

ADAPTERS = ("kafka-jvm", "kafka-local", "kafka-docker", "kafka-cluster")


@dataclass
class Cell:
    """What the records of one release × adapter hold."""

    runs: int = 0
    steps: int = 0
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)
    """campaign id → (first run's start, last run's end), epoch seconds: the campaign's wall time
    (its target's start-up before the first run is not in it)."""
    campaigns: dict[str, int] = field(default_factory=dict)
    """campaign id → its seed (the lowest batch seed of its runs: batch b of `--seed S` uses S + b)."""
    outcomes: Counter[str] = field(default_factory=Counter)
    signatures: Counter[str] = field(default_factory=Counter)
    """signature → runs it was found in."""
    triage: dict[str, str] = field(default_factory=dict)

    def minutes(self) -> float:
        return sum(last - first for first, last in self.spans.values()) / 60


def adapter_spec(adapter: str, release: str, kafka_root: Path) -> str:
    home = kafka_root / release
    if adapter in ("kafka-jvm", "kafka-local", "kafka-cluster"):
        return f"{adapter},kafka-home={home}"
    return adapter


def level(adapter: str) -> str:
    """kafka-cluster is judged at the cluster level (real brokers, clients, faults); the others are
    controllers, judged against the reference controller."""
    return "cluster" if adapter == "kafka-cluster" else "controller"


def docker_release(release: str) -> str:
    """kafka-docker takes the image's full version."""
    return {"3.7": "3.7.1", "3.9": "3.9.0"}.get(release, release)


def campaign(release: str, adapter: str, seconds: float, seed: int | None, out: Path, kafka_root: Path) -> int:
    records = out / f"{release}-{adapter}"
    kafka = docker_release(release) if adapter == "kafka-docker" else release
    command = [sys.executable, "-m", "isrcheck", "run", "--adapter", adapter_spec(adapter, release, kafka_root),
               "--kafka", kafka, "--level", level(adapter), "--budget", f"{seconds:g}", "--collect",
               "--records", str(records), *([] if seed is None else ["--seed", str(seed)])]
    print(f"$ {shlex.join(command[2:])}", file=sys.stderr, flush=True)
    return subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, check=False).returncode


def read_cells(dirs: list[Path]) -> dict[tuple[str, str], Cell]:
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    files = sorted({path for out in dirs  # run's and qualify's layouts
                    for path in (*out.glob("*/*.jsonl"), *out.glob("*/records/*.jsonl"), *out.glob("records/*.jsonl"))})
    record: Any
    for record in RecordReader(files):  # valid run records only (qualify's scenarios.jsonl lines are not)
        adapter = record["adapter"].split(",")[0]
        cell = cells[(record["release"], adapter)]
        cell.runs += 1
        cell.steps += record["steps"]
        start = datetime.datetime.fromisoformat(record["started_at"].replace("Z", "+00:00")).timestamp()
        first, last = cell.spans.get(record["campaign_id"], (start, start))
        cell.spans[record["campaign_id"]] = (min(first, start), max(last, start + record["duration_s"]))
        campaign_id = record["campaign_id"]
        cell.campaigns[campaign_id] = min(record["seed"], cell.campaigns.get(campaign_id, record["seed"]))
        cell.outcomes[record["outcome"]] += 1
        for signature in {f["signature"] for f in record["findings"]}:
            cell.signatures[signature] += 1
        for finding in record["findings"]:
            known = finding.get("known")
            triaged = triage_of(record)
            verdict = (f"known divergence: rule {known}" if known else f"triaged: {triaged}" if triaged
                       else UNTRIAGED)
            earlier = cell.triage.get(finding["signature"])
            cell.triage[finding["signature"]] = (verdict if earlier in (None, verdict) else
                                                 UNTRIAGED if UNTRIAGED in (earlier, verdict) else
                                                 f"{earlier}; {verdict}")
    return cells


def table(cells: dict[tuple[str, str], Cell]) -> str:
    lines = ["| release | adapter | campaigns (seeds) | runs | steps | campaign minutes | outcomes | signature "
             "| runs with it | triage |",
             "|---|---|---|---:|---:|---:|---|---|---:|---|"]
    for (release, adapter), cell in sorted(cells.items()):
        outcomes = ", ".join(f"{name} {count:,}" for name, count in sorted(cell.outcomes.items()))
        seeds = ", ".join(str(seed) for seed in sorted(cell.campaigns.values()))
        head = (f"| {release} | {adapter} | {len(cell.campaigns)} ({seeds}) | {cell.runs:,} | "
                f"{cell.steps:,} | {cell.minutes():.1f} | {outcomes}")
        if not cell.signatures:
            lines.append(f"{head} | (none) | 0 | — |")
        for signature, runs in cell.signatures.most_common():
            lines.append(f"{head} | `{signature}` | {runs:,} | {cell.triage[signature]} |")
    return "\n".join(lines)


def qualifications(out: Path) -> list[dict[str, Any]]:
    """The `qualify.json` of every `isrcheck qualify --out` directory under `out` (or `out` itself)."""
    return [json.loads(path.read_text(encoding="utf-8"))
            for path in sorted({*out.glob("qualify.json"), *out.glob("*/qualify.json")})]


def qualify_table(verdicts: list[dict[str, Any]]) -> str:
    """One line per `isrcheck qualify`: its verdict, why, and what ran (docs/qualify.md)."""
    lines = ["| release | adapter | verdict | why | scenarios passed / failed / skipped | campaigns | seed |",
             "|---|---|---|---|---|---|---:|"]
    for q in sorted(verdicts, key=lambda q: (q["release"], q["adapter"])):
        s = q["scenarios"]
        campaigns = "; ".join(f"{level}: {c['runs']:,} runs, {c['steps']:,} steps"
                              for level, c in q["campaigns"].items()) or "none"
        lines.append(f"| {q['release']} | {q['adapter'].split(',')[0]} | **{q['verdict']}** | {q['why']} | "
                     f"{s['passed']} / {s['failed']} / {s['skipped']} | {campaigns} | {q['seed']} |")
    return "\n".join(lines)


def tables(dirs: list[Path]) -> list[str]:
    """The markdown of DIRS' records: the qualify verdicts (if any), then every signature's triage."""
    verdicts = [q for out in dirs for q in qualifications(out)]
    parts = (["## `isrcheck qualify` per release", "", qualify_table(verdicts), ""] if verdicts else [])
    cells = read_cells(dirs)
    labels = sorted({label for cell in cells.values() for label in cell.triage.values()
                     if label.startswith("triaged: ")})
    notes = [f"- **{label.removeprefix('triaged: ')}**: "
             f"{TRIAGE_RULES[label.removeprefix('triaged: ')][1]}" for label in labels]
    return [*parts, "## Every signature of every campaign, with its triage", "", table(cells),
            *(["", "Triaged findings:", "", *notes] if notes else [])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", default="3.3,3.5,3.7,3.9")
    parser.add_argument("--adapters", default="kafka-jvm")
    parser.add_argument("--minutes", type=float, default=5.0, help="per release and adapter (default 5)")
    parser.add_argument("--seeds", default="", help="comma-separated seeds sharing the minutes (default: unseeded)")
    parser.add_argument("--campaigns", type=int, default=1,
                        help="without --seeds: this many unseeded campaigns (each its own seed) share the minutes")
    parser.add_argument("--out", type=Path, default=Path("/tmp/isrcheck-volume"))
    parser.add_argument("--kafka-root", type=Path, default=REPO.parent / "shared" / "kafka")
    parser.add_argument("--table", type=Path, nargs="+", metavar="DIR",
                        help="print the tables of DIRs' records (and qualify.json files); run nothing")
    parser.add_argument("--about", default="", help="a sentence on how the campaigns ran (their machine's load: "
                        "the header's load is the table's writing, not theirs)")
    parser.add_argument("--write", type=Path, metavar="PATH",
                        help="also write the tables as markdown with the command, commit and machine")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    if args.table is not None:
        return report(args.table, args.write, load_before, args.about)
    adapters = [a for a in args.adapters.split(",") if a]
    unknown = [a for a in adapters if a not in ADAPTERS]
    if unknown or args.minutes <= 0 or args.campaigns < 1:
        parser.error(f"adapters are {', '.join(ADAPTERS)}; --minutes and --campaigns must be positive")
    seeds: list[int | None] = [int(s) for s in args.seeds.split(",") if s] or [None] * args.campaigns
    for release in [r for r in args.releases.split(",") if r]:
        for adapter in adapters:
            for seed in seeds:
                campaign(release, adapter, args.minutes * 60 / len(seeds), seed, args.out, args.kafka_root)
    return report([args.out], args.write, load_before, args.about)


def report(dirs: list[Path], write: Path | None, load_before: float, about: str = "") -> int:
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        print(f"volume.py: no such directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    markdown = tables(dirs)
    print("\n".join(markdown))
    if write is not None:
        write_results(write, "Real Kafka at CI volume: qualify verdicts and every signature's triage",
                      "Unseeded (or seeded, as the seeds column says) `--collect` campaigns against real Kafka "
                      "releases, read back from their run records; the triage of a known divergence is the rule "
                      "that matched it on its run (docs/known-divergences.md), or a triage rule of "
                      "bench/volume_triage.py. " + about, markdown, load_before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
