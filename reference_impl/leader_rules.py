"""The partition leader's ISR rules (leader.md §2–§10), one method per rule.

`LeaderRules` is stateless: every method reads the `Partition` it is given (and the broker's
metadata cache through it) and returns a value — a verdict, a new `ReplicaState`, a proposal or
an outcome; `Partition` applies the value. A mutant is a subclass overriding one method, passed
to `Cluster(..., leader_rules=Mutant())`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING

from .errors import Error
from .isr_state import (
    CommittedPartitionState,
    IsrState,
    LeaderAndIsr,
    PendingExpandIsr,
    PendingShrinkIsr,
    PendingState,
)
from .messages import AlterPartitionPartitionResult, IsrMember
from .replica_log import ReplicaLog
from .replica_state import UNKNOWN_OFFSET, ReplicaState
from .rpc import FetchPartition
from .state import PartitionState

if TYPE_CHECKING:
    from .partition import Partition

HW_MIN_ISR_GATE_SINCE = (3, 7, 0)
"""§7.1: KAFKA-15583 (KIP-966), 3.7+."""


class ErrorOutcome(Enum):
    """§9 table: what a partition-level AlterPartition error makes the leader do."""

    REVERT = "revert to the last committed state"
    WAIT = "stay pending until new metadata"
    RETRY = "resubmit the same proposal"


@dataclass(frozen=True, slots=True)
class Commit:
    """§9.2: the state and partition epoch a successful response commits."""

    state: CommittedPartitionState
    partition_epoch: int


class LeaderRules:
    # ---------------------------------------------------------------- §4 follower Fetch

    def fetch_epoch_error(self, request_epoch: int, local_epoch: int) -> Error:
        """§4 / KIP-320: an older CurrentLeaderEpoch is fenced, a newer one is unknown (B10)."""
        if request_epoch < local_epoch:
            return Error.FENCED_LEADER_EPOCH
        if request_epoch > local_epoch:
            return Error.UNKNOWN_LEADER_EPOCH
        return Error.NONE

    def diverging_epoch(self, log: ReplicaLog, fetch: FetchPartition) -> tuple[int, int] | None:
        """§13 (KAFKA-10554, truncation on fetch): the leader's (epoch, end offset) for the
        follower's `LastFetchedEpoch` when the follower's log cannot be a prefix of the leader's."""
        if fetch.last_fetched_epoch < 0:
            return None
        epoch, end_offset = log.end_offset_for_epoch(fetch.last_fetched_epoch)
        if epoch < fetch.last_fetched_epoch or end_offset < fetch.fetch_offset:
            return epoch, end_offset
        return None

    def diverging_fetch_updates_state(self) -> bool:
        """§4 / KAFKA-13141: a fetch answered with a diverging epoch is not follower progress (B09)."""
        return False

    def stale_fetch_broker_epoch(self, fetch_epoch: int, cached_epoch: int | None) -> bool:
        """§4 step 1 (KIP-903, KAFKA-15221): a Fetch from an older incarnation than the one the
        metadata cache knows (unfenced) is rejected with NOT_LEADER_OR_FOLLOWER (B06)."""
        return fetch_epoch != -1 and cached_epoch is not None and cached_epoch > fetch_epoch

    def updated_replica_state(
        self, old: ReplicaState, fetch_offset: int, fetch_time_ms: int, leader_end_offset: int, broker_epoch: int
    ) -> ReplicaState:
        """§4 steps 2–3 (`updateFetchStateOrThrow`, KAFKA-4485's lastCaughtUpTime)."""
        caught_up = old.last_caught_up_time_ms
        if fetch_offset >= leader_end_offset:
            caught_up = max(caught_up, fetch_time_ms)
        elif fetch_offset >= old.last_fetch_leader_log_end_offset:
            caught_up = max(caught_up, old.last_fetch_time_ms)
        return ReplicaState(
            log_end_offset=fetch_offset,
            log_start_offset=0,
            last_fetch_leader_log_end_offset=max(leader_end_offset, old.last_fetch_leader_log_end_offset),
            last_fetch_time_ms=fetch_time_ms,
            last_caught_up_time_ms=caught_up,
            broker_epoch=broker_epoch,
        )

    def is_caught_up(self, state: ReplicaState, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        """§4 `isCaughtUp`: LEO equal to the leader's (KAFKA-7152, B26) or caught up within the lag window."""
        return state.log_end_offset == leader_end_offset or now_ms - state.last_caught_up_time_ms <= max_lag_ms

    def reset_replica_state(
        self, partition: Partition, replica_id: int, old: ReplicaState | None, isr: tuple[int, ...], was_leader: bool
    ) -> ReplicaState:
        """§4 `resetReplicaState` on a leader-epoch increase: a new leader forgets follower LEOs
        (D7); ISR members get a full lag window of grace, others none (D8)."""
        now = partition.now_ms
        in_isr = replica_id in isr
        if not was_leader or old is None:
            return ReplicaState(last_caught_up_time_ms=now if in_isr else 0)
        return replace(
            old,
            last_fetch_leader_log_end_offset=partition.epoch_start_offset,
            last_fetch_time_ms=now if in_isr else 0,
            last_caught_up_time_ms=now if in_isr else 0,
        )

    # ---------------------------------------------------------------- §5 expansion

    def can_propose(self, partition: Partition) -> bool:
        """§2 invariant: a new proposal is only ever created from CommittedPartitionState."""
        return isinstance(partition.state, CommittedPartitionState)

    def is_follower_in_sync(self, state: ReplicaState, high_watermark: int, epoch_start_offset: int) -> bool:
        """§5 condition 3: LEO ≥ HW and ≥ the leader-epoch start offset (KAFKA-7128, B07)."""
        return state.log_end_offset >= high_watermark and state.log_end_offset >= epoch_start_offset

    def is_replica_isr_eligible(self, partition: Partition, replica_id: int) -> bool:
        """§5 condition 4 (KIP-841, KIP-903): in the metadata cache, not fenced, not in controlled
        shutdown, and the epoch of its last Fetch is -1 or the cached one (B01, B03, D14)."""
        state = partition.remote.get(replica_id)
        registration = partition.cache.brokers.get(replica_id)
        if state is None or registration is None or registration.fenced or registration.in_controlled_shutdown:
            return False
        if state.broker_epoch is None:
            return False
        return state.broker_epoch == -1 or state.broker_epoch == registration.epoch

    def can_add_replica_to_isr(self, partition: Partition, replica_id: int) -> bool:
        """§5 conditions 1–4."""
        state = partition.remote.get(replica_id)
        if state is None or not self.can_propose(partition) or replica_id in partition.state.isr:
            return False
        return (
            self.is_follower_in_sync(state, partition.log.hw, partition.epoch_start_offset)
            and self.is_replica_isr_eligible(partition, replica_id)
        )

    def isr_with_broker_epochs(self, partition: Partition, isr: tuple[int, ...]) -> tuple[IsrMember, ...]:
        """§5 `addBrokerEpochToIsr`: the leader's own epoch; a follower's from its last Fetch, -1 if unknown."""
        members = []
        for broker in isr:
            if broker == partition.broker_id:
                members.append(IsrMember(broker, partition.own_broker_epoch))
                continue
            state = partition.remote.get(broker)
            epoch = state.broker_epoch if state is not None and state.broker_epoch is not None else -1
            members.append(IsrMember(broker, epoch))
        return tuple(members)

    def proposal(self, partition: Partition, isr: tuple[int, ...]) -> LeaderAndIsr:
        return LeaderAndIsr(
            partition.broker_id, partition.leader_epoch, self.isr_with_broker_epochs(partition, isr),
            partition.partition_epoch, 0,
        )

    def prepare_isr_expand(self, partition: Partition, replica_id: int) -> PendingExpandIsr:
        """§5 `prepareIsrExpand`: committed ISR + the follower."""
        committed = last_committed(partition.state)
        return PendingExpandIsr(replica_id, self.proposal(partition, (*committed.isr, replica_id)), committed)

    # ---------------------------------------------------------------- §6 shrink

    def out_of_sync_replicas(self, partition: Partition, now_ms: int) -> tuple[int, ...]:
        """§6 `getOutOfSyncReplicas`: nothing while a request is in flight (D9); otherwise every
        committed-ISR member but the leader that has no follower state or is not caught up."""
        if partition.state.is_inflight:
            return ()
        leader_end_offset = partition.log.leo
        max_lag = partition.config.replica_lag_time_max_ms
        out = []
        for replica_id in partition.state.isr:
            if replica_id == partition.broker_id:
                continue
            state = partition.remote.get(replica_id)
            if state is None or not self.is_caught_up(state, leader_end_offset, now_ms, max_lag):
                out.append(replica_id)
        return tuple(out)

    def prepare_isr_shrink(self, partition: Partition, out_of_sync: tuple[int, ...]) -> PendingShrinkIsr:
        """§6 `prepareIsrShrink`: committed ISR − the out-of-sync set."""
        committed = last_committed(partition.state)
        isr = tuple(r for r in committed.isr if r not in out_of_sync)
        return PendingShrinkIsr(out_of_sync, self.proposal(partition, isr), committed)

    # ---------------------------------------------------------------- §3, §7 high watermark

    def hw_isr(self, state: IsrState) -> tuple[int, ...]:
        """§3: the ISR the HW and acks=all are computed over — the maximal ISR (B08a/b)."""
        return state.maximal_isr

    def is_under_min_isr(self, partition: Partition) -> bool:
        """§7.1 (KAFKA-15583, 3.7+): committed ISR smaller than min(min.insync.replicas, RF) (B15a)."""
        if partition.profile.representative_version < HW_MIN_ISR_GATE_SINCE:
            return False
        return len(partition.state.isr) < partition.effective_min_isr

    def high_watermark_candidate(self, partition: Partition, now_ms: int) -> int:
        """§7 steps 2–3: the smallest LEO among maximal-ISR followers and caught-up eligible
        non-ISR followers (KAFKA-4485 B25, KAFKA-15021 B23); unknown LEOs pin it below the HW."""
        leader_end_offset = partition.log.leo
        candidate = leader_end_offset
        hw_isr = self.hw_isr(partition.state)
        max_lag = partition.config.replica_lag_time_max_ms
        for replica_id, state in partition.remote.items():
            offset = state.log_end_offset
            if offset >= candidate:
                continue
            if replica_id in hw_isr or (
                self.is_caught_up(state, leader_end_offset, now_ms, max_lag)
                and self.may_hold_hw_back(partition, replica_id)
            ):
                candidate = offset
        return candidate

    def may_hold_hw_back(self, partition: Partition, replica_id: int) -> bool:
        """§7 step 3's eligibility conjunct (KAFKA-15021, B23): a caught-up replica outside the
        ISR holds the HW back only if it could join the ISR — not fenced, not shutting down."""
        return self.is_replica_isr_eligible(partition, replica_id)

    # ---------------------------------------------------------------- §8 produce

    def produce_error(self, partition: Partition, acks: int) -> Error:
        """§8 before appending: acks=all needs |committed ISR| ≥ effective min ISR."""
        if acks == -1 and len(partition.state.isr) < partition.effective_min_isr:
            return Error.NOT_ENOUGH_REPLICAS
        return Error.NONE

    def produce_completion(self, partition: Partition, required_offset: int) -> Error | None:
        """§8 `checkEnoughReplicasReachOffset`: None while HW < required offset; then success iff
        |maximal ISR| ≥ effective min ISR, else NOT_ENOUGH_REPLICAS_AFTER_APPEND (D11)."""
        if partition.log.hw < required_offset:
            return None
        if partition.effective_min_isr <= len(partition.state.maximal_isr):
            return Error.NONE
        return Error.NOT_ENOUGH_REPLICAS_AFTER_APPEND

    # ---------------------------------------------------------------- §9 AlterPartition results

    def response_is_current(self, partition: Partition, proposed: PendingState) -> bool:
        """§9 step 1: a response for a state that newer metadata replaced is ignored (D4)."""
        return partition.state == proposed

    def on_success(
        self, partition: Partition, proposed: PendingState, result: AlterPartitionPartitionResult
    ) -> Commit | None:
        """§9 step 2: ignore (stay pending) if the leader epoch differs (D3) or the partition
        epoch is older (B16: equal is fine); else commit the ISR the controller returned (D2)."""
        if result.leader_epoch != partition.leader_epoch:
            return None
        if result.partition_epoch < partition.partition_epoch:
            return None
        return Commit(CommittedPartitionState(result.isr, result.leader_recovery_state), result.partition_epoch)

    def recompute_hw_after_commit(self) -> bool:
        """§7 / KAFKA-13091: try to advance the HW after a committed ISR change (B19)."""
        return True

    def on_error(self, partition: Partition, proposed: PendingState, error: Error) -> ErrorOutcome:
        """§9 step 3 table (B03 keeps retrying; D5 reverts on epoch errors)."""
        if error in (Error.OPERATION_NOT_ATTEMPTED, Error.INELIGIBLE_REPLICA):
            return ErrorOutcome.REVERT
        if error in (
            Error.UNKNOWN_TOPIC_OR_PARTITION, Error.UNKNOWN_TOPIC_ID, Error.FENCED_LEADER_EPOCH,
            Error.INVALID_UPDATE_VERSION, Error.INVALID_REQUEST, Error.NEW_LEADER_ELECTED,
        ):
            return ErrorOutcome.WAIT
        return ErrorOutcome.RETRY

    # ---------------------------------------------------------------- §10 metadata

    def accepts_metadata(self, partition: Partition, registration: PartitionState) -> bool:
        """§10: an update whose partition epoch is older than the local one is dropped (D6)."""
        return registration.partition_epoch >= partition.partition_epoch

    def clears_pending_on_metadata(self) -> bool:
        """§10 / KAFKA-12686: new metadata does not cancel the manager's in-flight item (B17)."""
        return False


def last_committed(state: IsrState) -> CommittedPartitionState:
    return state if isinstance(state, CommittedPartitionState) else state.last_committed


__all__ = ["UNKNOWN_OFFSET", "Commit", "ErrorOutcome", "LeaderRules", "last_committed"]
