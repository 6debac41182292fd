"""Harness ground truth: how long each follower of a leader has been out of sync, computed from
the fetches the leader accepted and its appends, independently of `LeaderRules` (whose
`updated_replica_state` / `is_caught_up` a mutant may change). It is what P-SHRINK reads.

The definitions are Kafka's, restated (Kafka 3.9.0 `Replica.updateFetchStateOrThrow`,
`ReplicaState.isCaughtUp`, `Replica.resetReplicaState`; leader.md §4): a follower last caught up
at the latest accepted Fetch whose offset reached the leader's log end offset at that read, or at
the Fetch before it if this one reached the log end offset the leader had then (KAFKA-4485); a
new leader epoch gives ISR members a caught-up time of "now" and others none; a follower whose
fetch offset equals the leader's log end offset is caught up whatever the time (KAFKA-7152).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

EQUAL = -1
"""`behind_since_ms` while the follower's fetch offset equals the leader's log end offset."""


@dataclass(frozen=True, slots=True)
class FollowerLag:
    fetch_offset: int
    """The offset of the follower's last accepted Fetch (-1 before one in this leadership)."""
    caught_up_ms: int
    """KAFKA-4485's lastCaughtUpTime."""
    behind_since_ms: int
    """Since when the fetch offset differs from the leader's log end offset (EQUAL while equal)."""
    last_fetch_ms: int = 0
    last_fetch_leader_end: int = -1


def at_leader_epoch(kept: FollowerLag | None, in_isr: bool, now_ms: int, leader_end: int) -> FollowerLag:
    """`resetReplicaState` on a new leader epoch: a broker that led before keeps the follower's
    offset, a new leader forgets it; ISR members caught up now, the others never."""
    offset = kept.fetch_offset if kept is not None else -1
    caught_up = now_ms if in_isr else 0
    if kept is None:
        return FollowerLag(offset, caught_up, EQUAL if offset == leader_end else now_ms)
    return FollowerLag(offset, caught_up, EQUAL if offset == leader_end else now_ms, caught_up, leader_end)


def after_fetch(old: FollowerLag, fetch_offset: int, now_ms: int, leader_end: int) -> FollowerLag:
    """`updateFetchStateOrThrow`'s lastCaughtUpTime (KAFKA-4485), then whether the offsets differ."""
    caught_up = old.caught_up_ms
    if fetch_offset >= leader_end:
        caught_up = max(caught_up, now_ms)
    elif fetch_offset >= old.last_fetch_leader_end:
        caught_up = max(caught_up, old.last_fetch_ms)
    behind = EQUAL if fetch_offset == leader_end else (now_ms if old.behind_since_ms == EQUAL else old.behind_since_ms)
    return FollowerLag(fetch_offset, caught_up, behind, now_ms, max(leader_end, old.last_fetch_leader_end))


def after_append(old: FollowerLag, leader_end: int, now_ms: int) -> FollowerLag:
    """The leader's log end offset moved: a follower equal to it before is behind from now."""
    if old.behind_since_ms == EQUAL and old.fetch_offset != leader_end:
        return replace(old, behind_since_ms=now_ms)
    return old
