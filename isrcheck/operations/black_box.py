"""What a black-box cluster target records for its checker: acknowledged writes and the partition
views clients can see (plain values, JSON-able). The checks are in
`isrcheck.conformance.properties.black_box_cluster`."""

from __future__ import annotations

from dataclasses import dataclass

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Acked:
    topic: str
    partition: int
    offset: int
    value: bytes


@dataclass(frozen=True)
class PartitionView:
    leader: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
