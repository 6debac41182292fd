"""What the controller-level generator sends on each release, and how often it sets up the same-tick
race (bench/same_tick.py): per release, one properties-only campaign on the reference with every
run's history recorded, then counts of operations, of answers by error, and of race openings — a
heartbeat of broker B answered, then at once an AlterPartition whose ISR names B while B's
registration is in controlled shutdown (X1's opening: B still unfenced; `--completed`'s: B fenced
by a completed shutdown). Same seed, same runs, release by release: the differences are the
release profile's (4.1: eligible leader replicas on by default).

    python bench/controller_histogram.py [--kafka 4.0 --kafka 4.1] [--runs 300] [--seed 1]
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
from pathlib import Path
from typing import Any

from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign


def broker_view(step: dict[str, Any], broker: int) -> dict[str, Any]:
    for b, view in step["target"]["observation"]["brokers"]:
        if b == broker:
            return dict(view)
    return {}


def histogram(release: str, runs: int, seed: int) -> dict[str, collections.Counter[str]]:
    counts: dict[str, collections.Counter[str]] = {k: collections.Counter() for k in ("ops", "answers", "race")}
    with tempfile.TemporaryDirectory(prefix="isrcheck-histogram-") as records:
        run_campaign(CampaignConfig(adapter="reference", level="controller", examples=runs, steps=50, seed=seed,
                                    release=release, records_dir=Path(records), record_history=True,
                                    differential=False, stop_at_first=False))
        for path in Path(records).glob("*.jsonl"):
            for line in path.read_text(encoding="utf-8").splitlines():
                steps = json.loads(line)["history"]["steps"]
                for before, step in zip([None, *steps], steps, strict=False):
                    op, result = step["op"], step["target"]["result"]
                    counts["ops"][op] += 1
                    top = result.get("top_level_error")
                    error = top if top not in (None, "NONE") else result.get("error")
                    counts["answers"][f"{op}:{error}"] += 1
                    if op != "alter_partition" or before is None or before["op"] != "heartbeat":
                        continue
                    broker = int(before["args"]["broker"])
                    sent = step["target"].get("args") or step["args"]
                    if broker not in [int(m[0]) if isinstance(m, list) else int(m) for m in sent.get("isr", [])]:
                        continue
                    view = broker_view(before, broker)
                    if view.get("in_controlled_shutdown"):
                        kind = "completed (fenced)" if view.get("fenced") else "shutting down (unfenced)"
                        counts["race"][f"{kind}:{error}"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kafka", action="append", metavar="RELEASE")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    releases = args.kafka or ["4.0", "4.1"]
    tables = {release: histogram(release, args.runs, args.seed) for release in releases}
    for part in ("ops", "answers", "race"):
        keys = sorted(set().union(*(tables[r][part] for r in releases)))
        print(f"\n{part} ({args.runs} runs, seed {args.seed})")
        print(f"{'':<52}" + "".join(f"{r:>9}" for r in releases))
        for key in keys:
            print(f"{key:<52}" + "".join(f"{tables[r][part][key]:>9}" for r in releases))


if __name__ == "__main__":
    main()
