"""Requests and responses of the controller APIs as values (controller.md §2, §4, §5).

Field names follow Kafka's schemas; error fields hold `Error` members. A per-partition error
response carries only the index and the code: the other fields keep the schema defaults (§2.7).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import Error


@dataclass(frozen=True, slots=True)
class IsrMember:
    """One `NewIsrWithEpochs` entry; epoch -1 skips the KIP-903 check (§2.5)."""

    broker: int
    broker_epoch: int = -1


@dataclass(frozen=True, slots=True)
class AlterPartitionItem:
    partition: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[IsrMember, ...]
    leader_recovery_state: int = 0


@dataclass(frozen=True, slots=True)
class AlterPartitionTopic:
    """v0/v1 name the topic; v2+ carry its id (§2.3)."""

    partitions: tuple[AlterPartitionItem, ...]
    topic_name: str | None = None
    topic_id: str | None = None


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest:
    version: int
    broker_id: int
    broker_epoch: int
    topics: tuple[AlterPartitionTopic, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionPartitionResult:
    partition: int
    error: Error
    leader: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    partition_epoch: int = 0
    leader_recovery_state: int = 0


@dataclass(frozen=True, slots=True)
class AlterPartitionTopicResult:
    partitions: tuple[AlterPartitionPartitionResult, ...]
    topic_name: str | None = None
    topic_id: str | None = None


@dataclass(frozen=True, slots=True)
class AlterPartitionResponse:
    error: Error
    topics: tuple[AlterPartitionTopicResult, ...] = ()


@dataclass(frozen=True, slots=True)
class BrokerRegistrationRequest:
    broker: int
    incarnation: str
    previous_broker_epoch: int = -1
    version: int = 4


@dataclass(frozen=True, slots=True)
class BrokerRegistrationResponse:
    error: Error
    broker_epoch: int = -1


@dataclass(frozen=True, slots=True)
class HeartbeatRequest:
    broker: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool = False
    want_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class HeartbeatResponse:
    error: Error
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class ElectionResult:
    topic: str
    partition: int
    error: Error
