"""Which partition of a topic Kafka's controller sees first when it iterates the topic's partitions.

`ReplicationControlManager.createPartitions` takes the replication factor a manual assignment must
match from `topicInfo.parts.values().iterator().next()` — the first partition in the iteration
order of a `TimelineHashMap<Integer, PartitionRegistration>`, not partition 0 (3.3.2 to 4.1.1 alike).
That order is `BaseHashTable`'s: slots in index order, a slot's entries last-added first
(`SnapshottableHashTable.CurrentIterator.next` takes `ready.remove(ready.size() - 1)`), the slot of
a key its hash times Knuth's multiplicative constant, top bits (`BaseHashTable.findSlot`). The
table starts at 2 slots (`TopicControlInfo` builds the map with an expected size of 0) and doubles
at any put — a replacement too — when (size + 1) × 0.75 would pass its length
(`baseAddOrReplace`; `rehash` re-inserts slot by slot in array order). Every PartitionRecord and
PartitionChangeRecord replay is such a put (`ReplicationControlManager.replay`), so the order
depends on the topic's history, not only its partition count: five partitions iterate 2 first,
and 0 first once any of them has changed.

It matters while a partition is being reassigned: its replicas are the target plus the replicas
being removed, so when that partition comes first a new partition of the old size is refused
(INVALID_REPLICA_ASSIGNMENT: "not consistent with previous partitions, which have 4 replica(s)").
Found by kafka-jvm against 3.3.2, 3.9.0 and 4.1.1's own classes.
"""

from __future__ import annotations

from dataclasses import dataclass

_FIBONACCI = 0x9E3779B97F4A7C15  # -7046029254386353131L as an unsigned 64-bit value
_MASK = (1 << 64) - 1


def _slot(key: int, capacity: int) -> int:
    """`BaseHashTable.findSlot` for a non-negative Integer key (its hashCode is itself)."""
    shift = 65 - capacity.bit_length()  # 32 - numberOfLeadingZeros(capacity) is its bit length
    return ((key * _FIBONACCI) & _MASK) >> shift


@dataclass(frozen=True)
class PartitionTable:
    """The slots of one topic's `TimelineHashMap` of partitions (keys only)."""

    slots: tuple[tuple[int, ...], ...] = ((), ())
    size: int = 0

    def put(self, key: int) -> PartitionTable:
        """`baseAddOrReplace(key)`: grow first if due, then add the key or leave it in its place."""
        slots = self.slots
        if (self.size + 1) * 0.75 > len(slots):
            grown: list[list[int]] = [[] for _ in range(2 * len(slots))]
            for slot in slots:
                for old in slot:
                    grown[_slot(old, len(grown))].append(old)
            slots = tuple(tuple(slot) for slot in grown)
        index = _slot(key, len(slots))
        if key in slots[index]:
            return PartitionTable(slots, self.size)
        placed = (*slots[:index], (*slots[index], key), *slots[index + 1:])
        return PartitionTable(placed, self.size + 1)

    def order(self) -> tuple[int, ...]:
        """The keys in the order `values().iterator()` returns them."""
        return tuple(key for slot in self.slots for key in reversed(slot))

    def first(self) -> int:
        return self.order()[0]


def iteration_order(count: int) -> tuple[int, ...]:
    """Partitions 0..count-1, each put once in index order (a topic with no partition changes)."""
    table = PartitionTable()
    for key in range(count):
        table = table.put(key)
    return table.order()
