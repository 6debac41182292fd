"""Typed values of an adapter spec's ``KEY=VALUE`` options (`NAME,KEY=VALUE,...`); a value that
is not of the type is a usage error naming the option."""

from __future__ import annotations

from isrcheck.contract.errors import UsageError


def int_option(options: dict[str, str], key: str, default: int) -> int:
    try:
        return int(options.get(key, default))
    except ValueError:
        raise UsageError(f"adapter option {key}={options[key]!r} is not a number") from None


def float_option(options: dict[str, str], key: str, default: float) -> float:
    try:
        return float(options.get(key, default))
    except ValueError:
        raise UsageError(f"adapter option {key}={options[key]!r} is not a number") from None
