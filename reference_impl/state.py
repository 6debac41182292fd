"""Controller state values (controller.md §1) and the metadata records that change them.

Every change is a record computed as a value and applied by `Controller.replay` — the shape of
Kafka's controller, where handlers build records and replay them (§1.1 epoch rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

NO_LEADER = -1
NO_LEADER_CHANGE = -2
"""§1.1: the record sentinel for "leader unchanged"."""


class LeaderRecoveryState(IntEnum):
    RECOVERED = 0
    RECOVERING = 1


@dataclass(frozen=True, slots=True)
class PartitionState:
    """`PartitionRegistration` (§1.1). Lists are tuples; `isr` order is significant (§2.6)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED
    removing: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """A `PartitionChangeRecord`: None means "unchanged"; `leader` uses NO_LEADER_CHANGE (§1.1)."""

    topic: str
    partition: int
    leader: int = NO_LEADER_CHANGE
    isr: tuple[int, ...] | None = None
    replicas: tuple[int, ...] | None = None
    removing: tuple[int, ...] | None = None
    adding: tuple[int, ...] | None = None
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    leader_recovery_state: LeaderRecoveryState | None = None


def merge(state: PartitionState, record: PartitionChangeRecord) -> PartitionState:
    """`PartitionRegistration.merge` (§1.1): partition epoch +1 always; leader epoch +1 iff the
    record names a leader — even the same one, even -1."""
    leader_named = record.leader != NO_LEADER_CHANGE
    return PartitionState(
        state.replicas if record.replicas is None else record.replicas,
        state.isr if record.isr is None else record.isr,
        record.leader if leader_named else state.leader,
        state.leader_epoch + 1 if leader_named else state.leader_epoch,
        state.partition_epoch + 1,
        state.leader_recovery_state if record.leader_recovery_state is None else record.leader_recovery_state,
        state.removing if record.removing is None else record.removing,
        state.adding if record.adding is None else record.adding,
        state.elr if record.elr is None else record.elr,
        state.last_known_elr if record.last_known_elr is None else record.last_known_elr,
    )


@dataclass(frozen=True, slots=True)
class TopicRecord:
    name: str
    topic_id: str
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord:
    """DeleteTopics (`ReplicationControlManager.deleteTopic`, Kafka 3.9): on replay the topic, its
    partitions and its configs are gone (`replay(RemoveTopicRecord)`). Kafka's record carries the
    id only; the name is kept here as every other reference record keys topics by name."""

    name: str
    topic_id: str


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    topic: str
    partition: int
    state: PartitionState


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """Persisted broker state (§1.2)."""

    broker: int
    epoch: int
    incarnation: str
    fenced: bool = True
    in_controlled_shutdown: bool = False

    @property
    def active(self) -> bool:
        """`isActive` (§1.2): registered, unfenced and not in controlled shutdown."""
        return not self.fenced and not self.in_controlled_shutdown


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    registration: BrokerRegistration


@dataclass(frozen=True, slots=True)
class BrokerRegistrationChangeRecord:
    """FENCE / UNFENCE / IN_CONTROLLED_SHUTDOWN (§4.4); None = field unchanged."""

    broker: int
    epoch: int
    fenced: bool | None = None
    in_controlled_shutdown: bool | None = None


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRecord:
    broker: int
    epoch: int


MetadataRecord = (
    TopicRecord
    | RemoveTopicRecord
    | PartitionRecord
    | PartitionChangeRecord
    | RegisterBrokerRecord
    | BrokerRegistrationChangeRecord
    | UnregisterBrokerRecord
)


@dataclass(slots=True)
class HeartbeatState:
    """Soft state of the active controller (§1.2); lost on fail-over (§4.5)."""

    fenced: bool
    metadata_offset: int = -1
    controlled_shutdown_offset: int = -1

    @property
    def shutting_down(self) -> bool:
        return self.controlled_shutdown_offset >= 0
