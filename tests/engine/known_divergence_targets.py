"""Targets for the known-divergence tests, loaded through the `module:Class` adapter path: one
that answers CreatePartitions from partition 0's replication factor where Kafka takes its
hash-table order's first partition (KD1, docs/known-divergences.md), and one that refuses it for
another reason with the same error code."""

from __future__ import annotations

from collections.abc import Sequence

from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.errors import Error


class PartitionZeroController(Controller):
    """The reference, except that CreatePartitions checks a manual assignment against partition 0's
    replication factor — what an implementation written from the protocol would do, where Kafka
    (and the reference, reference_impl/timeline_order.py) takes the first partition of its
    hash-table order: the difference KD1 accepts (docs/known-divergences.md)."""

    def replication_factor_of(self, topic: str) -> int:
        return len(self.partitions[(topic, 0)].replicas)


class PartitionZeroTarget(ReferenceTarget):
    def __init__(self) -> None:
        super().__init__(PartitionZeroController)


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
