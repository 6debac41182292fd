"""Run a parsed scenario against one target (scenario-format.md semantics).

`Session` owns what is per target: captures, incarnation labels, the resolution of `current`
through the target's own observations (broker epochs are implementation-defined), and — at the
cluster level, for a target that shows its ground truth — the property monitor that judges every
step and answers `check_property` and `heal` (a target never judges itself).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import Target, TargetFailure, TargetUnavailable, UnsupportedConfiguration
from isrcheck.conformance.properties.monitor import PropertyMonitor, healed
from isrcheck.conformance.scenario.load import CAPTURE
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.contract.operations.step import Scenario, ScenarioResult, Step, StepFailure
from isrcheck.contract.operations.vocabulary import OPERATIONS, REQUIRED, SET_FIELDS, default_expectation
from isrcheck.reference_impl.release import profile_named


class StepError(Exception):
    """A step could not be carried out as written (e.g. a capture never taken because its step was skipped)."""


class Session:
    def __init__(self, target: Target, release: str) -> None:
        self.target = target
        self.release = release
        self.captures: dict[str, Any] = {}
        self.fresh_labels = itertools.count(1)
        self.monitor: PropertyMonitor | None = None
        """Created at the first operation after which the target shows its ground truth."""
        self.last_truth: ClusterObservation | None = None
        """The ground truth the monitor judged after the last operation (None: the target shows none)."""

    def value(self, raw: Any) -> Any:
        if isinstance(raw, str):
            match = CAPTURE.match(raw)
            if match:
                name, delta = match.group(1), match.group(2)
                if name not in self.captures:
                    raise StepError(f"capture ${name} was never taken (its step was skipped?)")
                value = self.captures[name]
                return value + int(delta) if delta else value
        if isinstance(raw, list):
            return [self.value(item) for item in raw]
        return raw

    def broker_epoch(self, broker: int) -> int:
        return int(self.target.observe("broker", {"broker": broker})["broker_epoch"])

    def partition_field(self, topic: str, partition: int, field: str) -> int:
        state = self.target.observe("partition", {"topic": topic, "partition": partition})
        return int(state[field]) if state.get("exists") else 0

    def partition_leader(self, topic: str, partition: int) -> int:
        """The partition's leader as this target shows it (-1 for none or an unknown partition)."""
        state = self.target.observe("partition", {"topic": topic, "partition": partition})
        return int(state["leader"]) if state.get("exists") else -1

    def resolve(self, step: Step) -> dict[str, Any]:
        """Concrete arguments: defaults filled, captures and `current` resolved for this target
        (and, from a generator, an AlterPartition `broker: leader`: this target's leader)."""
        spec = OPERATIONS[step.op]
        args: dict[str, Any] = {}
        for key, (_, default) in spec.args.items():
            if key in step.args:
                args[key] = self.value(step.args[key])
            elif default is not None and default is not REQUIRED:
                args[key] = default
        for key, raw in step.args.items():
            if key not in args:
                args[key] = self.value(raw)
        if step.op == "register_broker":
            label = args.get("incarnation")
            args["incarnation"] = f"fresh-{next(self.fresh_labels)}" if label is None else f"label-{label}"
        if step.op == "alter_partition":
            if args.get("version") is None:
                args["version"] = profile_named(self.release).alter_partition_versions[1]
            topic, partition = args["topic"], args["partition"]
            if args["broker"] == "leader":
                args["broker"] = self.partition_leader(topic, partition)
            for field in ("leader_epoch", "partition_epoch"):
                if args[field] == "current":
                    args[field] = self.partition_field(topic, partition, field)
            args["isr"] = [self.isr_member(m) for m in args["isr"]]
        for key in ("broker_epoch", "previous_broker_epoch"):
            if args.get(key) == "current":
                args[key] = self.broker_epoch(int(args["broker"]))
        return args

    def isr_member(self, member: Any) -> list[int]:
        broker, epoch = (member, "current") if not isinstance(member, list) else member
        broker_id = int(self.value(broker))
        epoch = self.value(epoch)
        return [broker_id, self.broker_epoch(broker_id) if epoch == "current" else int(epoch)]

    def run_step(self, step: Step) -> dict[str, Any]:
        return self.run_resolved(step)[1]

    def run_resolved(self, step: Step) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the concrete arguments sent, the result); captures of `step.captures` are taken."""
        args = self.resolve(step)
        spec = OPERATIONS[step.op]
        if spec.is_check:
            what = spec.observes or ("partition" if step.op == "check_partition" else "broker")
            if what == "property" and self.monitor is not None:
                return args, self.property_status(str(args["name"]))
            return args, self.target.observe(what, args)
        return args, self.execute(step.op, args)

    def execute(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one operation on the target, then judge the ground truth it shows (if any)."""
        if op == "heal":
            self.target.stop_heal_when(healed)
        result = self.target.execute(op, args)
        truth = self.last_truth = self.target.ground_truth()
        if truth is not None:
            if self.monitor is None:
                self.monitor = PropertyMonitor()
            if op == "heal":
                result = {**result, "live": "violated" if self.monitor.check_liveness(truth) else "holds"}
            self.monitor.observe(truth)
        return result

    @property
    def violations(self) -> tuple[Any, ...]:
        return () if self.monitor is None else tuple(self.monitor.violations)

    def property_status(self, name: str) -> dict[str, Any]:
        assert self.monitor is not None
        try:
            return self.monitor.status(name)
        except KeyError as error:
            raise TargetFailure("error", str(error.args[0])) from None

    def capture(self, step: Step, result: dict[str, Any]) -> None:
        for field, name in step.captures.items():
            self.captures[name] = result.get(field)


def same(field: str, expected: Any, actual: Any) -> bool:
    if field in SET_FIELDS and isinstance(expected, list) and isinstance(actual, list):
        return sorted(expected) == sorted(actual)
    return bool(expected == actual)


def expectations(step: Step, session: Session) -> dict[str, Any]:
    spec = OPERATIONS[step.op]
    if spec.is_check:
        named = {k: session.value(v) for k, v in step.args.items() if k in spec.results and k not in spec.args}
        named.update({k: session.value(v) for k, v in (step.expect or {}).items()})
        return named or default_expectation(step.op)
    if step.expect is None:
        return default_expectation(step.op)
    return {k: session.value(v) for k, v in step.expect.items()}


def skip_reason(scenario: Scenario, target: Target, release: str) -> str | None:
    if scenario.kafka is not None and not scenario.kafka.matches(profile_named(release).representative_version):
        return f"expectations hold for Kafka {scenario.kafka.text}, this run is {release}"
    if scenario.level not in target.levels:
        return f"target {target.name} does not support the {scenario.level} level"
    if target.releases is not None and release not in target.releases:
        return f"target {target.name} does not run Kafka {release} (it runs {', '.join(sorted(target.releases))})"
    return None


UNAVAILABLE = "the target could not start: "
"""A skip for this reason is the environment's, not the scenario's: a runner need not try the
scenarios after it (each would start the same target again and keep another set of logs)."""


def run_scenario(scenario: Scenario, target: Target, release: str) -> ScenarioResult:
    reason = skip_reason(scenario, target, release)
    if reason is not None:
        return ScenarioResult(scenario, "skipped", reason)
    select_level = getattr(target, "select_level", None)
    if select_level is not None:
        select_level(scenario.level)
    try:
        target.open(release, scenario.config)
    except TargetUnavailable as error:
        return ScenarioResult(scenario, "skipped", f"{UNAVAILABLE}{error}")
    except UnsupportedConfiguration as error:
        return ScenarioResult(scenario, "skipped", f"configuration not supported: {error}")
    session = Session(target, release)
    where = (0, "setup")
    try:
        for broker in scenario.brokers:
            for op in ("register_broker", "unfence_broker"):
                args: dict[str, Any] = {"broker": broker}
                if op == "register_broker":
                    args["incarnation"] = f"fresh-{next(session.fresh_labels)}"
                result = session.execute(op, args)
                if result.get("error") != "NONE":
                    failure = StepFailure(0, op, "error", "NONE", result.get("error"),
                                          f"setup of broker {broker} failed: {op} returned {result.get('error')}")
                    return ScenarioResult(scenario, "failed", failure.message, failure, violations=session.violations)
        for step in scenario.steps:
            if step.when is not None and not step.when.matches(profile_named(release).representative_version):
                continue
            where = (step.index, step.op)
            result = session.run_step(step)
            for field, expected in expectations(step, session).items():
                actual = result.get(field)
                if not same(field, expected, actual):
                    failure = StepFailure(
                        step.index, step.op, field, expected, actual,
                        f"step {step.index} ({step.op}): {field} expected {expected!r}, got {actual!r}",
                    )
                    return ScenarioResult(scenario, "failed", failure.message, failure, violations=session.violations)
            session.capture(step, result)
    except (StepError, TargetFailure) as error:
        failure = StepFailure(where[0], where[1], None, None, None, f"step {where[0]} ({where[1]}): {error}")
        return ScenarioResult(scenario, "failed", failure.message, failure, violations=session.violations)
    finally:
        target.close()
    return ScenarioResult(scenario, "passed", violations=session.violations)


def result_json(result: ScenarioResult) -> Mapping[str, Any]:
    scenario = result.scenario
    data: dict[str, Any] = {
        "file": scenario.file, "scenario": scenario.name, "source": scenario.source, "status": result.status,
    }
    if result.reason:
        data["reason"] = result.reason
    if result.failure is not None:
        f = result.failure
        data["failure"] = {"step": f.step, "op": f.op, "field": f.field, "expected": f.expected, "actual": f.actual}
    return data
