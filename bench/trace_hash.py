"""A fingerprint of what seeded campaigns did, step by step: run it before and after a change
meant to make the engine or the simulation faster, and the two outputs must be equal.

Every run of each campaign contributes its whole trace (each step's arguments and both sides'
results), its findings and, for a simulated cluster, where its clock and counters ended (time,
scheduler events, deliveries, messages sent, metadata records). Campaigns run without shrinking
(`stop_at_first=False`: every run ends at its own first finding) and without a budget, so nothing
depends on the speed of the machine.

    python bench/trace_hash.py [--examples 40] [--steps 40]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from isrcheck.conformance.engine import campaign
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

CAMPAIGNS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("cluster reference, seed 1", {"level": "cluster", "seed": 1}),
    ("cluster reference, seed 2, 3.9", {"level": "cluster", "seed": 2, "release": "3.9"}),
    ("cluster B03a", {"level": "cluster", "mutant": "B03a", "seed": 3}),
    ("cluster B23", {"level": "cluster", "mutant": "B23", "seed": 4}),
    ("cluster D10", {"level": "cluster", "mutant": "D10", "seed": 5}),
    ("cluster N2 (negative control)", {"level": "cluster", "mutant": "N2", "seed": 6}),
    ("controller reference", {"level": "controller", "seed": 7}),
    ("controller B02", {"level": "controller", "mutant": "B02", "seed": 8}),
)


def cluster_counters(target: Any) -> list[Any] | None:
    cluster = getattr(target, "_cluster", None)
    if cluster is None:
        return None
    return [cluster.now_ms, cluster.events, cluster.deliveries, cluster.network.next_id, len(cluster.controller.log)]


def fingerprint(config: CampaignConfig) -> tuple[str, int, int]:
    """(sha256 of every run in order, runs, steps) of one campaign."""
    digest = hashlib.sha256()
    original = campaign.Worker.record

    def record(self: campaign.Worker, finished: Any, *args: Any, **kwargs: Any) -> None:
        run = finished.run
        digest.update(json.dumps({
            "trace": [step.to_json() for step in run.trace],
            "findings": [finding.to_json() for finding in run.findings],
            "skip": run.skip_reason,
        }, sort_keys=True, default=repr).encode())
        original(self, finished, *args, **kwargs)

    counters_before = campaign.RunContext.finish_run

    def finish_run(self: Any, run: Any) -> None:
        digest.update(json.dumps([cluster_counters(run.reference), cluster_counters(run.target)]).encode())
        counters_before(self, run)

    campaign.Worker.record = record  # type: ignore[method-assign]
    campaign.RunContext.finish_run = finish_run  # type: ignore[method-assign]
    try:
        result = run_campaign(config)
    finally:
        campaign.Worker.record = original  # type: ignore[method-assign]
        campaign.RunContext.finish_run = counters_before  # type: ignore[method-assign]
    return digest.hexdigest()[:16], result.runs, result.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    for label, options in CAMPAIGNS:
        config = CampaignConfig(examples=args.examples, steps=args.steps, stop_at_first=False, **options)
        digest, runs, steps = fingerprint(config)
        print(f"{label:<32} {digest}  {runs:>4} runs {steps:>6} steps", flush=True)


if __name__ == "__main__":
    main()
