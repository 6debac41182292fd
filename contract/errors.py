"""The one exception every layer raises for bad input that the user must fix (exit code 2), and
the exit codes every sub-command shares (docs/exit-codes.md)."""

EXIT_PASSED = 0
"""The target was exercised and nothing was found (every scenario passed)."""
EXIT_FAILED = 1
"""The target broke a property, diverged from the reference, crashed or hung (a scenario failed)."""
EXIT_USAGE = 2
"""A usage or environment error, named in one line — or nothing was tested (every run or
scenario skipped, with the reason): a CI job must not go green having tested nothing."""
EXIT_ENGINE_ERROR = 3
"""isrcheck itself failed (a bug in isrcheck): no verdict on the target."""


class UsageError(Exception):
    """Bad input named precisely: file, scenario, step, field — never a traceback."""
