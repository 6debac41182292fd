"""The `isrcheck` command line: one sub-command per module in `isrcheck.commands`.

Exit codes are shared by every sub-command: 0 nothing found / all passed, 1 a finding or failed
scenario, 2 a usage or configuration error (printed as one line, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from isrcheck.errors import UsageError

COMMAND_MODULES: tuple[str, ...] = (
    "isrcheck.commands.scenario",
    "isrcheck.commands.run",
    "isrcheck.commands.replay",
    "isrcheck.commands.check",
    "isrcheck.commands.mutants",
    "isrcheck.commands.serve_controller",
    "isrcheck.commands.summarize",
    "isrcheck.commands.report",
    "isrcheck.commands.pipeline",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="isrcheck",
        description="Property-based conformance tests for Kafka's ISR protocol "
        "(AlterPartition, KIP-497, KIP-841, KIP-903).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args)
    except UsageError as error:
        print(f"isrcheck {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("isrcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
