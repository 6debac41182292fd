"""What a rule for Kafka's triaged behaviour is (docs/known-divergences.md): a name the records
carry (`Finding.known`), a title, where Kafka decides it, and a predicate on a finding and what
its checker saw — the step where the two sides parted (`known_divergences.py`) or the ground
truth where a property broke (`known_violations.py`). Never a signature string: the same code or
property from another cause must stay a finding."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from isrcheck.contract.operations.findings import Finding

Seen = TypeVar("Seen")


@dataclass(frozen=True)
class KnownRule(Generic[Seen]):
    name: str
    title: str
    source: str
    """Where Kafka decides it: class.method at the releases checked."""
    matches: Callable[[Finding, Seen], bool]


def partition_of(name: object) -> tuple[str, int] | None:
    """("t", 0) from a finding's "t-0"; None for anything else."""
    if not isinstance(name, str):
        return None
    topic, _, index = name.rpartition("-")
    return (topic, int(index)) if topic and index.isdigit() else None
