"""The one observation shape the cluster-level properties read (bugs.md property table).

Everything is a plain value: what the controller holds, what each broker process and each replica
holds (log as `(epoch, record id)` pairs), and what a test harness knows from outside — records
acknowledged to acks=all producers, data-loss faults it injected, controlled shutdowns the
controller accepted, ISR admissions with the ground truth about the admitted incarnation. A
black-box target can produce the same shape from its own client and fault injector; fields it
cannot know stay empty and the checks that need them pass vacuously.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

Record = tuple[int, int]
"""(leader epoch, record id): one log entry, as every replica's log holds it."""

TopicPartition = tuple[str, int]

ALIVE_STATUSES = frozenset({"running", "shutting_down"})


@dataclass(frozen=True, slots=True)
class PartitionView:
    """The controller's registration of one partition."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    elr: tuple[int, ...] = ()
    leader_recovery_state: str = "RECOVERED"
    min_isr: int = 1
    """min(min.insync.replicas of the topic, replication factor) (leader.md §7 step 1, §8)."""


@dataclass(frozen=True, slots=True)
class RegistrationView:
    """The controller's registration of one broker."""

    broker: int
    epoch: int
    fenced: bool
    in_controlled_shutdown: bool


@dataclass(frozen=True, slots=True)
class BrokerView:
    """One broker process (its current incarnation) as it sees itself."""

    broker: int
    status: str
    """running | shutting_down | stopped | crashed."""
    incarnation: str
    broker_epoch: int
    metadata_offset: int
    alter_partition_requests: int = 0
    """AlterPartition requests in flight from this broker (§12: at most one)."""
    alter_partition_items: tuple[tuple[TopicPartition, int, bool], ...] = ()
    """(partition, proposal id, in flight) for every queued or in-flight proposal."""
    replica_lag_time_max_ms: int = 0
    """The broker's replica.lag.time.max.ms (0: not reported)."""

    @property
    def alive(self) -> bool:
        return self.status in ALIVE_STATUSES


@dataclass(frozen=True, slots=True)
class FollowerProgress:
    """A follower whose last accepted Fetch is behind its leader's log end offset, as the harness
    computes it from the fetches and appends themselves (not from the leader's rules), by
    leader.md §4's definitions."""

    broker: int
    fetch_offset: int
    """The offset of the follower's last accepted Fetch in this leadership (-1: none yet)."""
    caught_up_ms: int
    """KAFKA-4485's lastCaughtUpTime (Kafka `Replica.updateFetchStateOrThrow`)."""
    behind_since_ms: int
    """Since when the fetch offset has differed from the leader's log end offset."""


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One broker's replica of one partition. A stopped or crashed broker's replica is its disk
    (role "offline")."""

    broker: int
    topic: str
    partition: int
    role: str
    """leader | follower | none | offline."""
    leader: int
    leader_epoch: int
    partition_epoch: int
    log: tuple[Record, ...]
    hw: int
    isr: tuple[int, ...] = ()
    maximal_isr: tuple[int, ...] = ()
    pending: str = "none"
    """none | expand | shrink (the leader's ISR state, leader.md §2)."""
    proposed_isr: tuple[int, ...] = ()
    epoch_start_offset: int = -1
    state_since_ms: int = -1
    """When the leader's ISR state (pending, ISR) last changed (-1: not reported)."""
    behind: tuple[FollowerProgress, ...] = ()
    """A leader's followers whose fetch offset differs from its log end offset (the others are
    caught up whatever the time, KAFKA-7152). Empty for a system that does not report them."""

    @property
    def leo(self) -> int:
        return len(self.log)

    @property
    def tp(self) -> TopicPartition:
        return self.topic, self.partition


@dataclass(frozen=True, slots=True)
class AckedRecord:
    """A record acknowledged to an acks=all producer."""

    topic: str
    partition: int
    offset: int
    record: int
    request: int


PROPOSAL_PENDING, PROPOSAL_REPLACED_AT_EQUAL_EPOCH, PROPOSAL_OTHER = "pending", "replaced-at-equal-epoch", "other"


@dataclass(frozen=True, slots=True)
class IsrAdmission:
    """The controller added `broker` to the ISR through an AlterPartition from `leader`. Ground
    truth at that moment: the broker epoch the controller had registered, the epoch of the
    running process (-1 if down), and whether that process's log held the leader's log up to
    the leader's HW."""

    step: int
    topic: str
    partition: int
    broker: int
    leader: int
    registered_epoch: int
    process_epoch: int
    caught_up: bool | None
    """None when the leader incarnation that sent the request is gone (nothing to compare with)."""
    proposal: str | None = None
    """What the sending leader held of this proposal when the controller accepted it:
    PROPOSAL_PENDING (its pending ISR change), PROPOSAL_REPLACED_AT_EQUAL_EPOCH (nothing pending,
    committed at the request's partition epoch, which was the controller's: metadata of equal
    partition epoch replaced it, leader.md §10, docs/upstream/equal-epoch-isr-expansion.md) or
    PROPOSAL_OTHER; None when the sender is gone or the ground truth does not say."""


@dataclass(frozen=True, slots=True)
class ProduceDecision:
    """A leader decided whether to append a produce request (leader.md §8, Kafka
    `Partition.appendRecordsToLeader`): ground truth read by the harness at that moment — the
    size of the leader's committed ISR (the one the check reads, not the maximal ISR of a pending
    expansion) and the min ISR in effect (min(min.insync.replicas, replication factor))."""

    step: int
    topic: str
    partition: int
    leader: int
    acks: int
    isr_size: int
    min_isr: int
    outcome: str
    """APPENDED | NOT_ENOUGH_REPLICAS."""


@dataclass(frozen=True, slots=True)
class DataLoss:
    step: int
    broker: int
    kind: str
    """unflushed | disk."""


@dataclass(frozen=True)
class ClusterObservation:
    step: int
    now_ms: int
    partitions: Mapping[TopicPartition, PartitionView]
    registrations: Mapping[int, RegistrationView]
    brokers: Mapping[int, BrokerView]
    replicas: Mapping[tuple[int, str, int], ReplicaView]
    acked: tuple[AckedRecord, ...] = ()
    admissions: tuple[IsrAdmission, ...] = ()
    data_loss: tuple[DataLoss, ...] = ()
    shutting_down: frozenset[int] = frozenset()
    """Brokers whose controlled shutdown the controller has accepted (current incarnation)."""
    epoch_leaders: Mapping[tuple[str, int, int], int] = field(default_factory=dict)
    """(topic, partition, leader epoch) → the leader the controller named with that epoch."""
    unclean: frozenset[TopicPartition] = frozenset()
    """Partitions that had an unclean election (leader recovery state RECOVERING) that someone
    allowed: by unclean.leader.election.enable, an unclean ElectLeaders request, or KIP-966's last
    known leader returning (`Cluster.unclean_allowed`). The properties
    that acknowledged records survive exempt them; an election outside the ISR nobody allowed is
    judged like any other."""
    pending_produces: int = 0
    messages_in_flight: int = 0
    controller_log_end: int = 0
    leader_branches: frozenset[str] = frozenset()
    """The leader-side decision branches the run has taken so far (leader.md §4–§13; names in
    contract/operations/leader_branch.py). Empty for a system that does not report them."""
    alter_partition_outcomes: frozenset[str] = frozenset()
    """The error codes the controller has answered the brokers' AlterPartition requests with so
    far (controller.md §2's validation branches). Empty for a system that does not report them."""
    epoch_isrs: Mapping[tuple[str, int, int], tuple[int, ...]] = field(default_factory=dict)
    """(topic, partition, partition epoch) → the ISR the controller committed with that epoch: a
    leader's committed ISR (leader.md §2, "the ISR as last committed by the controller") is this
    one at its partition epoch, whatever answers arrive late."""
    produce_decisions: tuple[ProduceDecision, ...] = ()
    """Every leader's produce admission decision so far, in order (empty for a system that does
    not report them, and in records written before they were kept)."""

    def replica(self, broker: int, tp: TopicPartition) -> ReplicaView | None:
        return self.replicas.get((broker, tp[0], tp[1]))

    def alive(self, broker: int) -> bool:
        view = self.brokers.get(broker)
        return view is not None and view.alive

    def serving(self, broker: int) -> bool:
        """The broker's running process is the incarnation the controller has registered."""
        view = self.brokers.get(broker)
        registration = self.registrations.get(broker)
        return (
            view is not None and view.alive and registration is not None and registration.epoch == view.broker_epoch
        )

    def established_leader(self, tp: TopicPartition) -> ReplicaView | None:
        """The controller's leader, if its process is alive and acts as leader in the controller's epoch."""
        partition = self.partitions.get(tp)
        if partition is None or partition.leader < 0 or not self.alive(partition.leader):
            return None
        view = self.replica(partition.leader, tp)
        if view is None or view.role != "leader" or view.leader_epoch != partition.leader_epoch:
            return None
        return view

    def to_json(self) -> dict[str, object]:
        return {
            "step": self.step,
            "now_ms": self.now_ms,
            "partitions": {f"{t}-{p}": _fields(v) for (t, p), v in sorted(self.partitions.items())},
            "registrations": {str(b): _fields(v) for b, v in sorted(self.registrations.items())},
            "brokers": {str(b): _fields(v) for b, v in sorted(self.brokers.items())},
            "replicas": {f"{b}:{t}-{p}": _fields(v) for (b, t, p), v in sorted(self.replicas.items())},
            "acked": [_fields(a) for a in self.acked],
            "admissions": [_fields(a) for a in self.admissions],
            "data_loss": [_fields(d) for d in self.data_loss],
            "produce_decisions": [_fields(d) for d in self.produce_decisions],
            "shutting_down": sorted(self.shutting_down),
            "unclean": sorted(f"{t}-{p}" for t, p in self.unclean),
            "pending_produces": self.pending_produces,
            "messages_in_flight": self.messages_in_flight,
        }


def _fields(value: object) -> dict[str, object]:
    slots: tuple[str, ...] = getattr(value, "__slots__", ())
    return {name: _json(getattr(value, name)) for name in slots}


def _json(value: object) -> object:
    if isinstance(value, tuple):
        return [_json(item) for item in value]
    if isinstance(value, FollowerProgress):
        return _fields(value)
    return value
