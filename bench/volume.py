"""Volume triage per release and adapter: long `--collect` campaigns against real Kafka, and a
table of every signature seen with its triage (a known divergence's rule, or an untriaged finding).

    python bench/volume.py --releases 3.3,3.5,3.7,3.9 --adapters kafka-jvm --minutes 5 --out /tmp/volume
    python bench/volume.py --releases 3.9 --adapters kafka-local --minutes 10 --seeds 11,12,13 --out /tmp/volume
    python bench/volume.py --table /tmp/volume          # the table of records already written (also
                                                        # an `isrcheck qualify --out /tmp/volume/NAME`'s)

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
import shlex
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from isrcheck.reports.records_io import RecordReader

REPO = Path(__file__).resolve().parents[1]
ADAPTERS = ("kafka-jvm", "kafka-local", "kafka-docker", "kafka-cluster")


@dataclass
class Cell:
    """What the records of one release × adapter hold."""

    runs: int = 0
    steps: int = 0
    seeds: set[int] = field(default_factory=set)
    campaigns: set[str] = field(default_factory=set)
    outcomes: Counter[str] = field(default_factory=Counter)
    signatures: Counter[str] = field(default_factory=Counter)
    """signature → runs it was found in."""
    triage: dict[str, str] = field(default_factory=dict)


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


def read_cells(out: Path) -> dict[tuple[str, str], Cell]:
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    files = sorted({*out.glob("*/*.jsonl"), *out.glob("*/records/*.jsonl")})  # run's and qualify's layouts
    record: Any
    for record in RecordReader(files):  # valid run records only (qualify's scenarios.jsonl lines are not)
        adapter = record["adapter"].split(",")[0]
        cell = cells[(record["release"], adapter)]
        cell.runs += 1
        cell.steps += record["steps"]
        cell.seeds.add(record["seed"])
        cell.campaigns.add(record["campaign_id"])
        cell.outcomes[record["outcome"]] += 1
        for signature in {f["signature"] for f in record["findings"]}:
            cell.signatures[signature] += 1
        for finding in record["findings"]:
            known = finding.get("known")
            cell.triage[finding["signature"]] = (f"known divergence: rule {known}" if known
                                                 else "FINDING (untriaged)")
    return cells


def table(cells: dict[tuple[str, str], Cell]) -> str:
    lines = ["| release | adapter | campaigns | runs | steps | outcomes | signature | runs with it | triage |",
             "|---|---|---:|---:|---:|---|---|---:|---|"]
    for (release, adapter), cell in sorted(cells.items()):
        outcomes = ", ".join(f"{name} {count:,}" for name, count in sorted(cell.outcomes.items()))
        head = f"| {release} | {adapter} | {len(cell.campaigns)} | {cell.runs:,} | {cell.steps:,} | {outcomes}"
        if not cell.signatures:
            lines.append(f"{head} | (none) | 0 | — |")
        for signature, runs in cell.signatures.most_common():
            lines.append(f"{head} | `{signature}` | {runs:,} | {cell.triage[signature]} |")
    return "\n".join(lines)


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
    parser.add_argument("--table", type=Path, metavar="DIR", help="print the table of DIR's records; run nothing")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(table(read_cells(args.table)))
        return 0
    adapters = [a for a in args.adapters.split(",") if a]
    unknown = [a for a in adapters if a not in ADAPTERS]
    if unknown or args.minutes <= 0 or args.campaigns < 1:
        parser.error(f"adapters are {', '.join(ADAPTERS)}; --minutes and --campaigns must be positive")
    seeds: list[int | None] = [int(s) for s in args.seeds.split(",") if s] or [None] * args.campaigns
    for release in [r for r in args.releases.split(",") if r]:
        for adapter in adapters:
            for seed in seeds:
                campaign(release, adapter, args.minutes * 60 / len(seeds), seed, args.out, args.kafka_root)
    print(table(read_cells(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
