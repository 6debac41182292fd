"""The `isrcheck` command line: one sub-command per module in `isrcheck.commands`.

Exit codes are shared by every sub-command (docs/exit-codes.md, `isrcheck.contract.errors`): 0 the target
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
from isrcheck.contract.errors import EXIT_ENGINE_ERROR, EXIT_USAGE, UsageError

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
    "isrcheck.commands.qualify",
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every sub-command, or, when `argv` names one, of that one alone."""
    parser = argparse.ArgumentParser(
        prog="isrcheck",
        description="Property-based conformance tests for Kafka's ISR protocol "
        "(AlterPartition, KIP-497, KIP-841, KIP-903).",
    )
    parser.add_argument("--version", action="version", version=f"isrcheck {installed_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules_for(argv):
        importlib.import_module(name).register(subparsers)
    return parser


def modules_for(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The module of the sub-command `argv` names (its first word that is not an option), or all
    of them for help, the version or a word that names none. A command imports only what it runs:
    importing every command module took about 0.25 s before any command started (kio's protocol
    schemas for `serve-controller`, mostly), a campaign's parent included, while its workers waited
    for their first batch."""
    named = next((word for word in argv or () if not word.startswith("-")), None)
    chosen = tuple(name for name in COMMAND_MODULES if command_name(name) == named)
    return chosen or COMMAND_MODULES


def command_name(module: str) -> str:
    """`isrcheck.commands.serve_controller` → `serve-controller`."""
    return module.rpartition(".")[2].replace("_", "-")


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
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
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
