"""The leader-side ISR state machine's values (leader.md §2, KIP-497 §3).

`CommittedPartitionState` is the ISR the controller last confirmed; `PendingExpandIsr` and
`PendingShrinkIsr` carry the exact proposal sent (`sent`) and the state to revert to
(`last_committed`). `maximal_isr` is the conservative ISR used for the high watermark and
acks=all: an expansion counts at once, a shrink only once committed (§3).
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import IsrMember


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """`sentLeaderAndIsr` (§2): the proposal exactly as put into the AlterPartition request."""

    leader: int
    leader_epoch: int
    isr: tuple[IsrMember, ...]
    partition_epoch: int
    leader_recovery_state: int = 0

    @property
    def isr_ids(self) -> tuple[int, ...]:
        return tuple(member.broker for member in self.isr)


@dataclass(frozen=True, slots=True)
class CommittedPartitionState:
    isr: tuple[int, ...]
    leader_recovery_state: int = 0

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        return self.isr

    @property
    def is_inflight(self) -> bool:
        return False

    @property
    def kind(self) -> str:
        return "none"


@dataclass(frozen=True, slots=True)
class PendingExpandIsr:
    new_in_sync_replica: int
    sent: LeaderAndIsr
    last_committed: CommittedPartitionState

    @property
    def isr(self) -> tuple[int, ...]:
        return self.last_committed.isr

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """§3: the new member counts immediately."""
        return (*self.last_committed.isr, self.new_in_sync_replica)

    @property
    def is_inflight(self) -> bool:
        return True

    @property
    def kind(self) -> str:
        return "expand"

    @property
    def leader_recovery_state(self) -> int:
        return 0


@dataclass(frozen=True, slots=True)
class PendingShrinkIsr:
    out_of_sync_replicas: tuple[int, ...]
    sent: LeaderAndIsr
    last_committed: CommittedPartitionState

    @property
    def isr(self) -> tuple[int, ...]:
        return self.last_committed.isr

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """§3: the removed members still count until the controller confirms."""
        return self.last_committed.isr

    @property
    def is_inflight(self) -> bool:
        return True

    @property
    def kind(self) -> str:
        return "shrink"

    @property
    def leader_recovery_state(self) -> int:
        return 0


PendingState = PendingExpandIsr | PendingShrinkIsr
IsrState = CommittedPartitionState | PendingExpandIsr | PendingShrinkIsr
