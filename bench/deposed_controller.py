"""Runs to find a deposed-controller bug at the black-box cluster level, with and without the
`deposed_controller` composite fault in the generator's mix (conformance/generator/black_box_faults.py).

The target is the cluster plug-in `simulated_cluster:DeposedControllerCluster` — the reference
cluster model behind the black-box interface, with one rule changed: a controller deposed by a
fail-over still elects and writes ISRs from the state it had (KAFKA-1188, KAFKA-6082). Per seed and
generator, one campaign of `--runs` runs (the engine's own: `isrcheck run --level cluster`, its
batches, its steps per run); a run counts as finding the bug when the properties flag it and the
same operations on the sound `SimulatedCluster` pass (the model is deterministic: replayed, the
history is the same up to where the changed rule acts), so a finding the sound cluster shares —
which is no evidence about the bug — is not counted. It prints, per seed, the runs to the first
such finding (`>N` when none), and how many of the sound cluster's replays were flagged too.

    python bench/deposed_controller.py [--seeds 3] [--runs 1500] [--kafka 3.9] [--steps 50]
                                       [--generator both|with|without] [--write docs/results/deposed-controller.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from detect import SEED_STRIDE  # type: ignore[import-not-found]
from isrcheck.adapters.plugins.simulated_cluster import SimulatedCluster
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.cluster_history import FINAL_STEPS, run_history
from isrcheck.conformance.generator import black_box_faults
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from results_file import markdown_table, write_results

ADAPTER = "isrcheck.adapters.plugins.simulated_cluster:DeposedControllerCluster"
WEIGHT = black_box_faults.DEPOSED_CONTROLLER_WEIGHT


def primitive_steps(record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The operations a run executed (composites expanded), without the shared ending."""
    return [(e["op"], {k: v for k, v in e["args"].items() if k != "by"})
            for e in record["history"]["entries"] if e["type"] == "op" and e["op"] not in FINAL_STEPS]


def sound_flags(record: dict[str, Any], release: str) -> bool:
    config = HistoryConfig.from_json(record["history"]["config"])
    _, violations = run_history(SimulatedCluster(), release, primitive_steps(record), config)
    return bool(violations)


def campaign(seed: int, runs: int, release: str, steps: int, with_fault: bool) -> dict[str, Any]:
    """One campaign; the runs to the first finding the sound cluster does not share."""
    black_box_faults.DEPOSED_CONTROLLER_WEIGHT = WEIGHT if with_fault else 0
    with tempfile.TemporaryDirectory(prefix="isrcheck-deposed-") as records:
        result = run_campaign(CampaignConfig(adapter=ADAPTER, level="cluster", examples=runs, steps=steps, seed=seed,
                                             release=release, records_dir=Path(records), stop_at_first=False))
        found_at, shared, composites = None, 0, 0
        for path in sorted(Path(records).glob("*.jsonl")):
            with open(path, encoding="utf-8") as lines:
                for index, line in enumerate(lines, start=1):
                    record = json.loads(line)
                    composites += any(e["type"] == "op" and e["args"].get("by") == black_box_faults.DEPOSED_CONTROLLER
                                      and e["op"] == "fail_over_controller" for e in record["history"]["entries"])
                    if record["outcome"] != "finding":
                        continue
                    if sound_flags(record, release):
                        shared += 1
                    elif found_at is None:
                        found_at = index
    return {"seed": seed, "runs": result.runs, "found_at": found_at, "shared": shared,
            "composite_runs": composites}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=1, help="seeds are first-seed + k * 1000")
    parser.add_argument("--runs", type=int, default=1500, help="runs per campaign")
    parser.add_argument("--kafka", default="3.9", help="release profile of the simulated cluster")
    parser.add_argument("--steps", type=int, default=50, help="steps per run (isrcheck run's default)")
    parser.add_argument("--generator", choices=["both", "with", "without"], default="both",
                        help="with / without the deposed_controller composite fault in the mix")
    parser.add_argument("--write", type=Path, metavar="PATH", help="also write the table as markdown")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    seeds = [args.first_seed + k * SEED_STRIDE for k in range(args.seeds)]
    modes = {"both": [False, True], "with": [True], "without": [False]}[args.generator]
    load_before = os.getloadavg()[0]
    what_ran = (f"target {ADAPTER} (Kafka {args.kafka} profile); seeds {seeds}; {args.runs} runs of {args.steps} "
                f"steps per campaign, every run recorded; generator with the composite fault (weight {WEIGHT} of "
                f"{11 + WEIGHT}) and without it (weight 0 of 11)")
    print(what_ran)
    rows: list[list[str]] = []
    for with_fault in modes:
        outcomes = [campaign(seed, args.runs, args.kafka, args.steps, with_fault) for seed in seeds]
        label = "with deposed_controller" if with_fault else "without (switched off)"
        cells = [str(o["found_at"]) if o["found_at"] is not None else f">{o['runs']}" for o in outcomes]
        found = [o["found_at"] for o in outcomes if o["found_at"] is not None]
        median = f"{statistics.median(found):.0f}" if len(found) == len(outcomes) else "-"
        row = [label, *cells, f"{len(found)}/{len(outcomes)}", median,
               ", ".join(str(o["shared"]) for o in outcomes), ", ".join(str(o["composite_runs"]) for o in outcomes)]
        print("  ".join(row))
        rows.append(row)
    header = ("generator", *(f"seed {s}" for s in seeds), "seeds found", "median runs",
              "findings the sound cluster shares (per seed)", "runs with the composite (per seed)")
    table = markdown_table(header, rows)
    print("\n".join(table))
    if args.write:
        write_results(args.write, "Deposed controller: runs to find it at the black-box cluster level", what_ran,
                      table, load_before, notes=[
                          "Runs to the first run whose history the properties flag and whose operations pass on the "
                          "sound simulated cluster (`>N`: none in N runs). Runs are the engine's, in order, with "
                          "Hypothesis's batches; figures do not depend on the machine's load."])


if __name__ == "__main__":
    main()
