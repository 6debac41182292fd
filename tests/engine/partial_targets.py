"""Targets that declare operations they do not support, loaded by tests through the
`module:Class` adapter path. Each refuses, as a crash, any operation it declared unsupported,
so a campaign that sends one fails."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from isrcheck.adapters.base import Args, Result
from isrcheck.adapters.reference.controller_target import ReferenceTarget


class CountingTarget(ReferenceTarget):
    """The reference, counting the operations it was sent (in this process)."""

    sent: ClassVar[Counter[str]] = Counter()

    def execute(self, op: str, args: Args) -> Result:
        if op in self.unsupported_operations:
            raise RuntimeError(f"sent {op}, declared unsupported")
        type(self).sent[op] += 1
        return super().execute(op, args)


class WithoutReassign(CountingTarget):
    sent: ClassVar[Counter[str]] = Counter()
    unsupported_operations = frozenset({"reassign"})


class WithoutFence(CountingTarget):
    sent: ClassVar[Counter[str]] = Counter()
    unsupported_operations = frozenset({"fence_broker"})
