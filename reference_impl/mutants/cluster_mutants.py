"""Cluster-level mutants: each a one-rule variation of the reference partition leader
(`LeaderRules`), follower (`FollowerRules`), `AlterPartitionManager` or `Controller`, named after
the historical bug (bugs.md B01–B30) or derived mutant (bugs.md appendix D1–D14) it reintroduces,
plus negative controls (N2–N4): variations Kafka also allows, which no property may flag.

A rules mutant is passed as an instance (`Cluster(..., leader_rules=StaleIncarnationFetchAccepted())`), a
manager or controller mutant as a class (`manager_class=`, `controller_class=`); the catalogue in
`isrcheck.reference_impl.mutants` holds the keyword arguments as `Mutant.cluster_options`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..alter_partition_manager import AlterPartitionManager, InflightRequest, ManagerItem
from ..controller import Controller
from ..errors import Error
from ..follower import FollowerRules
from ..isr_state import (
    CommittedPartitionState,
    IsrState,
    PendingExpandIsr,
    PendingShrinkIsr,
    PendingState,
)
from ..leader_rules import Commit, ErrorOutcome, LeaderRules
from ..messages import (
    AlterPartitionPartitionResult,
    AlterPartitionRequest,
    AlterPartitionResponse,
    IsrMember,
)
from ..replica_log import ReplicaLog
from ..replica_state import ReplicaState
from ..state import PartitionState

if TYPE_CHECKING:
    from ..broker import Broker
    from ..partition import Partition


# ==================================================================== leader rules (leader.md §3–§10)


class ProposalWithoutBrokerEpochs(LeaderRules):
    """B01 leader side / KAFKA-14139 (KIP-903): the leader's proposal carries no member broker
    epochs (all -1), so the controller cannot tell a rebooted incarnation from the one that caught up."""

    def isr_with_broker_epochs(self, partition: Partition, isr: tuple[int, ...]) -> tuple[IsrMember, ...]:
        return tuple(IsrMember(broker) for broker in isr)


class ProposesIneligibleReplicas(LeaderRules):
    """B03 (first half) / KAFKA-13916 (KIP-841): the leader proposes a follower its metadata cache
    shows fenced or in controlled shutdown (`isReplicaIsrEligible` missing from `canAddReplicaToIsr`)."""

    def is_replica_isr_eligible(self, partition: Partition, replica_id: int) -> bool:
        state = partition.remote.get(replica_id)
        registration = partition.cache.brokers.get(replica_id)
        if state is None or registration is None or state.broker_epoch is None:
            return False
        return state.broker_epoch == -1 or state.broker_epoch == registration.epoch


class RetriesIneligibleReplica(LeaderRules):
    """B03 (second half) / KAFKA-13916 (KIP-841): on INELIGIBLE_REPLICA the leader resubmits the
    same proposal instead of reverting to the last committed state."""

    def on_error(self, partition: Partition, proposed: PendingState, error: Error) -> ErrorOutcome:
        if error is Error.INELIGIBLE_REPLICA:
            return ErrorOutcome.RETRY
        return super().on_error(partition, proposed, error)


class StaleIncarnationFetchAccepted(LeaderRules):
    """B06 / KAFKA-15221: a Fetch carrying a broker epoch older than the metadata cache's still
    updates the follower's state (LEO, caught-up time)."""

    def stale_fetch_broker_epoch(self, fetch_epoch: int, cached_epoch: int | None) -> bool:
        return False


class InSyncAtHighWatermark(LeaderRules):
    """B07 / KAFKA-7128: a follower is in sync once its LEO reaches the HW, without also reaching
    the leader-epoch start offset."""

    def is_follower_in_sync(self, state: ReplicaState, high_watermark: int, epoch_start_offset: int) -> bool:
        return state.log_end_offset >= high_watermark


class ShrinkAssumedEarly(LeaderRules):
    """B08a / KIP-497 design: while a shrink is pending, the HW and acks=all use the proposed,
    smaller ISR."""

    def hw_isr(self, state: IsrState) -> tuple[int, ...]:
        if isinstance(state, PendingShrinkIsr):
            return state.sent.isr_ids
        return state.maximal_isr


class ExpansionNotAssumed(LeaderRules):
    """B08b / KIP-497 design: while an expansion is pending, the new member does not count for the HW."""

    def hw_isr(self, state: IsrState) -> tuple[int, ...]:
        if isinstance(state, PendingExpandIsr):
            return state.last_committed.isr
        return state.maximal_isr


class DivergingFetchIsProgress(LeaderRules):
    """B09 / KAFKA-13141: a Fetch answered with a diverging epoch still records the fetch offset as
    the follower's LEO."""

    def diverging_fetch_updates_state(self) -> bool:
        return True


class HwAdvancesUnderMinIsr(LeaderRules):
    """B15a / KAFKA-15583 (KIP-966): the HW advances while the ISR is smaller than min.insync.replicas."""

    def is_under_min_isr(self, partition: Partition) -> bool:
        return False


class ClearsInflightItem(LeaderRules):
    """B17 / KAFKA-12686: new metadata (makeLeader/makeFollower) removes the partition's item from
    the AlterPartitionManager even while it is in flight."""

    def clears_pending_on_metadata(self) -> bool:
        return True


class IneligibleHoldsBackHw(LeaderRules):
    """B23 / KAFKA-15021: a caught-up non-ISR replica holds the HW back even when it is fenced or
    in controlled shutdown (no eligibility conjunct in §7 step 3)."""

    def may_hold_hw_back(self, partition: Partition, replica_id: int) -> bool:
        return True


class LateResponseApplied(LeaderRules):
    """D4: the response to a proposal is applied even after newer metadata replaced the pending state."""

    def response_is_current(self, partition: Partition, proposed: PendingState) -> bool:
        return True


class AppliesOlderMetadata(LeaderRules):
    """D6: a metadata update whose partition epoch is older than the local one is applied (an older
    ISR is resurrected)."""

    def accepts_metadata(self, partition: Partition, registration: PartitionState) -> bool:
        return True


class NewLeaderAssumesFollowerLeos(LeaderRules):
    """D7: a new leader does not reset its followers' LEOs to unknown; it takes them to be where its
    own log ends (the model's form of "uses stale LEOs from a previous leadership")."""

    def reset_replica_state(
        self, partition: Partition, replica_id: int, old: ReplicaState | None, isr: tuple[int, ...], was_leader: bool
    ) -> ReplicaState:
        state = super().reset_replica_state(partition, replica_id, old, isr, was_leader)
        if not was_leader or old is None:
            return replace(state, log_end_offset=partition.log.leo)
        return state


class ProposesWhileInflight(LeaderRules):
    """D9: the leader proposes a new ISR change while one is still in flight (`isInflight` ignored)."""

    def can_propose(self, partition: Partition) -> bool:
        return True


class StrictFetchBrokerEpoch(LeaderRules):
    """D14: a Fetch without a broker epoch (-1, Fetch < v15) makes the follower ineligible for the
    ISR, instead of bypassing the KIP-903 check."""

    def is_replica_isr_eligible(self, partition: Partition, replica_id: int) -> bool:
        state = partition.remote.get(replica_id)
        return super().is_replica_isr_eligible(partition, replica_id) and (
            state is not None and state.broker_epoch != -1
        )


# ==================================================================== follower rules (leader.md §7, §13)


class HwBeforeTruncation(FollowerRules):
    """B27 / KAFKA-14704: the follower applies the leader's HW from a response carrying a diverging
    epoch before it truncates."""

    def hw_before_truncation(self) -> bool:
        return True


class UnclampedFollowerHw(FollowerRules):
    """D13: the follower takes the leader's HW without clamping it to its own LEO."""

    def follower_high_watermark(self, leader_high_watermark: int, log: ReplicaLog) -> int:
        return leader_high_watermark


# ==================================================================== AlterPartitionManager (leader.md §12)


class NonIdempotentRequestBuild(AlterPartitionManager):
    """B22 / KAFKA-15353: building a request below v3 moves NewIsrWithEpochs into NewIsr and clears
    it, so when the channel rebuilds the same request (a resend after a lost connection or
    NOT_CONTROLLER) it carries an empty NewIsr."""

    def __init__(self, broker: Broker) -> None:
        super().__init__(broker)
        self.last_built: tuple[ManagerItem, ...] | None = None
        """The items of the request built last: `resend` passes the very same tuple."""

    def build_request(self, items: tuple[ManagerItem, ...]) -> AlterPartitionRequest:
        request = super().build_request(items)
        rebuilt = items is self.last_built
        self.last_built = items
        if request.version >= 3 or not rebuilt:
            return request
        topics = tuple(
            replace(topic, partitions=tuple(replace(p, new_isr=()) for p in topic.partitions))
            for topic in request.topics
        )
        return replace(request, topics=topics)


class TrustsStaleControllerErrors(AlterPartitionManager):
    """B21 leader side / KAFKA-14154: only a top-level NOT_CONTROLLER makes the channel rediscover
    the controller; a partition-level one (a stale controller whose view is behind) reaches the
    partition as an ordinary error."""

    def reroutes(self, response: AlterPartitionResponse) -> bool:
        return response.error is Error.NOT_CONTROLLER


class ManyRequestsInflight(AlterPartitionManager):
    """D10: the manager sends what is queued without waiting for the outstanding request, so several
    AlterPartition requests are in flight per broker and their responses apply in any order."""

    def __init__(self, broker: Broker) -> None:
        super().__init__(broker)
        self.earlier: dict[int, InflightRequest] = {}
        """Requests sent while another was in flight, by correlation."""

    def maybe_propagate(self) -> None:
        if self.items and self.inflight is not None:
            self.earlier[self.inflight.correlation] = self.inflight
            self.inflight = None
        super().maybe_propagate()

    def on_response(self, correlation: int, response: AlterPartitionResponse) -> None:
        earlier = self.earlier.pop(correlation, None)
        if earlier is None:
            super().on_response(correlation, response)
            return
        latest, self.inflight = self.inflight, earlier
        super().on_response(correlation, response)
        if self.inflight is None:
            self.inflight = latest
        elif latest is not None:
            self.earlier[latest.correlation] = latest

    def on_disconnect(self, correlation: int) -> None:
        earlier = self.earlier.pop(correlation, None)
        if earlier is None:
            super().on_disconnect(correlation)
            return
        if self.inflight is not None:
            self.earlier[self.inflight.correlation] = self.inflight
        self.resend(earlier)

    def inflight_requests(self) -> int:
        return len(self.earlier) + (0 if self.inflight is None else 1)

    def outstanding(self) -> tuple[tuple[tuple[str, int], int, bool], ...]:
        rows = list(super().outstanding())
        listed = {(tp, item) for tp, item, _ in rows}
        for request in self.earlier.values():
            rows.extend((i.tp, i.id, True) for i in request.items if (i.tp, i.id) not in listed)
        return tuple(rows)


# ==================================================================== equivalent in this model
# Expressible, but no run of the model can tell them from the reference through the properties
# (why: `isrcheck.reference_impl.mutants.EQUIVALENT`). Kept so that a new property or fault can pick them up.


class FetchEpochNotCompared(LeaderRules):
    """B01 leader side, second form / KAFKA-14139 (KIP-903): ISR eligibility ignores the broker
    epoch of the follower's last Fetch (no comparison with the metadata cache)."""

    def is_replica_isr_eligible(self, partition: Partition, replica_id: int) -> bool:
        registration = partition.cache.brokers.get(replica_id)
        return (
            replica_id in partition.remote and registration is not None and not registration.fenced
            and not registration.in_controlled_shutdown
        )


class NoFetchEpochFencing(LeaderRules):
    """B10 / KAFKA-6880 (KIP-320): a follower Fetch is served whatever its current leader epoch."""

    def fetch_epoch_error(self, request_epoch: int, local_epoch: int) -> Error:
        return Error.NONE


class EqualPartitionEpochIsStale(LeaderRules):
    """B16 / KAFKA-12751: a successful response whose partition epoch equals the local one is
    treated as stale (`<=` instead of `<`), leaving the partition pending."""

    def on_success(
        self, partition: Partition, proposed: PendingState, result: AlterPartitionPartitionResult
    ) -> Commit | None:
        if result.partition_epoch <= partition.partition_epoch:
            return None
        return super().on_success(partition, proposed, result)


class NoHwAfterCommit(LeaderRules):
    """B19 / KAFKA-13091: a committed ISR change (a shrink) does not trigger a HW recomputation."""

    def recompute_hw_after_commit(self) -> bool:
        return False


class IdleFollowerOutOfSync(LeaderRules):
    """B26 / KAFKA-7152: a follower is out of sync once its caught-up time is older than the lag
    window, even if its LEO equals the leader's."""

    def is_caught_up(self, state: ReplicaState, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        return now_ms - state.last_caught_up_time_ms <= max_lag_ms


class CommitsProposedIsr(LeaderRules):
    """D2: on success the leader commits the ISR it proposed, not the one the controller returned."""

    def on_success(
        self, partition: Partition, proposed: PendingState, result: AlterPartitionPartitionResult
    ) -> Commit | None:
        commit = super().on_success(partition, proposed, result)
        if commit is None:
            return None
        return Commit(CommittedPartitionState(proposed.sent.isr_ids, commit.state.leader_recovery_state),
                      commit.partition_epoch)


class AcceptsOtherLeaderEpoch(LeaderRules):
    """D3: a successful response is committed even if its leader epoch differs from the leader's own."""

    def on_success(
        self, partition: Partition, proposed: PendingState, result: AlterPartitionPartitionResult
    ) -> Commit | None:
        if result.partition_epoch < partition.partition_epoch:
            return None
        return Commit(CommittedPartitionState(result.isr, result.leader_recovery_state), result.partition_epoch)


class RevertsOnEpochErrors(LeaderRules):
    """D5: FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION revert to the last committed state (free to
    re-propose from that stale base) instead of waiting for metadata."""

    def on_error(self, partition: Partition, proposed: PendingState, error: Error) -> ErrorOutcome:
        if error in (Error.FENCED_LEADER_EPOCH, Error.INVALID_UPDATE_VERSION):
            return ErrorOutcome.REVERT
        return super().on_error(partition, proposed, error)


class NoGracePeriod(LeaderRules):
    """D8: a leader taking a new epoch starts every follower's caught-up time at 0 — ISR members get
    no lag window of grace (Apache Fluss issue 3698)."""

    def reset_replica_state(
        self, partition: Partition, replica_id: int, old: ReplicaState | None, isr: tuple[int, ...], was_leader: bool
    ) -> ReplicaState:
        return replace(super().reset_replica_state(partition, replica_id, old, isr, was_leader),
                       last_caught_up_time_ms=0)


class NoMinIsrCheckOnCompletion(LeaderRules):
    """D11: acks=all completes successfully once the HW passes the record, without re-checking
    min.insync.replicas against the maximal ISR."""

    def produce_completion(self, partition: Partition, required_offset: int) -> Error | None:
        if partition.log.hw < required_offset:
            return None
        return Error.NONE


# ==================================================================== negative controls


class OneItemPerRequest(AlterPartitionManager):
    """N2 (negative control): one AlterPartition item per request, the oldest first — a batching
    Kafka also allows (leader.md §12: batching is an optimisation)."""

    def maybe_propagate(self) -> None:
        if self.items and self.inflight is None:
            self.send((next(iter(self.items.values())),))


class ReverseBatchOrder(AlterPartitionManager):
    """N4 (negative control): the queued items go out in reverse order within one request; the
    controller judges every entry against the state before the request (controller.md §2.8)."""

    def maybe_propagate(self) -> None:
        if self.items and self.inflight is None:
            self.send(tuple(reversed(self.items.values())))


class ReverseExpiryOrder(Controller):
    """N3 (negative control): simultaneous session expiries are handled in the reverse order
    (controller.md §4.3 leaves the order among expired brokers to the implementation)."""

    def expired_sessions(self) -> list[tuple[int, int]]:
        return list(reversed(super().expired_sessions()))


__all__ = [
    "AcceptsOtherLeaderEpoch",
    "AppliesOlderMetadata",
    "ClearsInflightItem",
    "CommitsProposedIsr",
    "DivergingFetchIsProgress",
    "EqualPartitionEpochIsStale",
    "ExpansionNotAssumed",
    "FetchEpochNotCompared",
    "HwAdvancesUnderMinIsr",
    "HwBeforeTruncation",
    "IdleFollowerOutOfSync",
    "InSyncAtHighWatermark",
    "IneligibleHoldsBackHw",
    "LateResponseApplied",
    "ManyRequestsInflight",
    "NewLeaderAssumesFollowerLeos",
    "NoFetchEpochFencing",
    "NoGracePeriod",
    "NoHwAfterCommit",
    "NoMinIsrCheckOnCompletion",
    "NonIdempotentRequestBuild",
    "OneItemPerRequest",
    "ProposalWithoutBrokerEpochs",
    "ProposesIneligibleReplicas",
    "ProposesWhileInflight",
    "RetriesIneligibleReplica",
    "ReverseBatchOrder",
    "ReverseExpiryOrder",
    "RevertsOnEpochErrors",
    "ShrinkAssumedEarly",
    "StaleIncarnationFetchAccepted",
    "StrictFetchBrokerEpoch",
    "TrustsStaleControllerErrors",
    "UnclampedFollowerHw",
]
