"""Does a controller-level cosmic-ray mutant ever decide differently in the states campaigns reach?

For a survivor suspected equivalent over reachable states (bench/mutation_triage.py), this runs
ordinary controller campaigns with the *unmutated* reference and, at every call the controller
makes of the mutated function, calls the mutant's copy of it with the same arguments and counts
the calls whose result differs. Zero differing calls over many is the measurement behind such a
triage; a single one is a state that tells the mutant apart, and the triage is wrong.

    python3 bench/mutant_decisions.py --function build_partition_change \\
        --only partition_change:core/ReplaceComparisonOperator_NotEq_Lt:7 \\
        -- --kafka 4.0 --setting eligible_leader_replicas=true --seed 21 --budget 60
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import isrcheck.reference_impl.controller as controller
from mutated_reference import CONTROLLER_RULE_MODULES, load_copy  # type: ignore[import-not-found]
from mutation import enumerate_mutants  # type: ignore[import-not-found]

from isrcheck.cli import main as isrcheck_main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--function", required=True, help="the rule function controller.py calls (by its name there)")
    parser.add_argument("--only", nargs="+", required=True, help="mutant keys (module:operator:occurrence)")
    parser.add_argument("run_args", nargs="*", help="after --: options for 'isrcheck run' (controller level)")
    args = parser.parse_args()
    original: Callable[..., Any] | None = getattr(controller, args.function, None)
    if original is None:
        parser.error(f"controller.py calls no function named {args.function!r}")
    modules = sorted({key.split(":")[0] for key in args.only})
    if any(module not in CONTROLLER_RULE_MODULES for module in modules):
        parser.error(f"only mutants of {', '.join(CONTROLLER_RULE_MODULES)} (the controller's rule modules)")
    wanted = set(args.only)
    copies = {spec.key: getattr(load_copy(spec.module, source), args.function)
              for spec, source in enumerate_mutants(modules).mutants if spec.key in wanted}
    if set(copies) != wanted:
        parser.error(f"no such mutant: {', '.join(sorted(wanted - set(copies)))}")
    calls = 0
    differ: Counter[str] = Counter()

    def compared(*call_args: Any, **call_kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        result = original(*call_args, **call_kwargs)
        for key, mutant in copies.items():
            if mutant(*call_args, **call_kwargs) != result:
                differ[key] += 1
        return result

    setattr(controller, args.function, compared)
    code = isrcheck_main(["run", "--level", "controller", "--workers", "1", "--no-differential", *args.run_args])
    print(f"{calls} calls of {args.function}")
    for key in sorted(copies):
        print(f"{key}: {differ[key]} decided differently")
    return code


if __name__ == "__main__":
    sys.exit(main())
