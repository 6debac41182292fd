"""Time to find a third-party-style controller bug (issue 16): a controller that re-admits a broker
in controlled shutdown into an ISR when the AlterPartition naming it arrives in the same tick as
that broker's heartbeat — no metadata record appended in between (controller.md §2.5 and KIP-841
refuse it whenever it comes). The issue saw such a controller found after 0.9–68.7 s depending on
the seed; this prints, per seed, the runs, steps and seconds the controller-level campaign needed,
with targeted search on and off, side by side on the same seeds — per release (`--kafka`, repeated),
and with the AlterPartition's current leader and epochs resolved at the target or copied from the
reference (`--current-at`, `ControllerMachine.current_at_target`). `--without-elr` measures the
same bug in a controller without eligible leader replicas (KIP-966): the reference's rules as they
are with ELR off, a third-party controller's likely shape, whose state differs from the
reference's on 4.1 (ELR on by default) and nowhere else; run it with `--properties-only`, as such
a plug-in is run (`--no-differential`).

    python bench/same_tick.py [--seeds 5] [--runs 3000] [--budget 120] [--kafka 4.0 --kafka 4.1]
                              [--targeting both|on|off] [--current-at both|target|reference]
                              [--without-elr] [--properties-only] [--write docs/results/same-tick.md]

The controller is registered in this process only, as catalogue id X1 (it is not a Kafka bug, so it
is not in the catalogue); each attempt is bench/detect.py's, one process, one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from detect import SEED_STRIDE, attempt  # type: ignore[import-not-found]
from isrcheck.conformance.generator.controller_machine import ControllerMachine
from isrcheck.conformance.generator.targeting import TARGET
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.messages import HeartbeatRequest, HeartbeatResponse, IsrMember
from isrcheck.reference_impl.mutants import CATALOGUE, Mutant
from isrcheck.reference_impl.release import ClusterConfig, ReleaseProfile
from results_file import markdown_table, write_results

MUTANT_ID = "X1"


class SameTickReadmission(Controller):
    """Refuses a shutting-down member as the reference does, except in the tick of its heartbeat:
    from the heartbeat until the next metadata record, that broker counts as eligible. Only the
    shutting-down refusal is waived (the issue's bug): a stale broker epoch in the same tick is
    still refused, so that B01's shape does not find this controller for the wrong reason."""

    heartbeat_tick: tuple[int, int] | None = None

    def heartbeat(self, request: HeartbeatRequest) -> HeartbeatResponse:
        response = super().heartbeat(request)
        self.heartbeat_tick = (request.broker, self.next_offset)
        return response

    def member_ineligibility(self, member: IsrMember) -> str | None:
        reason = super().member_ineligibility(member)
        registration = self.brokers.get(member.broker)
        same_tick = self.heartbeat_tick == (member.broker, self.next_offset)
        if reason == "shutting down" and same_tick and registration is not None and not registration.fenced:
            return None
        return reason


class SameTickReadmissionAfterShutdown(SameTickReadmission):
    """The issue's exact shape: the broker re-admitted is one whose controlled shutdown *completed*
    (its heartbeat answered SHUTDOWN_NOW, which fences it: `fence_records`, its registration still
    marked in controlled shutdown), in the tick of that heartbeat; X1 waives only the refusal of a
    broker still shutting down and unfenced."""

    def member_ineligibility(self, member: IsrMember) -> str | None:
        reason = Controller.member_ineligibility(self, member)
        registration = self.brokers.get(member.broker)
        same_tick = self.heartbeat_tick == (member.broker, self.next_offset)
        if (reason in ("shutting down", "fenced") and same_tick and registration is not None
                and registration.in_controlled_shutdown and registration.fenced):
            return None
        return reason


class SameTickReadmissionWithoutElr(SameTickReadmission):
    """The same bug in a controller that does not implement eligible leader replicas: whatever
    the run's configuration, its partition changes are those of ELR off (the last ISR member
    stays when fenced; no ELR, no last known leader)."""

    def __init__(self, profile: ReleaseProfile | str = "4.1", config: ClusterConfig | None = None) -> None:
        super().__init__(profile, config)
        self.config = replace(self.config, eligible_leader_replicas=False)


class SameTickReadmissionAfterShutdownWithoutElr(SameTickReadmissionAfterShutdown):
    """`--completed` in a controller without eligible leader replicas (as `--without-elr`)."""

    def __init__(self, profile: ReleaseProfile | str = "4.1", config: ClusterConfig | None = None) -> None:
        super().__init__(profile, config)
        self.config = replace(self.config, eligible_leader_replicas=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=1, help="seeds are first-seed + k * 1000")
    parser.add_argument("--runs", type=int, default=3000, help="controller-level runs per attempt")
    parser.add_argument("--budget", type=float, default=120.0, metavar="SECONDS", help="wall budget per attempt")
    parser.add_argument("--kafka", action="append", metavar="RELEASE",
                        help="the release profile the campaign runs (repeat for several, side by side); default 4.1")
    parser.add_argument("--targeting", choices=("both", "on", "off"), default="both",
                        help="targeted search on, off, or both (the default)")
    parser.add_argument("--current-at", choices=("both", "target", "reference"), default="target",
                        help="the AlterPartition's current leader and epochs resolved at the target (the "
                             "generator's default), copied from the reference, or both side by side")
    parser.add_argument("--without-elr", action="store_true",
                        help="the controller under test lacks eligible leader replicas (KIP-966)")
    parser.add_argument("--completed", action="store_true",
                        help="the variant that re-admits a broker whose controlled shutdown completed "
                             "(fenced by its SHUTDOWN_NOW heartbeat), in that heartbeat's tick")
    parser.add_argument("--properties-only", action="store_true",
                        help="judge by the properties alone, no differential against the reference (how a "
                             "third-party plug-in is run)")
    parser.add_argument("--write", type=Path, metavar="PATH",
                        help="also write the table as markdown with the command, commit and machine")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    table: list[list[str]] = []
    releases = args.kafka or ["4.1"]
    controller = {(False, False): SameTickReadmission, (False, True): SameTickReadmissionWithoutElr,
                  (True, False): SameTickReadmissionAfterShutdown,
                  (True, True): SameTickReadmissionAfterShutdownWithoutElr}[(args.completed, args.without_elr)]
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    seeds = [args.first_seed + k * SEED_STRIDE for k in range(args.seeds)]
    print(f"{controller.__name__}; seeds {seeds}; releases {releases}; at most {args.runs} runs or "
          f"{args.budget:.0f} s per attempt; {'properties only' if args.properties_only else 'differential'}; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'release':<9}{'current':<11}{'ideas':<8}{'seed':>6}{'found':>7}{'runs':>7}{'steps':>8}{'s':>8}")
    targeting = {"on": [frozenset({TARGET})], "off": [frozenset()], "both": [frozenset({TARGET}), frozenset()]}
    current = {"target": [True], "reference": [False], "both": [False, True]}
    for at_target in current[args.current_at]:
        ControllerMachine.current_at_target = at_target
        at = "target" if at_target else "reference"
        for release in releases:
            CATALOGUE[MUTANT_ID] = Mutant(MUTANT_ID, "re-admits a shutting-down broker in its heartbeat's tick",
                                          "issue 16 (third-party)", ("P-ELIG",), "controller", controller,
                                          release=release)
            for ideas in targeting[args.targeting]:
                ControllerMachine.ideas = ideas
                name = ",".join(sorted(ideas)) or "none"
                found = []
                for seed in seeds:
                    result = attempt(MUTANT_ID, "controller", seed, args.runs, args.budget, not args.properties_only, 1)
                    seconds = "-" if result.seconds is None else f"{result.seconds:.1f}"
                    print(f"{release:<9}{at:<11}{name:<8}{seed:>6}{'yes' if result.found else 'no':>7}"
                          f"{result.runs:>7}{result.steps:>8}{seconds:>8}")
                    table.append([release, at, name, str(seed), "yes" if result.found else "no", str(result.runs),
                                  str(result.steps), seconds])
                    if result.found:
                        found.append(result)
                runs = statistics.median(a.runs for a in found) if found else None
                spent = [a.seconds for a in found if a.seconds is not None]
                spread = f"{min(spent):.1f}–{max(spent):.1f} s" if spent else "-"
                print(f"{release:<9}{at:<11}{name:<8} found {len(found)}/{len(seeds)}, median runs {runs}, "
                      f"seconds {spread}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.write:
        write_results(args.write, "A third-party-style controller bug: runs to find it, with and without targeting",
                      f"seeds {seeds}; at most {args.runs} controller-level runs or {args.budget:.0f} s per attempt; "
                      f"one process; {controller.__name__}. The controller re-admits a broker in controlled "
                      "shutdown when the AlterPartition naming it arrives in the same tick as that broker's "
                      "heartbeat.",
                      markdown_table(("release", "current at", "ideas", "seed", "found", "runs", "steps", "seconds"),
                                     table), load_before)


if __name__ == "__main__":
    main()
