"""The follower side (leader.md §13, §7 follower HW): what a follower sends and how it treats
what comes back. `FollowerRules` is stateless like `LeaderRules`; the per-leader fetch session
state is `FetchSession`, owned by the broker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .release import MetadataVersion
from .replica_log import UNDEFINED_EPOCH, UNDEFINED_OFFSET, ReplicaLog

if TYPE_CHECKING:
    from .broker import Broker
    from .partition import Partition

FETCH_V15_MV = MetadataVersion(3, 5, 1)
"""§13: Fetch v15 (ReplicaState with the broker epoch, KIP-903) needs MV ≥ 3.5-IV1."""


@dataclass(slots=True)
class FetchSession:
    """One follower broker's fetcher for one leader: at most one Fetch outstanding."""

    leader: int
    inflight: int | None = None
    """Id of the outstanding Fetch message; responses to any other id are stale."""
    generation: int = 0
    """Bumped whenever a fetch is sent; a `fetch` timer of an older generation is void."""


class FollowerRules:
    def fetch_broker_epoch(self, broker: Broker) -> int:
        """§13: Fetch v15+ carries the follower's current broker epoch; older versions -1 (D14)."""
        enabled = broker.config.fetch_broker_epochs
        if enabled is None:
            enabled = broker.metadata_version >= FETCH_V15_MV
        return broker.epoch if enabled else -1

    def should_fetch(self, partition: Partition) -> bool:
        """§13: not after FENCED_LEADER_EPOCH (until new metadata), and during controlled shutdown
        only for partitions whose ISR still holds this broker."""
        if partition.fetch_failed or partition.leader < 0 or partition.leader == partition.broker_id:
            return False
        if partition.broker.shutting_down:
            registration = partition.cache.partitions.get(partition.tp)
            return registration is not None and partition.broker_id in registration.isr
        return True

    def truncation_offset(self, log: ReplicaLog, diverging: tuple[int, int]) -> int:
        """§13 / KIP-279 `getOffsetTruncationState` for a DivergingEpoch(epoch, end offset): an
        undefined end offset keeps the fetch offset; a follower without the leader's epoch goes to
        the end of its own largest epoch below it (and asks again); else the smaller end offset."""
        leader_epoch, leader_end = diverging
        if leader_end == UNDEFINED_OFFSET:
            return log.leo
        if leader_epoch == UNDEFINED_EPOCH:
            return min(leader_end, log.leo)
        follower_epoch, follower_end = log.end_offset_for_epoch(leader_epoch)
        if follower_end == UNDEFINED_OFFSET:
            return min(leader_end, log.leo)
        if follower_epoch != leader_epoch:
            return min(follower_end, log.leo)
        return min(leader_end, follower_end)

    def hw_before_truncation(self) -> bool:
        """§7 / KAFKA-14704: a response carrying a diverging epoch sets no HW (B27 does)."""
        return False

    def follower_high_watermark(self, leader_high_watermark: int, log: ReplicaLog) -> int:
        """§7: HW := the leader's, clamped to [log start, own LEO] — it may go down (D13)."""
        return max(0, min(leader_high_watermark, log.leo))

    def next_fetch_delay_ms(self, broker: Broker, got_records: bool, had_error: bool) -> int:
        """Right away after data; after the long-poll wait when idle; after the back-off on errors."""
        if got_records:
            return 0
        if had_error:
            return broker.config.replica_fetch_backoff_ms
        return broker.config.replica_fetch_wait_max_ms
