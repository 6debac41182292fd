"""Turn an `--adapter` spec into a `Target`.

Four ways: a built-in name (`reference`, or `reference+ID` for the reference with a catalogued
mutant); a plug-in registered under the entry-point group
`isrcheck.adapters`; `module:Class` (any importable Target subclass or factory); and
`exec:COMMAND` (a process speaking docs/exec-protocol.md). In-process plug-ins are wrapped so
every call has a timeout.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from isrcheck.adapters.base import CLUSTER, CONTROLLER, Args, Result, Target
from isrcheck.adapters.catalogue.adapter_options import is_option_spec, make_option_target
from isrcheck.adapters.guarded import GuardedTarget
from isrcheck.adapters.reference.cluster_target import ReferenceClusterTarget
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.contract.errors import UsageError
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.mutants import CATALOGUE


class LevelDispatch(Target):
    """One target per scenario level: the scenario runner calls `select_level` before `open`, and
    every call goes to the target of that level (docs/cluster-scenarios.md)."""

    def __init__(self, name: str, targets: Mapping[str, Target]) -> None:
        self.name = name
        self.targets = dict(targets)
        self.levels = frozenset(self.targets)
        self.current = self.targets[CONTROLLER] if CONTROLLER in self.targets else next(iter(self.targets.values()))

    def select_level(self, level: str) -> None:
        self.current = self.targets[level]

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        self.current.open(release, config)

    def execute(self, op: str, args: Args) -> Result:
        return self.current.execute(op, args)

    def observe(self, what: str, args: Args) -> Result:
        return self.current.observe(what, args)

    def ground_truth(self) -> ClusterObservation | None:
        return self.current.ground_truth()

    def stop_heal_when(self, condition: Callable[[ClusterObservation], bool]) -> None:
        self.current.stop_heal_when(condition)

    def close(self) -> None:
        self.current.close()


def reference_targets() -> Target:
    """`reference`: the reference controller for controller scenarios, the cluster model for cluster ones."""
    return LevelDispatch("reference", {CONTROLLER: ReferenceTarget(), CLUSTER: ReferenceClusterTarget()})


def reference_with_mutant(mutant_id: str) -> Target:
    """`reference+ID`: the reference with a catalogued mutant (`isrcheck mutants`) applied — its
    controller class at the controller level, its cluster options in the cluster model."""
    mutant = CATALOGUE.get(mutant_id)
    if mutant is None:
        raise UsageError(f"unknown mutant {mutant_id!r} (known: {', '.join(CATALOGUE)})")
    options = mutant.cluster_kwargs()
    controller_class = options.get("controller_class", Controller)
    assert isinstance(controller_class, type) and issubclass(controller_class, Controller)
    cluster = ReferenceClusterTarget(**options)
    return LevelDispatch(f"reference+{mutant_id}", {CONTROLLER: ReferenceTarget(controller_class), CLUSTER: cluster})


BUILT_IN: dict[str, Callable[[], Target]] = {"reference": reference_targets}
MUTANT_PREFIX = "reference+"
ENTRY_POINT_GROUP = "isrcheck.adapters"


def plugin_factories() -> dict[str, Callable[[], Target]]:
    return {ep.name: ep.load for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load_object(path: str) -> Callable[[], Target]:
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"adapter {path!r}: cannot import module {module_name!r}: {error}") from None
    factory = getattr(module, attribute, None)
    if factory is None or not callable(factory):
        raise UsageError(f"adapter {path!r}: module {module_name!r} has no callable {attribute!r}")
    return factory  # type: ignore[no-any-return]


def make_target(spec: str, timeout_s: float = 30.0) -> Target:
    if spec in BUILT_IN:
        return BUILT_IN[spec]()
    if spec.startswith(MUTANT_PREFIX):
        return reference_with_mutant(spec[len(MUTANT_PREFIX):])
    if spec.startswith("exec:"):
        from isrcheck.adapters.plugins.exec_target import ExecTarget

        return ExecTarget(spec[len("exec:"):], timeout_s=timeout_s)
    if is_option_spec(spec):  # kafka-wire, kafka-docker, kafka-local, kafka-cluster (docs/wire.md)
        return make_option_target(spec)
    plugins = plugin_factories()
    if spec in plugins:
        return instantiate(spec, plugins[spec](), timeout_s)
    if ":" in spec:
        return instantiate(spec, load_object(spec), timeout_s)
    raise UsageError(f"unknown adapter {spec!r}; {known_adapters(plugins)}")


OPTION_ADAPTERS = (
    "kafka-wire[,bootstrap=HOST:PORT,metadata-log=DIR]", "kafka-docker[,version=X.Y.Z]",
    "kafka-local[,kafka-home=DIR]", "kafka-cluster[,version=X.Y.Z]",
)


def known_adapters(plugins: Mapping[str, object] | None = None) -> str:
    """Every way to name a target, in one line: for `--adapter` help and the unknown-adapter error."""
    installed = sorted(plugin_factories() if plugins is None else plugins)
    names = [*BUILT_IN, "reference+MUTANT", *OPTION_ADAPTERS, "exec:COMMAND", "module:Class", *installed]
    return (f"adapters: {', '.join(names)}; options are NAME,KEY=VALUE,... "
            "(docs/wire.md, docs/real-kafka.md, docs/exec-protocol.md)")


def instantiate(spec: str, factory: object, timeout_s: float) -> Target:
    try:
        target = factory() if callable(factory) else factory
    except Exception as error:
        raise UsageError(f"adapter {spec!r} could not be created: {type(error).__name__}: {error}") from None
    if not isinstance(target, Target):
        raise UsageError(f"adapter {spec!r} did not produce an isrcheck Target (got {type(target).__name__})")
    return GuardedTarget(target, timeout_s)
