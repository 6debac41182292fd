"""Targets for the known-divergence tests, loaded through the `module:Class` adapter path: one
that answers CreatePartitions as Kafka does (KD1, docs/known-divergences.md) and one that refuses
it for another reason with the same error code."""

from __future__ import annotations

from collections.abc import Sequence

from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.errors import Error

FIBONACCI = -7046029254386353131
"""BaseHashTable.findSlot's multiplier (Kafka 3.3.2-4.1.1)."""


def slot(key: int, slots: int) -> int:
    """BaseHashTable.findSlot for an Integer key: the top log2(slots) bits of key * FIBONACCI."""
    return ((key * FIBONACCI) % 2**64) >> (65 - slots.bit_length())


def first_value(partitions: int) -> int:
    """The partition `topicInfo.parts.values().iterator().next()` yields for keys 0..n-1 put in
    order (no replacement grew the table): the table doubles when (size + 1) * 0.75 > slots, and
    the iterator walks slot 0's chain from its end (SnapshottableHashTable.CurrentIterator.next)."""
    slots = 2
    for size in range(partitions):
        if (size + 1) * 0.75 > slots:
            slots *= 2
    return max(key for key in range(partitions) if slot(key, slots) == 0)


class FirstValueController(Controller):
    """The reference, except that CreatePartitions checks against the factor of Kafka's first value."""

    def create_partitions(self, topic: str, count: int, assignment: Sequence[Sequence[int]]) -> Error:
        existing = sum(1 for (t, _) in self.partitions if t == topic)
        if topic not in self.topic_ids or count <= existing or len(assignment) != count - existing:
            return super().create_partitions(topic, count, assignment)
        factor = len(self.partitions[(topic, first_value(existing))].replicas)
        error = self.validate_assignment(assignment, factor)
        if error is not Error.NONE:
            return error
        records = self.new_partition_records(topic, existing, assignment)
        if isinstance(records, Error):
            return records
        self.append(records)
        return Error.NONE


class FirstValueTarget(ReferenceTarget):
    def __init__(self) -> None:
        super().__init__(FirstValueController)


class RefusesGrowthController(Controller):
    """Refuses every CreatePartitions the reference would accept, with INVALID_REPLICA_ASSIGNMENT:
    the same code as KD1 from a cause that has nothing to do with replication factors."""

    def create_partitions(self, topic: str, count: int, assignment: Sequence[Sequence[int]]) -> Error:
        existing = sum(1 for (t, _) in self.partitions if t == topic)
        if topic in self.topic_ids and count > existing and len(assignment) == count - existing:
            return Error.INVALID_REPLICA_ASSIGNMENT
        return super().create_partitions(topic, count, assignment)


class RefusesGrowthTarget(ReferenceTarget):
    def __init__(self) -> None:
        super().__init__(RefusesGrowthController)
