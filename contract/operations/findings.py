"""What a run can find, as one value every checker returns and every record stores.

`Finding.signature` names the kind, the operation, the property or field and the error codes
involved — never epochs, ids or seeds — so the same bug found in a thousand runs groups into
one row (docs/records.md, "Signature"). A divergence a known-divergence rule matched
(`isrcheck.contract.operations.known_divergences`) names the rule in `known`, and its signature starts
with `known:<rule>:` so that it never groups with the same divergence from another cause.
"""

from __future__ import annotations

import builtins
import dataclasses
from dataclasses import dataclass
from typing import Any

DIVERGENCE = "divergence"
VIOLATION = "violation"
TIMEOUT = "timeout"
CRASH = "crash"
ERROR = "error"
KNOWN = "known"
"""A record's outcome when every finding of its run is a known divergence, and the prefix of such
a finding's signature."""


@dataclass(frozen=True)
class Finding:
    kind: str
    operation: str
    step: int
    message: str
    property: str | None = None
    field: str | None = None
    codes: tuple[str, ...] = ()
    evidence: dict[str, Any] = dataclasses.field(default_factory=dict)
    known: str | None = None
    """The known-divergence rule that matched this divergence on its run, or None (a finding)."""

    @builtins.property
    def signature(self) -> str:
        detail = self.property if self.kind == VIOLATION else self.field
        base = ":".join((self.kind, self.operation, detail or "", ",".join(sorted(set(self.codes)))))
        return base if self.known is None else f"{KNOWN}:{self.known}:{base}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "signature": self.signature,
            "operation": self.operation,
            "property": self.property,
            "field": self.field,
            "codes": list(self.codes),
            "step": self.step,
            "message": self.message,
            "evidence": self.evidence,
            "known": self.known,
        }


def error_codes(result: dict[str, Any] | None) -> list[str]:
    """Kafka error names in a result (top-level, per-partition and election errors)."""
    if not result:
        return []
    codes = [v for k, v in result.items() if k.endswith("error") and isinstance(v, str)]
    codes += [e[2] for e in result.get("errors") or [] if isinstance(e, list) and len(e) == 3]
    return [c for c in codes if c != "NONE"]
