"""Run `isrcheck run` with one reference module replaced by a mutated copy, as the *target* only.

The engine judges a target against the unmutated reference (the oracle, the generator's model),
so a mutant must never leak into the oracle. This process therefore imports the reference as
usual and loads the mutated source beside it under another name
(`isrcheck.reference_impl.<module>__mutated`), inside the same package, so that its relative
imports (`from .errors import Error`) bind the very objects the rest of the reference uses. The
mutated rules then reach the target only, through the same injection points the mutant catalogue
uses (reference_impl/mutants/__init__.py):

- `leader_rules`, `follower`: a `LeaderRules()` / `FollowerRules()` instance of the mutated module
  passed to the cluster model (`leader_rules=`, `follower_rules=`);
- `alter_partition_manager`: the mutated `AlterPartitionManager` class (`manager_class=`);
- `alter_partition`, `partition_change`: functions the controller calls through its module's
  globals, so `controller.py` is loaded a second time too, with every name it imported from the
  original module rebound to the mutated one; its `Controller` is the target's `controller_class`.

Value types (enums, dataclasses, named tuples) whose definition the mutation left unchanged are
the original objects in the copy, so values cross between the copy and the rest of the model
unchanged (`ErrorOutcome.REVERT` from the mutated `LeaderRules` is the `partition` module's).

The mutant is registered in the catalogue under `MUTANT_ID` for this process only and the
command line is handed to `isrcheck run --mutant MUTANT_ID`: the campaign is the one a user runs,
with nothing aimed at the mutant (no catalogue entry steers generation). `bench/mutation.py`
starts one such process per mutant and campaign; run alone:

    python3 bench/mutated_reference.py --module leader_rules --source MUTATED.py -- --seed 1 --budget 60
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from isrcheck.conformance.generator.cluster_machine import ACTIONS, ClusterMachine
from isrcheck.reference_impl.mutants import CATALOGUE, Mutant

from isrcheck.cli import main as isrcheck_main

PACKAGE = "isrcheck.reference_impl"
MUTANT_ID = "COSMIC"
CONTROLLER_RULE_MODULES = ("alter_partition", "partition_change")
"""Modules the controller calls: their mutants run at the controller level."""
CLUSTER_RULE_MODULES = ("leader_rules", "follower", "alter_partition_manager")
"""Modules of the brokers in the cluster model: their mutants run at the cluster level."""
RULE_MODULES = CONTROLLER_RULE_MODULES + CLUSTER_RULE_MODULES


def level_of(module: str) -> str:
    return "controller" if module in CONTROLLER_RULE_MODULES else "cluster"


def class_definitions(source: str) -> dict[str, str]:
    """Top-level class name → its AST, dumped: equal dumps are the same definition."""
    return {node.name: ast.dump(node) for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}


def is_value_type(value: object) -> bool:
    return isinstance(value, type) and (
        issubclass(value, enum.Enum) or dataclasses.is_dataclass(value) or issubclass(value, tuple))


def load_copy(module: str, source: str) -> ModuleType:
    """`source` executed as a sibling of `PACKAGE.module`; unchanged value types are the original's."""
    original = importlib.import_module(f"{PACKAGE}.{module}")
    copy = ModuleType(f"{PACKAGE}.{module}__mutated")
    copy.__package__ = PACKAGE
    copy.__file__ = f"<mutated {module}.py>"
    sys.modules[copy.__name__] = copy  # dataclasses look their module up while the class is built
    exec(compile(source, copy.__file__, "exec"), copy.__dict__)
    assert original.__file__ is not None
    before = class_definitions(Path(original.__file__).read_text(encoding="utf-8"))
    for name, dumped in class_definitions(source).items():
        shared = getattr(original, name, None)
        if before.get(name) == dumped and is_value_type(shared):
            setattr(copy, name, shared)
    return copy


def controller_over(original: ModuleType, mutated: ModuleType) -> type[Any]:
    """A second `controller` module whose names imported from `original` are `mutated`'s."""
    controller_module = importlib.import_module(f"{PACKAGE}.controller")
    assert controller_module.__file__ is not None
    copy = load_copy("controller", Path(controller_module.__file__).read_text(encoding="utf-8"))
    missing = object()
    for name, value in list(vars(copy).items()):
        if getattr(original, name, missing) is value:
            setattr(copy, name, getattr(mutated, name))
    controller_class: type[Any] = copy.Controller
    return controller_class


def mutant_entry(module: str, source: str) -> Mutant:
    """The catalogue entry that puts the mutated module into the target."""
    if module not in RULE_MODULES:
        raise SystemExit(f"mutated_reference: unknown module {module!r} (known: {', '.join(RULE_MODULES)})")
    mutated = load_copy(module, source)
    title = f"cosmic-ray mutant of reference_impl/{module}.py"
    if module in CONTROLLER_RULE_MODULES:
        original = importlib.import_module(f"{PACKAGE}.{module}")
        return Mutant(MUTANT_ID, title, "cosmic-ray", (), "controller",
                      controller_class=controller_over(original, mutated))
    option = {
        "leader_rules": ("leader_rules", lambda: mutated.LeaderRules()),
        "follower": ("follower_rules", lambda: mutated.FollowerRules()),
        "alter_partition_manager": ("manager_class", lambda: mutated.AlterPartitionManager),
    }[module]
    return Mutant(MUTANT_ID, title, "cosmic-ray", (), "cluster", cluster_options=((option[0], option[1]()),))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", required=True, choices=RULE_MODULES, help="the reference module mutated")
    parser.add_argument("--source", required=True, type=Path, help="the mutated source of that module")
    parser.add_argument("--leave-out", nargs="+", default=[], choices=sorted(set(ACTIONS)), metavar="ACTION",
                        help="cluster-level actions the generator never takes (they deliver messages instead): "
                        "shows what an action finds that the rest does not (one worker: this process)")
    parser.add_argument("run_args", nargs="*", help="after --: options for 'isrcheck run' (not --mutant/--level)")
    args = parser.parse_args(argv)
    ClusterMachine.left_out = frozenset(args.leave_out)
    try:
        source = args.source.read_text(encoding="utf-8")
    except OSError as error:
        print(f"mutated_reference: cannot read {args.source}: {error.strerror}", file=sys.stderr)
        return 2
    entry = mutant_entry(args.module, source)
    CATALOGUE[MUTANT_ID] = entry
    return isrcheck_main(["run", "--mutant", MUTANT_ID, "--level", entry.level, *args.run_args])


if __name__ == "__main__":
    sys.exit(main())
