"""The `isrcheck` command line: one sub-command per module in `isrcheck.commands`.

Exit codes are shared by every sub-command (docs/exit-codes.md, `isrcheck.errors`): 0 the target
was exercised and nothing was found, 1 a finding, a crash or hang of the target, or a failed
scenario, 2 a usage or environment error or nothing tested, 3 isrcheck itself failed. Every error
is one line on stderr, never a traceback (ISRCHECK_TRACEBACK=1 shows the traceback of an
isrcheck failure).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from isrcheck.conformance.engine.hypothesis_internals import keep_files_out_of_the_working_directory
from isrcheck.errors import EXIT_ENGINE_ERROR, EXIT_USAGE, UsageError

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
    parser.add_argument("--version", action="version", version=f"isrcheck {installed_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def installed_version() -> str:
    try:
        return version("isrcheck")
    except PackageNotFoundError:
        return "(not installed)"


def one_line(text: str, limit: int = 300) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[:limit] + " …"


def main(argv: Sequence[str] | None = None) -> int:
    keep_files_out_of_the_working_directory()  # before any command module imports kio
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        code: int = args.handler(args)
    except UsageError as error:
        print(f"isrcheck {args.command}: error: {one_line(str(error), 600)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("isrcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except OSError as error:
        if error.filename is None:
            return internal_error(args.command, error)
        # a path the user named (or a default one) cannot be read or written: theirs to fix
        print(f"isrcheck {args.command}: error: {error.filename}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as error:
        return internal_error(args.command, error)
    return code


def internal_error(command: str, error: Exception) -> int:
    """isrcheck failed where it should not: one line that says so (not the target's fault, not
    the user's), the traceback only on request."""
    if os.environ.get("ISRCHECK_TRACEBACK"):
        raise error
    print(f"isrcheck {command}: internal error (a bug in isrcheck, please report it): "
          f"{type(error).__name__}: {one_line(str(error))} (ISRCHECK_TRACEBACK=1 shows where)", file=sys.stderr)
    return EXIT_ENGINE_ERROR


if __name__ == "__main__":
    sys.exit(main())
