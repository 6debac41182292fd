"""Detection benchmark: per mutant, the median wall time to the first finding over 5 seeds (from
the campaign's start to the end of the first failing run, shrinking excluded) and the shrunk
counterexample's length, with and without the differential comparison; then the
engine's steps per second at each level on the reference (issue target: ≥ 2,000 steps/s per
core at the controller level).

    python bench/detect.py [--seeds 5] [--examples 2000] [--mutants B01,B02]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from isrcheck.conformance.engine.campaign import LEVELS, CampaignConfig, run_campaign
from isrcheck.reference_impl.mutants import CATALOGUE


def detect(mutant: str, level: str, seed: int, examples: int, differential: bool, shrink_budget_s: int
           ) -> tuple[float | None, int | None]:
    release = CATALOGUE[mutant].release or "4.1"
    result = run_campaign(CampaignConfig(mutant=mutant, level=level, seed=seed, examples=examples, release=release,
                                         differential=differential, shrink_budget_s=shrink_budget_s))
    if not result.signatures or result.seconds_to_first_finding is None:
        return None, None
    elapsed = result.seconds_to_first_finding
    lengths = [e["counterexample_length"] for e in result.examples.values() if e.get("counterexample_length")]
    return elapsed, min(lengths) if lengths else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--examples", type=int, default=2000, help="budget per attempt, in runs")
    parser.add_argument("--mutants", help="comma-separated ids (default: the whole catalogue)")
    parser.add_argument("--shrink-budget", type=int, default=20, metavar="SECONDS",
                        help="Hypothesis's shrinking time limit per finding")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    chosen = args.mutants.split(",") if args.mutants else list(CATALOGUE)
    print(f"{'mutant':<7}{'level':<11}{'found':>7}{'median s':>10}{'shrunk':>8}   {'black-box (no differential)'}")
    found_blackbox = found_any = considered = 0
    for mutant_id in chosen:
        mutant = CATALOGUE[mutant_id]
        if mutant.level not in LEVELS:
            print(f"{mutant_id:<7}{mutant.level:<11}  (level not runnable by this engine build)")
            continue
        considered += 0 if mutant.negative_control else 1
        times, lengths = [], []
        for seed in range(args.seeds):
            elapsed, length = detect(mutant_id, mutant.level, seed, args.examples, True, args.shrink_budget)
            if elapsed is not None:
                times.append(elapsed)
            if length is not None:
                lengths.append(length)
        blackbox, _ = detect(mutant_id, mutant.level, 0, args.examples, False, args.shrink_budget)
        median = f"{statistics.median(times):.2f}" if times else "-"
        shrunk = f"{statistics.median(lengths):.0f}" if lengths else "-"
        label = "negative control" if mutant.negative_control else ("found" if blackbox is not None else "not found")
        print(f"{mutant_id:<7}{mutant.level:<11}{len(times):>4}/{args.seeds}{median:>10}{shrunk:>8}   {label}")
        if not mutant.negative_control:
            found_any += bool(times)
            found_blackbox += blackbox is not None
    print(f"found: {found_any}/{considered} mutants with the differential, "
          f"{found_blackbox}/{considered} by properties alone")
    for level in LEVELS:
        started = time.perf_counter()
        result = run_campaign(CampaignConfig(level=level, seed=99, examples=300))
        rate = result.steps / (time.perf_counter() - started)
        print(f"engine, {level} level, reference vs reference: {rate:,.0f} steps/s ({result.runs} runs, one process)")


if __name__ == "__main__":
    main()
