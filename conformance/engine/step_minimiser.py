"""Step-level minimisation of a simulated cluster's counterexample, after Hypothesis's shrinking.

Hypothesis shrinks the machine's draws, and one draw of a `window` or an aimed schedule is a dozen
steps: it can drop the whole action, never the one step of it that does not matter, nor an `events`
step whose messages a later step delivers anyway. The simulated cluster is a pure function of its
steps (every `events` step carries its seed), so the steps themselves can be minimised: remove a
chunk, run the rest on a fresh cluster, keep the removal when the same finding (same signature)
happens again — Zeller and Hildebrandt's ddmin ("Simplifying and isolating failure-inducing input",
TSE 2002), chunks halving down to single steps. Reductions ddmin cannot make follow, each kept only
when the finding stays, then ddmin again: a `hold` removed with the `release` that undoes it (two
steps apart, so no chunk holds just them); two `tick`s made one, the earlier one's time moved onto
the later or the later one's onto the earlier (the clock is additive: only where in the schedule
the time passes changes); two `events` made one of their summed count; two `release`s made one
release of every hold; two `hold`s that share a sender or a receiver made one hold of what they
share (their releases too): "hold Heartbeat from 3, hold Fetch from 3" becomes "hold from 3"; and
last any two steps removed together, so that the result is 2-minimal (no single step and no two
steps can go) when the budget lets the search end.

Only for targets the campaign can build again in process and that repeat themselves (the
reference's mutants); a plug-in or a real cluster is neither cheap nor deterministic. The
set-up (brokers registered, the topic created) is kept as it is: a counterexample is read from
there.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from isrcheck.adapters.base import Target
from isrcheck.conformance.engine.run import Run, cluster_run
from isrcheck.conformance.engine.run_context import FinishedRun
from isrcheck.conformance.engine.targets import engine_cluster
from isrcheck.conformance.generator.cluster_machine import CLUSTER_CONFIG, SET_UP_STEPS
from isrcheck.contract.operations.step import Step

Item = TypeVar("Item")


def minimise_steps(steps: Sequence[Item], fails: Callable[[list[Item]], bool], keep: int,
                   deadline: float) -> list[Item]:
    """The shortest list found, before `deadline` (time.monotonic()), that still `fails`: the
    first `keep` steps untouched, chunks of the rest removed while the finding stays. `steps`
    itself must fail; each call of `fails` runs one candidate from scratch."""
    head, tail = list(steps[:keep]), list(steps[keep:])
    chunk = max(1, len(tail) // 2)
    while tail and time.monotonic() < deadline:
        removed_any = False
        start = 0
        while start < len(tail) and time.monotonic() < deadline:
            candidate = tail[:start] + tail[start + chunk:]
            if fails(head + candidate):
                tail = candidate
                removed_any = True
            else:
                start += chunk
        if chunk == 1 and not removed_any:
            break
        if not removed_any:
            chunk = max(1, chunk // 2)
    return head + tail


def paired_reductions(steps: Sequence[Step], keep: int) -> Iterator[list[Step]]:
    """Candidates one step or more shorter than `steps` that ddmin's chunks never build: a `hold`
    and the first later `release` of the same selector removed together; two `tick`s (successive
    ones first) made one of their summed time, at the later's place or at the earlier's; two
    successive `events` made one of their summed count and the earlier's seed, at either place (the
    events differ from the two steps' unless the seed's draws choose alike, as seed 0's first ones
    do: the oldest message each time); two successive `release`s made one that lifts every hold, at
    either place; two `hold`s made one of the selector fields they share (`_widened`); last, any
    other two steps removed together (a `crash` and its `restart` with a needed step between them,
    an `events` and a `tick` that only together move the cluster on): after ddmin no single step
    can go, after this no two."""
    holds = _places(steps, keep, "hold")
    undone = [(i, release) for i in holds if (release := _first_release(steps, i, steps[i].args)) is not None]
    for pair in undone:
        yield _without(steps, pair)
    for first, second in _nearest_first(steps, keep, "tick"):
        ms = int(steps[first].args["ms"]) + int(steps[second].args["ms"])
        yield _merged(steps, first, second, _with_args(steps[second], {"ms": ms}), at_second=True)
        yield _merged(steps, first, second, _with_args(steps[first], {"ms": ms}), at_second=False)
    for first, second in _successive(steps, keep, "events"):
        summed = {**steps[first].args, "count": int(steps[first].args.get("count", 1))
                  + int(steps[second].args.get("count", 1))}
        yield _merged(steps, first, second, _with_args(steps[first], summed), at_second=True)
        yield _merged(steps, first, second, _with_args(steps[first], summed), at_second=False)
    for first, second in _successive(steps, keep, "release"):
        yield _merged(steps, first, second, _with_args(steps[second], {}), at_second=True)
        yield _merged(steps, first, second, _with_args(steps[first], {}), at_second=False)
    for first, second in itertools.combinations(holds, 2):
        yield from _widened(steps, first, second)
    for pair in itertools.combinations(range(keep, len(steps)), 2):
        if pair not in undone:
            yield _without(steps, pair)


def _without(steps: Sequence[Step], pair: tuple[int, int]) -> list[Step]:
    return [step for i, step in enumerate(steps) if i not in pair]


def _first_release(steps: Sequence[Step], after: int, args: dict[str, object]) -> int | None:
    return next((j for j in range(after + 1, len(steps)) if steps[j].op == "release" and steps[j].args == args), None)


def _widened(steps: Sequence[Step], first: int, second: int) -> Iterator[list[Step]]:
    """The holds at `first` and `second` made one hold, at `first`, of the selector fields they
    share, lifted where the earlier of their releases was, or the later (the other release
    goes). Nothing when they share no field."""
    a, b = steps[first].args, steps[second].args
    shared = {name: value for name, value in a.items() if b.get(name) == value}
    if not shared or shared in (a, b):
        return
    releases = sorted(j for j in (_first_release(steps, first, a), _first_release(steps, second, b)) if j is not None)
    for lifted in releases[:2] or [None]:
        changed = {first: _with_args(steps[first], shared)}
        if lifted is not None:
            changed[lifted] = _with_args(steps[lifted], shared)
        gone = {second, *(j for j in releases if j != lifted)}
        yield [changed.get(i, step) for i, step in enumerate(steps) if i not in gone]


def _nearest_first(steps: Sequence[Step], keep: int, op: str) -> Iterator[tuple[int, int]]:
    """Positions of every two `op` steps: first each two with no other `op` step between them,
    then the others (a tick's time may belong past the next tick: B07's 3 s before a `produce`
    moved two ticks on, onto the one after a `deliver`)."""
    successive = list(_successive(steps, keep, op))
    return itertools.chain(successive, (pair for pair in itertools.combinations(_places(steps, keep, op), 2)
                                        if pair not in successive))


def _successive(steps: Sequence[Step], keep: int, op: str) -> Iterator[tuple[int, int]]:
    """Positions of each two `op` steps with no other `op` step between them."""
    return itertools.pairwise(_places(steps, keep, op))


def _places(steps: Sequence[Step], keep: int, op: str) -> list[int]:
    return [i for i in range(keep, len(steps)) if steps[i].op == op]


def _with_args(step: Step, args: dict[str, object]) -> Step:
    return Step(step.index, step.op, args, step.expect, dict(step.captures), step.when)


def _merged(steps: Sequence[Step], first: int, second: int, merged: Step, at_second: bool) -> list[Step]:
    """`steps` without the step at `first` and the one at `second`, `merged` standing at the
    place of the one named by `at_second`."""
    if at_second:
        return [*steps[:first], *steps[first + 1:second], merged, *steps[second + 1:]]
    return [*steps[:first], merged, *steps[first + 1:second], *steps[second + 1:]]


def reduce_steps(steps: list[Step], fails: Callable[[list[Step]], bool], keep: int, deadline: float) -> list[Step]:
    """ddmin, then the paired reductions, repeated while either shortens the steps and time is left."""
    best = minimise_steps(steps, fails, keep, deadline)
    while time.monotonic() < deadline:
        shorter = next((c for c in paired_reductions(best, keep) if time.monotonic() < deadline and fails(c)), None)
        if shorter is None:
            break
        best = minimise_steps(shorter, fails, keep, deadline)
    return best


def replay_cluster_steps(steps: Sequence[Step], make_target: Callable[[], Target] | None,
                         release: str) -> Run:
    """`steps` again on a fresh simulated cluster (and a fresh target beside it; None: the
    reference against itself), until the first finding. `isrcheck replay` runs a record's steps
    through it too."""
    reference = engine_cluster()
    reference.open(release, CLUSTER_CONFIG)
    target = reference if make_target is None else make_target()
    if target is not reference:
        target.open(release, CLUSTER_CONFIG)
    run = cluster_run(reference, target, release)
    try:
        for step in steps:
            run.step(step)
            if run.stopped:
                break
    finally:
        reference.close()
        if target is not reference:
            target.close()
    return run


def minimised_counterexample(counterexample: FinishedRun, make_target: Callable[[], Target] | None,
                             release: str, budget_s: float) -> tuple[FinishedRun, int]:
    """The counterexample with its steps minimised (same first finding signature), and the
    length it had; the counterexample itself when nothing could go or the budget is 0."""
    run = counterexample.run
    steps = [Step(t.index, t.op, dict(t.args), None, dict(t.captures), None) for t in run.trace]
    if not run.findings or budget_s <= 0:
        return counterexample, len(steps)
    signature = run.findings[0].signature

    def fails(candidate: list[Step]) -> bool:
        try:
            findings = replay_cluster_steps(candidate, make_target, release).findings
        except Exception:  # a candidate the reference cannot run is not the same finding
            return False
        return bool(findings) and findings[0].signature == signature

    best = reduce_steps(steps, fails, SET_UP_STEPS, time.monotonic() + budget_s)
    if len(best) == len(steps):
        return counterexample, len(steps)
    final = replay_cluster_steps(best, make_target, release)
    if not final.findings or final.findings[0].signature != signature:  # not repeatable after all
        return counterexample, len(steps)
    return FinishedRun(final, counterexample.seconds, counterexample.started_at), len(steps)
