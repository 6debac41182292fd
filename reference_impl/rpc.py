"""The cluster's RPC payloads that the controller model does not already define (leader.md §4,
§13: Fetch; metadata propagation), and the message envelope every RPC travels in.

AlterPartition, heartbeat and registration payloads are the controller's own request/response
values (`isrcheck.reference_impl.messages`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .errors import Error
from .replica_log import Record

CONTROLLER_NODE = "controller"
ZOMBIE_NODE = "zombie"
"""A deposed controller that still believes it is active (bugs.md B21)."""

Node = int | str
"""A broker id, or CONTROLLER_NODE / ZOMBIE_NODE."""

FETCH = "Fetch"
FETCH_RESPONSE = "FetchResponse"
ALTER_PARTITION = "AlterPartition"
ALTER_PARTITION_RESPONSE = "AlterPartitionResponse"
HEARTBEAT = "Heartbeat"
HEARTBEAT_RESPONSE = "HeartbeatResponse"
REGISTRATION = "BrokerRegistration"
REGISTRATION_RESPONSE = "BrokerRegistrationResponse"
METADATA = "Metadata"

KINDS = (
    FETCH, FETCH_RESPONSE, ALTER_PARTITION, ALTER_PARTITION_RESPONSE, HEARTBEAT, HEARTBEAT_RESPONSE,
    REGISTRATION, REGISTRATION_RESPONSE, METADATA,
)
REQUEST_KINDS = frozenset({FETCH, ALTER_PARTITION, HEARTBEAT, REGISTRATION})
RESPONSE_KINDS = frozenset({FETCH_RESPONSE, ALTER_PARTITION_RESPONSE, HEARTBEAT_RESPONSE, REGISTRATION_RESPONSE})


@dataclass(frozen=True, slots=True)
class FetchPartition:
    """One partition of a follower Fetch (§13): offset, `LastFetchedEpoch` (v12+) and
    `CurrentLeaderEpoch` (v9+, KIP-320)."""

    topic: str
    partition: int
    fetch_offset: int
    last_fetched_epoch: int
    current_leader_epoch: int


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """`ReplicaState{ReplicaId, ReplicaEpoch}` (v15, KIP-903); epoch -1 for older versions."""

    replica_id: int
    broker_epoch: int
    partitions: tuple[FetchPartition, ...]


@dataclass(frozen=True, slots=True)
class FetchPartitionResponse:
    topic: str
    partition: int
    error: Error
    high_watermark: int = 0
    log_end_offset: int = 0
    records: tuple[Record, ...] = ()
    diverging_epoch: tuple[int, int] | None = None
    """`DivergingEpoch{epoch, endOffset}` (KAFKA-10554); no records come with it."""
    fetch_offset: int = 0
    """Echo of the request's offset, so a late or duplicated response is recognised as stale."""
    leader_epoch: int = -1
    """Echo of the request's CurrentLeaderEpoch."""


@dataclass(frozen=True, slots=True)
class FetchResponse:
    partitions: tuple[FetchPartitionResponse, ...]


@dataclass(frozen=True, slots=True)
class MetadataNotice:
    """The controller tells a broker its metadata log grew; on delivery the broker applies the
    committed log up to its end (a KRaft metadata fetch answered with what is committed then)."""


class Message(NamedTuple):
    """One RPC in flight. `correlation` is the request's id on a response; `src_serial` and
    `dst_serial` name broker incarnations (0 = the controller / any), so a response to an
    incarnation that has since crashed is not delivered to its successor.

    A NamedTuple rather than a frozen dataclass (the envelope, not a protocol value: the payloads
    stay frozen dataclasses): a campaign builds one per scheduler event or so, and a frozen
    dataclass's per-field `object.__setattr__` made building it dearer than the tuple
    (docs/performance.md)."""

    id: int
    kind: str
    src: Node
    dst: Node
    payload: object
    correlation: int = 0
    src_serial: int = 0
    dst_serial: int = 0

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "from": self.src, "to": self.dst, "correlation": self.correlation}
