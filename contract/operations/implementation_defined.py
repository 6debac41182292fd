"""Differences the protocol leaves to the implementation: the one list the differential checker
skips and the report shows in grey, with the reason, never as a divergence.

Broker epochs are the case in point (scenario-format.md, Values; negative control N1): Kafka
takes them from the metadata log's offsets, another implementation from a private counter, and
both are right as long as each is used consistently. The differential
(`isrcheck.conformance.engine.differential`) and the report (`isrcheck.reports.html_sequence`)
both read `IMPLEMENTATION_DEFINED` and compare values with `same_value`, so a difference the
checker let pass can never be drawn as one it flagged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from isrcheck.contract.operations.vocabulary import SET_FIELDS

IMPLEMENTATION_DEFINED: dict[str, str] = {
    "broker_epoch": "broker epochs are implementation-defined: Kafka uses metadata-log offsets, other "
                    "implementations may count privately (negative control N1); only their use must agree",
}
"""Result or state field → why its value may differ between implementations."""


def same_value(field: str, reference: Any, target: Any) -> bool:
    """Equal as the protocol means it: set-valued fields (ISR, ELR …) compare without order."""
    if field in SET_FIELDS and isinstance(reference, list) and isinstance(target, list):
        return sorted(reference) == sorted(target)
    return bool(reference == target)


@dataclass(frozen=True)
class Differences:
    """How one step's two results differ: fields that diverge, and fields allowed to."""

    divergent: tuple[str, ...]
    allowed: tuple[str, ...]


def differences(reference: Any, target: Any) -> Differences:
    """Field by field for two result objects (the reference's field order first); anything that
    is not a pair of objects differs as a whole (field "" )."""
    if not isinstance(reference, Mapping) or not isinstance(target, Mapping):
        return Differences(() if reference == target else ("",), ())
    divergent: list[str] = []
    allowed: list[str] = []
    for field in [*reference, *(k for k in target if k not in reference)]:
        if same_value(field, reference.get(field), target.get(field)):
            continue
        (allowed if field in IMPLEMENTATION_DEFINED else divergent).append(field)
    return Differences(tuple(divergent), tuple(allowed))
