"""Turn an `--adapter` spec into a `Target` (built-ins; plug-ins are added by the engine issue)."""

from __future__ import annotations

from adapters.base import Target
from adapters.reference import ReferenceTarget
from isrcheck.usage import UsageError

BUILT_IN = ("reference",)


def make_target(spec: str) -> Target:
    if spec == "reference":
        return ReferenceTarget()
    raise UsageError(f"unknown adapter {spec!r} (known: {', '.join(BUILT_IN)})")
