"""A ghost broker: what a fake broker is to a KRaft controller and what it sends (controller.md §9.2).

It registers with the cluster id, a random incarnation id per *incarnation label* (the same
label is the same process lifetime, so the same UUID), one random log directory kept across all
its re-registrations (a changed directory would make its replicas offline, §9.2), listeners the
controller never connects to, and feature ranges built from the controller's finalized
features. It heartbeats with a metadata offset that is either "caught up" (2^62, which every
offset condition accepts, §4.2/§4.6) or just below its latest RegisterBrokerRecord.

The controller's heartbeat soft state (§1.2: FENCED / UNFENCED / CONTROLLED_SHUTDOWN) is not in
the metadata log; the ghost mirrors it from the §4.2 transition table and the answers it gets,
because keeping a broker alive without changing its state depends on it (docs/wire.md).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from isrcheck.adapters.kafka_wire.metadata_versions import HIGHEST_LEVEL, METADATA_VERSION_FEATURE
from isrcheck.adapters.wire.apis import BROKER_HEARTBEAT, BROKER_REGISTRATION, nested_class
from isrcheck.adapters.wire.connection import KafkaConnection

CAUGHT_UP_OFFSET = 2**62
"""controller.md §9.2: a huge CurrentMetadataOffset makes every offset condition true."""
LISTENER_NAME = "PLAINTEXT"


class SoftState(enum.Enum):
    """`BrokerHeartbeatManager`'s view of a broker (§4.2), as mirrored by the ghost."""

    FENCED = "fenced"
    UNFENCED = "unfenced"
    CONTROLLED_SHUTDOWN = "controlled shutdown"


class Session(enum.Enum):
    """Whether the harness keeps the broker's session alive (§4.1, §4.3)."""

    NONE = "not registered"
    LIVE = "kept alive"
    ENDED = "ended"
    """By `fence_broker`: no more heartbeats; the controller may still hold a contact that expires."""


def next_soft_state(before: SoftState, want_shut_down: bool, is_fenced: bool) -> SoftState:
    """The state after a successful heartbeat (§4.2 table): fenced answers mean FENCED (incl.
    SHUTDOWN_NOW); controlled shutdown is only left by being fenced; an unfenced broker asking to
    shut down that is not fenced at once has entered CONTROLLED_SHUTDOWN."""
    if is_fenced:
        return SoftState.FENCED
    if before is SoftState.CONTROLLED_SHUTDOWN or (before is SoftState.UNFENCED and want_shut_down):
        return SoftState.CONTROLLED_SHUTDOWN
    return SoftState.UNFENCED


@dataclass(frozen=True)
class FinalizedFeatures:
    """Finalized feature levels read from the controller's ApiVersions (served from 3.7, §9.2)."""

    levels: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_api_versions(cls, response: Any) -> FinalizedFeatures:
        finalized = getattr(response, "finalized_features", ()) or ()
        return cls({str(f.name): int(f.max_version_level) for f in finalized})

    def declared(self) -> dict[str, tuple[int, int]]:
        """Ranges to register with: metadata.version exactly at the finalized level (or every
        known level when the controller does not say, 3.3/3.5), every other finalized feature
        [0, level] — 3.9+ counts an undeclared non-zero feature as unsupported (§4.1 check 6)."""
        ranges: dict[str, tuple[int, int]] = {}
        for name, level in self.levels.items():
            ranges[name] = (level, level) if name == METADATA_VERSION_FEATURE else (0, level)
        ranges.setdefault(METADATA_VERSION_FEATURE, (1, HIGHEST_LEVEL))
        return ranges


@dataclass
class GhostBroker:
    local_id: int
    broker_id: int
    log_dir: uuid.UUID = field(default_factory=uuid.uuid4)
    incarnations: dict[str, uuid.UUID] = field(default_factory=dict)
    epoch: int = -1
    soft: SoftState = SoftState.FENCED
    last_offset: int = -1
    """The metadata offset the controller last accepted from this broker (soft state, §1.2)."""
    session: Session = Session.NONE
    contact_open: bool = False
    """The controller holds a contact for (broker, epoch) that will expire unless refreshed (4.x, §4.3)."""
    last_contact: float = 0.0
    """time.monotonic() of the last contact the controller recorded for the current epoch."""
    fence_mark: int = -2
    """Offset of the latest FENCE of this broker when its session was ended: a later one is the expiry."""

    def incarnation(self, label: str) -> uuid.UUID:
        """Same label, same process lifetime, same UUID (scenario-format.md `incarnation`)."""
        return self.incarnations.setdefault(label, uuid.uuid4())

    def registration_request(
        self, connection: KafkaConnection, cluster_id: str, label: str, features: FinalizedFeatures,
        previous_broker_epoch: int = -1,
    ) -> Any:
        classes = connection.classes_for(BROKER_REGISTRATION)
        listener_cls = nested_class(classes.request, "Listener")
        feature_cls = nested_class(classes.request, "Feature")
        values: dict[str, Any] = {
            "broker_id": self.broker_id, "cluster_id": cluster_id, "incarnation_id": self.incarnation(label),
            "listeners": (listener_cls(name=LISTENER_NAME, host="localhost", port=10000 + self.broker_id % 50000,
                                       security_protocol=0),),
            "features": tuple(feature_cls(name=n, min_supported_version=lo, max_supported_version=hi)
                              for n, (lo, hi) in sorted(features.declared().items())),
            "rack": None,
        }
        if classes.api_version >= 2:
            values["log_dirs"] = (self.log_dir,)
        if classes.api_version >= 3:
            values["previous_broker_epoch"] = previous_broker_epoch
        return classes.request(**values)

    def heartbeat_request(
        self, connection: KafkaConnection, epoch: int, offset: int, *, want_fence: bool, want_shut_down: bool
    ) -> Any:
        return connection.classes_for(BROKER_HEARTBEAT).request(
            broker_id=self.broker_id, broker_epoch=epoch, current_metadata_offset=offset,
            want_fence=want_fence, want_shut_down=want_shut_down,
        )
