"""What a leader knows about one follower (leader.md §1 `ReplicaState`, §4).

Updated on every accepted follower Fetch by `LeaderRules.updated_replica_state` and reset on a
leadership change by `LeaderRules.reset_replica_state`.
"""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN_OFFSET = -1


@dataclass(frozen=True, slots=True)
class ReplicaState:
    log_end_offset: int = UNKNOWN_OFFSET
    """The fetch offset of the follower's last accepted Fetch; -1 until it fetched in this leadership."""
    log_start_offset: int = UNKNOWN_OFFSET
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_time_ms: int = 0
    last_caught_up_time_ms: int = 0
    broker_epoch: int | None = None
    """The broker epoch of the follower's last Fetch (KIP-903); None until it fetched."""
