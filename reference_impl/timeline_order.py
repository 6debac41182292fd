"""Which partition of a topic Kafka's controller sees first when it iterates the topic's partitions.

`ReplicationControlManager.createPartitions` takes the replication factor a manual assignment must
match from `topicInfo.parts.values().iterator().next()` — the first partition in the iteration
order of a `TimelineHashMap<Integer, PartitionRegistration>`, not partition 0 (3.3.2 to 4.1.1 alike).
That order is `BaseHashTable`'s: slots in index order, a slot's entries last-added first
(`SnapshottableHashTable.CurrentIterator.next` takes `ready.remove(ready.size() - 1)`), the slot of
a key its hash times Knuth's multiplicative constant, top bits (`BaseHashTable.findSlot`), the
table doubling before an insert that would pass a 0.75 load (`baseAddOrReplace`, `rehash`, which
re-inserts slot by slot in array order), from 2 slots (`TopicControlInfo` builds the map with an
expected size of 0). A topic's partitions are only ever added, in index order, and never removed
one by one, so the order depends on the partition count alone.

It matters while a partition is being reassigned: its replicas are the target plus the replicas
being removed, so a topic of three 3-replica partitions whose partition 2 is moving to [4] has
replicas [4, 1, 2, 3] there, iteration yields 2 first, and a new 3-replica partition is refused
(INVALID_REPLICA_ASSIGNMENT: "not consistent with previous partitions, which have 4 replica(s)").
Found by kafka-jvm against 3.3.2, 3.9.0 and 4.1.1's own classes.
"""

from __future__ import annotations

from functools import cache

_FIBONACCI = 0x9E3779B97F4A7C15  # -7046029254386353131L as an unsigned 64-bit value
_MASK = (1 << 64) - 1


def _slot(key: int, capacity: int) -> int:
    """`BaseHashTable.findSlot` for a non-negative Integer key (its hashCode is itself)."""
    shift = 65 - capacity.bit_length()  # 32 - numberOfLeadingZeros(capacity) is its bit length
    return ((key * _FIBONACCI) & _MASK) >> shift


@cache
def iteration_order(count: int) -> tuple[int, ...]:
    """Partition indexes 0..count-1, inserted in order, in the order the controller iterates them."""
    slots: list[list[int]] = [[], []]
    for key in range(count):
        if (key + 1) * 0.75 > len(slots):
            grown: list[list[int]] = [[] for _ in range(2 * len(slots))]
            for slot in slots:
                for old in slot:
                    grown[_slot(old, len(grown))].append(old)
            slots = grown
        slots[_slot(key, len(slots))].append(key)
    return tuple(key for slot in slots for key in reversed(slot))


def first_partition(count: int) -> int:
    """The partition `iterator().next()` returns for a topic of `count` partitions (count ≥ 1)."""
    return iteration_order(count)[0]
