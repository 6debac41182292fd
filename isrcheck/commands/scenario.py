"""`isrcheck scenario FILE... [--adapter reference] [--kafka RELEASE] [--json]` (scenario-format.md).

Every file is loaded and checked before any scenario runs; exit 0 every scenario that ran passed
(some may be skipped), 1 a scenario failed, 2 a usage error, a malformed file, or nothing ran
(every scenario skipped: the reasons are printed) — docs/exit-codes.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from isrcheck.adapters.catalogue.adapter_options import check_environment, with_cli_options
from isrcheck.adapters.catalogue.registry import known_adapters, make_target
from isrcheck.conformance.scenario.load import load_all
from isrcheck.conformance.scenario.run import UNAVAILABLE, result_json, run_scenario
from isrcheck.contract.errors import EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, UsageError
from isrcheck.contract.operations.step import ScenarioResult
from isrcheck.reference_impl.release import NEWEST, PROFILES, profile_named


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "scenario", help="run declarative scenario files against a target",
        description="Run scenario files (or directories of them) against a target.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="scenario YAML files or directories")
    parser.add_argument("--bootstrap", metavar="HOST:PORT",
                        help="kafka-wire: drive the controller listening here (docs/wire.md)")
    parser.add_argument("--adapter", default="reference", metavar="SPEC",
                        help=f"the system under test (default: reference); {known_adapters()}".replace("%", "%%"))
    parser.add_argument("--kafka", default=NEWEST, metavar="RELEASE",
                        help=f"release profile, one of {', '.join(PROFILES)} (default {NEWEST})")
    parser.add_argument("--json", action="store_true", help="print one JSON result object per scenario")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        release = profile_named(args.kafka).name
    except ValueError as error:
        raise UsageError(str(error)) from None
    scenarios = load_all(args.files)
    args.adapter = with_cli_options(args.adapter, args.bootstrap, args.kafka)
    target = make_target(args.adapter)
    check_environment(args.adapter, args.kafka)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    try:
        first_skip = run_all(args, scenarios, target, release, counts)
    finally:
        target.shutdown()
    closing = f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    print(closing, file=sys.stderr if args.json else sys.stdout)
    if counts["failed"]:
        return EXIT_FAILED
    if not counts["passed"]:
        print(f"isrcheck scenario: nothing was tested: every scenario was skipped ({first_skip})", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_PASSED


def run_all(args: argparse.Namespace, scenarios: list[Any], target: Any, release: str, counts: dict[str, int]
            ) -> str | None:
    """Run every scenario, printing each result; returns the first skip's reason."""
    first_skip: str | None = None
    unavailable: str | None = None
    for scenario in scenarios:
        if unavailable is not None:
            result = ScenarioResult(scenario, "skipped", f"not tried: {unavailable}")
        else:
            result = run_scenario(scenario, target, release)
            if result.status == "skipped" and result.reason.startswith(UNAVAILABLE):
                unavailable = result.reason
        counts[result.status] += 1
        if result.status == "skipped" and first_skip is None:
            first_skip = result.reason
        if args.json:
            print(json.dumps(result_json(result)), flush=True)
            continue
        label = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[result.status]
        suffix = f" — {result.reason}" if result.reason else ""
        print(f"{label} {scenario.file} :: {scenario.name}{suffix}", flush=True)
    return first_skip
