"""The logical clock's timer queue: (due time, sequence) order, so equal due times fire in the
order they were set — deterministic. Timers are cancelled lazily: each carries its owner's
incarnation serial and a generation token that the owner checks when it fires.
"""

from __future__ import annotations

import heapq
from typing import NamedTuple


class Timer(NamedTuple):
    """An immutable entry of the queue. A NamedTuple rather than a frozen dataclass: a cluster
    step sets about twelve, and a frozen dataclass's per-field `object.__setattr__`
    made building it dearer than the tuple (docs/performance.md)."""

    due_ms: int
    kind: str
    """`heartbeat`, `isr_expiration`, `fetch`, `alter_partition_retry`, `produce_timeout`, `flush`."""
    broker: int
    serial: int
    """The broker incarnation that set it; a timer of a dead incarnation is discarded."""
    key: int = 0
    """Kind-specific: the leader id for `fetch`, the request id for `produce_timeout`."""
    generation: int = 0


class Timers:
    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Timer]] = []
        self._sequence = 0

    def __len__(self) -> int:
        return len(self._heap)

    def schedule(self, timer: Timer) -> None:
        self._sequence += 1
        heapq.heappush(self._heap, (timer.due_ms, self._sequence, timer))

    def next_due(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def pop(self) -> Timer:
        return heapq.heappop(self._heap)[2]

    def pop_due(self, now_ms: int) -> Timer | None:
        """The next timer if it is due at `now_ms` (taken off the queue), else None: `settle`'s
        one question per quiet moment, asked in one call instead of `next_due` and `pop`."""
        heap = self._heap
        if heap and heap[0][0] <= now_ms:
            return heapq.heappop(heap)[2]
        return None

    def pending(self) -> list[Timer]:
        return [entry[2] for entry in sorted(self._heap)]
