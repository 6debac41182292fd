"""Engine speed against its anchor: steps per second of an isrcheck campaign (reference against
itself) beside a bare Hypothesis `RuleBasedStateMachine` with the same rules doing nothing, run
the same way (same settings, same number of examples and steps), in one process, one after the
other. The ratio is what isrcheck's own work costs on top of Hypothesis (issue target: ≥ 0.5).

    python bench/engine.py [--examples 200] [--steps 50] [--levels controller,cluster] [--repeat 3]
                           [--write docs/results/engine.md]

On a shared machine the load changes while it runs: with --repeat N the two alternate N times
and the median of the N ratios is printed, with the load average beside each pair. Each rate is
given twice: per second of wall-clock time, and per second of this process's CPU time (the `cpu`
columns), which other users of the machine disturb much less (both sides run in this one
process, so a core taken away by someone else slows the wall-clock figures, not the CPU ones).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test, initialize, rule
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.generator.cluster_machine import ACTIONS
from results_file import markdown_table, write_results


def bare_machine(rules: int, level: str) -> type[RuleBasedStateMachine]:
    """`rules` rules drawing what the engine's rules draw (two small integers; at the cluster level
    one weighted action and a 16-bit value), each doing nothing but counting itself."""
    body: dict[str, object] = {"calls": 0}

    def count(self: RuleBasedStateMachine, **_: object) -> None:
        type(self).calls += 1  # type: ignore[attr-defined]

    body["setup"] = initialize(flag=st.booleans())(count)
    for index in range(rules):
        if level == "cluster":
            body[f"r{index}"] = rule(action=st.sampled_from(ACTIONS), value=st.integers(0, 2**16 - 1))(count)
        else:
            body[f"r{index}"] = rule(a=st.integers(0, 9), b=st.integers(0, 9))(count)
    return type(f"Bare{rules}", (RuleBasedStateMachine,), body)


def bare_rate(rules: int, level: str, examples: int, steps: int) -> tuple[float, float]:
    """(rules per wall-clock second, rules per CPU second) of the bare machine."""
    machine = bare_machine(rules, level)
    test = get_state_machine_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, database=None, deadline=None,
        phases=[Phase.generate], suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
    ))
    seed(1)(test)
    started, cpu = time.perf_counter(), time.process_time()
    test()
    calls: int = machine.calls  # type: ignore[attr-defined]
    return calls / (time.perf_counter() - started), calls / (time.process_time() - cpu)


RULES = {"controller": 13, "cluster": 1}
"""Rules of `ControllerMachine` and `ClusterMachine` (the cluster machine's one weighted rule)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--levels", default="controller,cluster")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--write", type=Path, metavar="PATH",
                        help="also write the table as markdown with the command, commit and machine")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    table: list[list[str]] = []
    medians: list[str] = []
    print(f"{'level':<11} {'engine steps/s':>15} {'bare rules/s':>13} {'ratio':>6} "
          f"{'cpu: engine':>12} {'bare':>7} {'ratio':>6} {'load':>5}")
    for level in args.levels.split(","):
        ratios, cpu_ratios = [], []
        for _ in range(args.repeat):
            load = os.getloadavg()[0]
            cpu = time.process_time()
            result = run_campaign(CampaignConfig(level=level, examples=args.examples, steps=args.steps, seed=1))
            engine_cpu = result.steps / (time.process_time() - cpu)
            engine = result.steps / result.seconds
            bare, bare_cpu = bare_rate(RULES[level], level, args.examples, args.steps)
            ratios.append(engine / bare)
            cpu_ratios.append(engine_cpu / bare_cpu)
            print(f"{level:<11} {engine:>15,.0f} {bare:>13,.0f} {engine / bare:>6.2f} "
                  f"{engine_cpu:>12,.0f} {bare_cpu:>7,.0f} {engine_cpu / bare_cpu:>6.2f} {load:>5.2f}", flush=True)
            table.append([level, f"{engine:,.0f}", f"{bare:,.0f}", f"{engine / bare:.2f}", f"{engine_cpu:,.0f}",
                          f"{bare_cpu:,.0f}", f"{engine_cpu / bare_cpu:.2f}", f"{load:.2f}"])
        if args.repeat > 1:
            median = (f"{level}: median ratio {statistics.median(ratios):.2f} (CPU time: "
                      f"{statistics.median(cpu_ratios):.2f}) of {args.repeat} (target ≥ 0.5)")
            print(f"{level:<11} {median.split(': ', 1)[1]}")
            medians.append(median)
    if args.write:
        write_results(args.write, "Engine speed against a bare Hypothesis machine",
                      f"{args.examples} examples of {args.steps} steps per level, seed 1, {args.repeat} pair(s) per "
                      "level, one process: the campaign of the reference against itself, then a bare "
                      "RuleBasedStateMachine with the same rules doing nothing.",
                      markdown_table(("level", "engine steps/s", "bare rules/s", "ratio", "CPU: engine steps/s",
                                      "CPU: bare rules/s", "CPU ratio", "load"), table), load_before,
                      notes=[f"{line}." for line in medians])


if __name__ == "__main__":
    main()
