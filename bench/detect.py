"""Detection benchmark: how fast generation finds each catalogued mutant, at each level.

One row per (mutant, level): in how many of the seeds a stop-at-first campaign found it, the
median and maximum wall seconds from the campaign's start to the end of the first failing run
(shrinking excluded), the median runs and steps to that finding (figures that do not depend on
the machine's load), the median shrunk counterexample length beyond the level's set-up steps,
and whether the properties alone (no differential comparison: the black-box figure) find it.
Negative controls (N*) are run the same way and must never be flagged.

    python bench/detect.py [--seeds 5] [--runs 150] [--budget 30] [--level all] [--mutants B01,B06]
                           [--write docs/results/detection.md]

With `--write PATH` the table is also written as markdown, under a header naming the command, the
commit and the machine (bench/results_file.py): the documentation cites that file.

Each attempt is one process, one core: the campaign stops at its first finding, after `--runs`
runs (`--controller-runs` at the controller level), or after `--budget` seconds, whichever
comes first. Seeds are spread apart (batch b of
seed s uses Hypothesis seed s + b, so adjacent seeds would share batches).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from isrcheck.conformance.engine.campaign import LEVELS, CampaignConfig, run_campaign
from isrcheck.conformance.generator.cluster_machine import IDEAS, SET_UP_STEPS, ClusterMachine
from isrcheck.conformance.generator.controller_machine import ControllerMachine
from isrcheck.conformance.generator.targeting import TARGET
from isrcheck.reference_impl.mutants import CATALOGUE
from results_file import markdown_table, write_results

SEED_STRIDE = 1000
SETUP_STEPS = {"controller": 7, "cluster": SET_UP_STEPS}
"""Steps every run starts with (the machines' @initialize): three brokers registered and unfenced
and one topic, plus at the cluster level the settling `events`. A counterexample's length beyond
these is the part that is about the bug."""
STEPS = {"controller": 50, "cluster": 40}
"""The main job's steps per run (isrcheck/pipeline.py), so that the verdicts here and there agree."""


@dataclass(frozen=True)
class Attempt:
    mutant: str
    level: str
    seed: int
    differential: bool
    found: bool
    signature: str | None
    seconds: float | None
    runs: int
    steps: int
    shrunk: int | None
    """Counterexample length beyond the set-up steps, None when nothing was found."""


def attempt(mutant: str, level: str, seed: int, runs: int, budget_s: float, differential: bool,
            shrink_budget_s: int) -> Attempt:
    release = CATALOGUE[mutant].release or "4.1"
    result = run_campaign(CampaignConfig(
        mutant=mutant, level=level, seed=seed, examples=runs, budget_s=budget_s, release=release,
        steps=STEPS[level], differential=differential, shrink_budget_s=shrink_budget_s))
    found = result.found
    signature = next(iter(result.signatures), None) if found else None
    shrunk = None
    if signature is not None:
        length = result.examples[signature].get("counterexample_length")
        shrunk = None if length is None else max(0, length - SETUP_STEPS[level])
    return Attempt(mutant, level, seed, differential, found, signature,
                   result.seconds_to_first_finding if found else None, result.runs, result.steps, shrunk)


def levels_of(mutant_id: str, chosen: str) -> list[str]:
    """The levels a mutant is measured at: its own, or with `all` every level it can run at
    (a controller mutant runs in the cluster model too; a cluster mutant needs the cluster)."""
    own = CATALOGUE[mutant_id].level
    if chosen == "own":
        return [own]
    if chosen == "all":
        return list(LEVELS) if own == "controller" else [own]
    return [chosen] if chosen == own or own == "controller" else []


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def cells(mutant_id: str, level: str, attempts: list[Attempt], blackbox: bool | None) -> list[str]:
    """found, median s, max s, median runs, median steps, median shrunk, properties alone, note."""
    hits = [a for a in attempts if a.found]
    seconds = [a.seconds for a in hits if a.seconds is not None]
    shrunk = [a.shrunk for a in hits if a.shrunk is not None]

    def fmt(value: float | None, digits: int = 1) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    control = CATALOGUE[mutant_id].negative_control
    props = "n/a" if blackbox is None or control else ("yes" if blackbox else "no")
    note = "negative control" + (": FLAGGED" if hits else " (clean)") if control else ""
    return [f"{len(hits)}/{len(attempts)}", fmt(median(seconds)), fmt(max(seconds) if seconds else None),
            fmt(median([a.runs for a in hits]), 0), fmt(median([a.steps for a in hits]), 0),
            fmt(median(shrunk), 0), props, note]


def row(mutant_id: str, level: str, values: list[str]) -> str:
    found, med, longest, runs, steps, shrunk, props, note = values
    return (f"{mutant_id:<6}{level:<11}{found:>6}{med:>9}{longest:>8}{runs:>8}{steps:>8}{shrunk:>7}{props:>7}  "
            f"{note}")


MARKDOWN_HEADER = ("mutant", "level", "seeds found", "median s", "max s", "median runs", "median steps",
                   "shrunk steps beyond set-up", "properties alone", "note")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=1, help="seeds are first-seed + k * 1000")
    parser.add_argument("--runs", type=int, default=150, help="runs per cluster-level attempt (load-independent)")
    parser.add_argument("--controller-runs", type=int, default=1500,
                        help="runs per controller-level attempt (a controller run costs a tenth of a cluster run)")
    parser.add_argument("--budget", type=float, default=30.0, metavar="SECONDS", help="wall budget per attempt")
    parser.add_argument("--level", default="all", choices=["all", "own", *LEVELS],
                        help="all: every level a mutant runs at; own: the catalogue's level")
    parser.add_argument("--mutants", help="comma-separated ids (default: the whole catalogue)")
    parser.add_argument("--shrink-budget", type=int, default=10, metavar="SECONDS",
                        help="Hypothesis's shrinking time limit per finding")
    parser.add_argument("--no-blackbox", action="store_true",
                        help="skip the properties-only attempt at the controller level")
    parser.add_argument("--jsonl", help="append every attempt as one JSON line to this file")
    parser.add_argument("--write", type=Path, metavar="PATH",
                        help="also write the table as markdown with the command, commit and machine "
                        "(e.g. docs/results/detection.md)")
    parser.add_argument("--ideas", default=",".join(sorted(ClusterMachine.ideas)),
                        help=f"generation ideas switched on (of {', '.join(sorted(IDEAS))}; 'none': the plain "
                        f"weighted mix; {TARGET} acts at both levels, the others at the cluster level; default: the "
                        "machines' own, as the main job runs them), to measure each against the others on the "
                        "same seeds")
    args = parser.parse_args()
    ideas = frozenset() if args.ideas == "none" else frozenset(args.ideas.split(","))
    if ideas - IDEAS:
        parser.error(f"unknown ideas: {', '.join(sorted(ideas - IDEAS))}")
    ClusterMachine.ideas = ideas
    ControllerMachine.ideas = ideas & {TARGET}
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    chosen = args.mutants.split(",") if args.mutants else list(CATALOGUE)
    unknown = [m for m in chosen if m not in CATALOGUE]
    if unknown:
        parser.error(f"unknown mutants: {', '.join(unknown)}")
    seeds = [args.first_seed + k * SEED_STRIDE for k in range(args.seeds)]
    load_before = os.getloadavg()[0]
    what_ran = (f"seeds {seeds}; per attempt at most {args.controller_runs} controller / {args.runs} cluster runs or "
                f"{args.budget:.0f} s, shrinking at most {args.shrink_budget} s; one process; "
                f"ideas: {', '.join(sorted(ideas)) or 'none'}")
    print(what_ran)
    print(f"{'mutant':<6}{'level':<11}{'found':>6}{'med s':>9}{'max s':>8}{'runs':>8}{'steps':>8}"
          f"{'shrunk':>7}{'props':>7}")
    rows = 0
    tally = {"mutants": 0, "found_all_seeds": 0, "found_by_properties": 0, "controls_flagged": 0}
    table: list[list[str]] = []
    started = time.monotonic()
    for mutant_id in chosen:
        control = CATALOGUE[mutant_id].negative_control
        for level in levels_of(mutant_id, args.level):
            runs = args.runs if level == "cluster" else args.controller_runs
            attempts = [attempt(mutant_id, level, s, runs, args.budget, True, args.shrink_budget) for s in seeds]
            # the cluster level is judged by properties alone already (never differential)
            blackbox: bool | None = all(a.found for a in attempts) if level == "cluster" else None
            if level == "controller" and not args.no_blackbox and not control:
                alone = attempt(mutant_id, level, seeds[0], runs, args.budget, False, args.shrink_budget)
                attempts_bb = [alone]
                blackbox = alone.found
            else:
                attempts_bb = []
            values = cells(mutant_id, level, attempts, blackbox)
            print(row(mutant_id, level, values))
            table.append([mutant_id, level, *values])
            rows += 1
            if args.jsonl:
                with open(args.jsonl, "a", encoding="utf-8") as out:
                    for a in attempts + attempts_bb:
                        out.write(json.dumps(asdict(a)) + "\n")
            if control:
                tally["controls_flagged"] += any(a.found for a in attempts)
            elif level == CATALOGUE[mutant_id].level:
                tally["mutants"] += 1
                tally["found_all_seeds"] += all(a.found for a in attempts)
                tally["found_by_properties"] += bool(blackbox)
    summary = (f"{tally['found_all_seeds']}/{tally['mutants']} mutants found at their own level on every seed; "
               f"{tally['found_by_properties']}/{tally['mutants']} by properties alone; "
               f"{tally['controls_flagged']} negative controls flagged; {rows} rows in "
               f"{time.monotonic() - started:.0f} s")
    print(summary)
    if args.write:
        write_results(args.write, "Detection: how fast generation finds each mutant", what_ran,
                      markdown_table(MARKDOWN_HEADER, table), load_before, notes=[
                          summary + ".",
                          "",
                          "Columns: seeds on which a stop-at-first campaign found the mutant; median and longest "
                          "seconds to the end of the first failing run (shrinking excluded); median runs and steps "
                          "to it (independent of the machine's load); the median counterexample length beyond the "
                          "level's set-up steps after shrinking; whether the properties alone (no differential "
                          "comparison with the reference) found it — at the cluster level every finding is by "
                          "properties; at the controller level one extra attempt on the first seed runs with the "
                          "differential switched off. Negative controls must never be flagged.",
                      ])


if __name__ == "__main__":
    main()
