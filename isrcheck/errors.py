"""The one exception every layer raises for bad input that the user must fix (exit code 2)."""


class UsageError(Exception):
    """Bad input named precisely: file, scenario, step, field — never a traceback."""
