"""`isrcheck mutants [--json]`: the mutant catalogue (bugs.md) and the negative controls."""

from __future__ import annotations

import argparse
import json
from typing import Any

from isrcheck.reference_impl.mutants import CATALOGUE


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mutants", help="list the mutant catalogue",
        description="List the mutants: historical Kafka bugs reintroduced into the reference "
        "(docs/protocol/bugs.md), with their level, release and whether they are negative controls.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON array of mutants")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps([m.to_json() for m in CATALOGUE.values()], indent=2))
        return 0
    for mutant in CATALOGUE.values():
        breaks = "negative control" if mutant.negative_control else "breaks " + ", ".join(mutant.breaks)
        print(f"{mutant.id:<5} {mutant.level:<10} {mutant.source:<26} {breaks:<28} {mutant.title}")
    return 0
