"""Step-level minimisation of a simulated cluster's counterexample (conformance/engine/
step_minimiser.py): ddmin keeps exactly the steps the finding needs, never touches the set-up,
stops at its deadline; in a campaign the counterexample written is shorter than Hypothesis's and
replays, step for step, to the same finding."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.step_minimiser import minimise_steps, reduce_steps, replay_cluster_steps
from isrcheck.conformance.engine.targets import TargetSpec
from isrcheck.conformance.generator.cluster_machine import SET_UP_STEPS
from isrcheck.contract.operations.step import Step


def needs(*wanted: int) -> tuple[list[list[int]], object]:
    calls: list[list[int]] = []

    def fails(candidate: list[int]) -> bool:
        calls.append(candidate)
        return set(wanted) <= set(candidate)
    return calls, fails


def test_only_the_steps_the_failure_needs_are_kept() -> None:
    calls, fails = needs(5, 12, 13)
    assert minimise_steps(list(range(20)), fails, 3, time.monotonic() + 10) == [0, 1, 2, 5, 12, 13]  # type: ignore[arg-type]
    assert all(c[:3] == [0, 1, 2] for c in calls)


def test_a_failure_that_needs_every_step_keeps_them_all() -> None:
    _, fails = needs(*range(3, 9))
    assert minimise_steps(list(range(9)), fails, 3, time.monotonic() + 10) == list(range(9))  # type: ignore[arg-type]


def step(op: str, **args: object) -> Step:
    return Step(0, op, dict(args), None, {}, None)


def test_a_hold_goes_with_its_release_and_adjacent_ticks_merge() -> None:
    """What ddmin's chunks cannot do: the finding needs a `produce` after 3 s have passed and
    no hold left in place; removing the hold or the release alone leaves a hold (or releases
    nothing held, which this finding forbids too), and either tick alone is too short."""
    set_up = [step("register_broker", broker=1)]
    steps = [*set_up, step("hold", kind="Fetch"), step("tick", ms=1000), step("tick", ms=2000),
             step("release", kind="Fetch"), step("produce")]

    def fails(candidate: list[Step]) -> bool:
        holds = [s.op for s in candidate if s.op in ("hold", "release")]
        waited = sum(int(s.args["ms"]) for s in candidate if s.op == "tick")
        return holds in ([], ["hold", "release"]) and waited >= 3000 and candidate[-1].op == "produce"

    assert minimise_steps(steps, fails, 1, time.monotonic() + 10) == steps
    reduced = reduce_steps(steps, fails, 1, time.monotonic() + 10)
    assert [(s.op, s.args) for s in reduced] == [("register_broker", {"broker": 1}), ("tick", {"ms": 3000}),
                                                 ("produce", {})]


def test_a_tick_moves_onto_the_next_one_across_a_step_between() -> None:
    """The finding needs a `deliver` before 3 s have passed and a `produce` after: the two ticks
    are not adjacent, and neither can go, but the first's time can pass later, with the second."""
    steps = [step("register_broker", broker=1), step("tick", ms=1000), step("deliver"), step("tick", ms=2000),
             step("produce")]

    def fails(candidate: list[Step]) -> bool:
        ops = [s.op for s in candidate]
        if "deliver" not in ops or "produce" not in ops:
            return False
        waited = sum(int(s.args.get("ms", 0)) for s in candidate[:ops.index("produce")])
        return waited >= 3000 and ops.index("deliver") < ops.index("produce")

    assert minimise_steps(steps, fails, 1, time.monotonic() + 10) == steps
    reduced = reduce_steps(steps, fails, 1, time.monotonic() + 10)
    assert [(s.op, s.args) for s in reduced] == [("register_broker", {"broker": 1}), ("deliver", {}),
                                                 ("tick", {"ms": 3000}), ("produce", {})]


KINDS = {"Fetch", "Heartbeat"}


def held_at(candidate: list[Step], at: int) -> set[str]:
    """The message kinds held when step `at` runs (a hold or release naming no kind: every kind)."""
    now: set[str] = set()
    for s in candidate[:at]:
        kinds = {str(s.args["kind"])} if "kind" in s.args else KINDS
        if s.op == "hold":
            now |= kinds
        elif s.op == "release":
            now -= kinds
    return now


def held_over_produce_free_for_deliver(candidate: list[Step], needs: tuple[str, ...] = ()) -> bool:
    """The finding of the next two tests: every kind held while `produce` runs, none when `deliver`
    does (and the steps in `needs` present)."""
    ops = [s.op for s in candidate]
    if any(op not in ops for op in ("produce", "deliver", *needs)):
        return False
    return held_at(candidate, ops.index("produce")) == KINDS and not held_at(candidate, ops.index("deliver"))


def test_two_releases_become_one_release_of_every_hold() -> None:
    """Two holds, each needed while `produce` runs, each lifted before `deliver` by its own
    release: one release of every hold in place of the two is a step shorter."""
    steps = [step("register_broker", broker=1), step("hold", kind="Fetch"), step("hold", kind="Heartbeat"),
             step("produce"), step("release", kind="Fetch"), step("release", kind="Heartbeat"), step("deliver")]
    fails = held_over_produce_free_for_deliver

    assert minimise_steps(steps, fails, 1, time.monotonic() + 10) == steps
    reduced = reduce_steps(steps, fails, 1, time.monotonic() + 10)
    assert len(reduced) == len(steps) - 1
    assert [s.args for s in reduced if s.op == "release"] == [{}]


def test_two_holds_from_one_sender_become_one_hold_of_the_sender() -> None:
    """Every message from broker 3 must be held while `produce` runs and free before `deliver`;
    the two holds (and their two releases) become one hold and one release of `from 3`."""
    steps = [step("register_broker", broker=1), step("hold", kind="Heartbeat", **{"from": 3}),
             step("hold", kind="Fetch", **{"from": 3}), step("produce"),
             step("release", kind="Heartbeat", **{"from": 3}), step("tick", ms=250),
             step("release", kind="Fetch", **{"from": 3}), step("deliver")]

    def fails(candidate: list[Step]) -> bool:
        return held_over_produce_free_for_deliver(candidate, ("tick",))

    assert minimise_steps(steps, fails, 1, time.monotonic() + 10) == steps
    reduced = reduce_steps(steps, fails, 1, time.monotonic() + 10)
    assert len(reduced) == len(steps) - 2
    assert [s.args for s in reduced if s.op == "hold"] == [{"from": 3}]
    assert [s.args for s in reduced if s.op == "release"] in ([{"from": 3}], [{}])


def test_two_steps_that_only_go_together_are_removed_together() -> None:
    """The finding needs `produce` then `deliver` with broker 3 up when `deliver` runs: the
    crash and the restart can go only together, and the `produce` between them keeps any of
    ddmin's chunks from taking just those two."""
    steps = [step("register_broker", broker=1), step("crash", broker=3), step("produce"),
             step("restart", broker=3), step("deliver")]

    def fails(candidate: list[Step]) -> bool:
        ops = [s.op for s in candidate]
        broker_3_up = ops.count("crash") == ops.count("restart")
        return "produce" in ops and "deliver" in ops and broker_3_up

    assert minimise_steps(steps, fails, 1, time.monotonic() + 10) == steps
    reduced = reduce_steps(steps, fails, 1, time.monotonic() + 10)
    assert [s.op for s in reduced] == ["register_broker", "produce", "deliver"]


def test_a_tick_moves_past_the_next_tick_onto_a_later_one() -> None:
    """The finding needs 250-1000 ms between `produce` and `deliver`, some time between `deliver`
    and `crash` and 3.5 s in all: the first tick's 3 s can go onto the last tick, two ticks on.
    Merging successive ticks either way closes one of the two gaps; no tick can go."""
    steps = [step("register_broker", broker=1), step("tick", ms=3000), step("produce"), step("tick", ms=250),
             step("deliver"), step("tick", ms=250), step("crash")]

    def gap(candidate: list[Step], start: str, end: str) -> int:
        ops = [s.op for s in candidate]
        between = candidate[ops.index(start) + 1:ops.index(end)]
        return sum(int(s.args["ms"]) for s in between if s.op == "tick")

    def fails(candidate: list[Step]) -> bool:
        ops = [s.op for s in candidate]
        if [op for op in ops if op in ("produce", "deliver", "crash")] != ["produce", "deliver", "crash"]:
            return False
        waited = sum(int(s.args["ms"]) for s in candidate if s.op == "tick")
        return (250 <= gap(candidate, "produce", "deliver") <= 1000 and gap(candidate, "deliver", "crash") > 0
                and waited >= 3500)

    assert minimise_steps(steps, fails, 1, time.monotonic() + 10) == steps
    reduced = reduce_steps(steps, fails, 1, time.monotonic() + 10)
    assert [(s.op, s.args) for s in reduced] == [
        ("register_broker", {"broker": 1}), ("produce", {}), ("tick", {"ms": 250}), ("deliver", {}),
        ("tick", {"ms": 3250}), ("crash", {})]


def test_successive_events_become_one_of_their_summed_count() -> None:
    """The finding needs three scheduler events before `produce`: no step can go, but the
    three `events` steps can become one of count 3 (the earlier's seed kept)."""
    steps = [step("register_broker", broker=1), step("events", seed=0, count=1), step("events", seed=5, count=1),
             step("events", seed=0, count=1), step("produce")]

    def fails(candidate: list[Step]) -> bool:
        ops = [s.op for s in candidate]
        before = candidate[:ops.index("produce")] if "produce" in ops else []
        return sum(int(s.args["count"]) for s in before if s.op == "events") >= 3

    assert minimise_steps(steps, fails, 1, time.monotonic() + 10) == steps
    reduced = reduce_steps(steps, fails, 1, time.monotonic() + 10)
    assert [(s.op, s.args) for s in reduced] == [("register_broker", {"broker": 1}),
                                                 ("events", {"seed": 0, "count": 3}), ("produce", {})]


def test_the_deadline_stops_it_with_a_failing_list() -> None:
    calls, fails = needs(7)
    assert minimise_steps(list(range(50)), fails, 3, time.monotonic() - 1) == list(range(50))  # type: ignore[arg-type]
    assert calls == []


@pytest.mark.parametrize(("mutant", "seed", "runs"), [("B06", 3001, 45), ("B07", 1, 15)])
def test_a_campaign_writes_a_shorter_counterexample_that_replays(mutant: str, seed: int, runs: int,
                                                                 tmp_path: Path) -> None:
    result = run_campaign(CampaignConfig(mutant=mutant, level="cluster", release="4.1", examples=runs, seed=seed,
                                         steps=40, shrink_budget_s=5, stop_at_first=True, records_dir=tmp_path))
    records = [json.loads(line) for path in result.records_files for line in Path(path).read_text().splitlines()]
    counterexample = next(r for r in records if r["findings"])["counterexample"]
    record = next(r for r in records if r["findings"])
    before = record["findings"][0]["evidence"]["minimised_from_steps"]
    assert counterexample["length"] < before
    steps = [Step(s["index"], s["op"], s["args"], None, s.get("as", {}), None) for s in counterexample["steps"]]
    set_up = [*("register_broker", "unfence_broker") * 3, "create_topic", "events"]
    assert [s.op for s in steps[:SET_UP_STEPS]] == set_up
    replayed = replay_cluster_steps(steps, TargetSpec("reference", mutant).factory("cluster"), "4.1")
    assert replayed.findings[0].signature == counterexample["findings"][0]["signature"]
    assert len(replayed.trace) == counterexample["length"]
