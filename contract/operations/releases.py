"""Release specifiers such as ">=3.5" or ">=3.3,<4.0" (scenario-format.md, `kafka` and `when`)."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)?\s*(\d+(?:\.\d+){0,2})\s*$")
_OPERATORS: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt,
}


@dataclass(frozen=True)
class ReleaseSpecifier:
    text: str
    clauses: tuple[tuple[str, tuple[int, ...]], ...]

    @classmethod
    def parse(cls, text: str) -> ReleaseSpecifier:
        clauses = []
        for part in str(text).split(","):
            match = _CLAUSE.match(part)
            if match is None:
                raise ValueError(f"bad release specifier {text!r} (expected e.g. '>=3.5' or '>=3.3,<4.0')")
            clauses.append((match.group(1) or "==", tuple(int(x) for x in match.group(2).split("."))))
        return cls(str(text), tuple(clauses))

    def matches(self, version: tuple[int, ...]) -> bool:
        """Compare a release's version (a profile's modelled patch release), cut to each clause's
        precision."""
        return all(_OPERATORS[op](version[: len(bound)], bound) for op, bound in self.clauses)
