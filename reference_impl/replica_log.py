"""One replica's log of one partition: records, leader-epoch cache, high watermark, flush point.

A record is `(leader epoch, record id)`; record ids are unique in a cluster, so two replicas hold
"the same record" exactly when the pairs are equal (log matching, KIP-101/279). The leader-epoch
cache is a list of `(epoch, start offset)` (leader.md §10 `maybeAssignEpochStartOffset`, §13).
The log start offset is always 0 (no retention in the model).
"""

from __future__ import annotations

from collections.abc import Sequence

from isrcheck.contract.history.ground_truth import Record as Record

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1


class ReplicaLog:
    __slots__ = ("_snapshot", "epochs", "flushed", "hw", "records")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.epochs: list[tuple[int, int]] = []
        self.hw = 0
        self.flushed = 0
        self._snapshot: tuple[Record, ...] | None = ()

    @property
    def leo(self) -> int:
        return len(self.records)

    def latest_epoch(self) -> int:
        """The newest epoch in the cache (the follower's `lastFetchedEpoch`, §13); -1 if none."""
        return self.epochs[-1][0] if self.epochs else UNDEFINED_EPOCH

    def snapshot(self) -> tuple[Record, ...]:
        """The records as an immutable value (cached until the next change)."""
        if self._snapshot is None:
            self._snapshot = tuple(self.records)
        return self._snapshot

    def read(self, start: int, max_records: int) -> tuple[Record, ...]:
        return tuple(self.records[start:start + max_records])

    def append(self, records: Sequence[Record]) -> None:
        """Append records (as leader or as follower), extending the epoch cache at epoch changes."""
        if not records:
            return
        latest = self.latest_epoch()
        offset = len(self.records)
        for epoch, _ in records:
            if epoch > latest:
                self.epochs.append((epoch, offset))
                latest = epoch
            offset += 1
        self.records.extend(records)
        self._snapshot = None

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """KAFKA-7415: a new leader writes (its epoch, its LEO) into the cache when it takes over."""
        if epoch > self.latest_epoch():
            self.epochs.append((epoch, start_offset))

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """KIP-279 `LeaderEpochFileCache.endOffsetFor`: for the newest epoch (epoch, LEO); else
        (largest cached epoch ≤ `epoch`, start of the next cached epoch); for an epoch older than
        every cached one (`epoch`, start of the first); (-1, -1) when `epoch` is undefined or newer
        than every cached epoch."""
        epochs = self.epochs
        if epoch == UNDEFINED_EPOCH or not epochs:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if epochs[-1][0] == epoch:
            return epoch, len(self.records)
        higher = 0
        while higher < len(epochs) and epochs[higher][0] <= epoch:
            higher += 1
        if higher == len(epochs):
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if higher == 0:
            return epoch, epochs[0][1]
        return epochs[higher - 1][0], epochs[higher][1]

    def truncate_to(self, offset: int) -> None:
        """Remove records at and above `offset` and cached epochs starting there. At or past the
        LEO no record goes, but cached epochs starting at the LEO still do (Kafka's
        `UnifiedLog.truncateTo`: a former leader's epoch entry with no records would otherwise
        keep its fetches diverging forever)."""
        if offset >= len(self.records):
            end = len(self.records)
            if self.epochs and self.epochs[-1][1] >= end:
                self.epochs = [entry for entry in self.epochs if entry[1] < end]
            return
        offset = max(offset, 0)
        del self.records[offset:]
        self.epochs = [entry for entry in self.epochs if entry[1] < offset]
        self.hw = min(self.hw, offset)
        self.flushed = min(self.flushed, offset)
        self._snapshot = None

    def flush(self) -> None:
        self.flushed = len(self.records)

    def lose_unflushed(self) -> None:
        """A crash of the machine: what was not flushed is gone (the HW checkpoint is clamped)."""
        flushed = self.flushed
        if flushed >= len(self.records):
            return
        del self.records[flushed:]
        self.epochs = [entry for entry in self.epochs if entry[1] < flushed]
        self.hw = min(self.hw, flushed)
        self._snapshot = None
