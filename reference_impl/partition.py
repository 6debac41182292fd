"""One partition on one broker: leader and follower roles (Kafka's `Partition`, leader.md §1–§10).

The rules live in `LeaderRules` / `FollowerRules`; this class holds the state and applies what
they return. ISR-state changes go through `transition` (the one writer of `state`), follower
tracking through `remote[...] = ...` in `handle_follower_fetch` and `make_leader`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from isrcheck.contract.operations.leader_branch import LeaderBranch

from .broker_config import BrokerConfig
from .errors import Error
from .follower_lag import EQUAL, FollowerLag, after_append, after_fetch, at_leader_epoch
from .isr_state import CommittedPartitionState, IsrState, LeaderAndIsr, PendingState
from .leader_rules import ErrorOutcome, LeaderRules
from .messages import AlterPartitionPartitionResult
from .metadata_cache import MetadataCache
from .release import ReleaseProfile
from .replica_log import ReplicaLog
from .replica_state import ReplicaState
from .rpc import FetchPartition, FetchPartitionResponse
from .state import PartitionState

if TYPE_CHECKING:
    from .broker import Broker

LEADER = "leader"
FOLLOWER = "follower"
NONE = "none"


@dataclass(frozen=True, slots=True)
class PendingProduce:
    """An acks=all request waiting in purgatory for HW ≥ `required_offset` (§8)."""

    request: int
    required_offset: int
    deadline_ms: int


class Partition:
    def __init__(self, broker: Broker, topic: str, index: int, log: ReplicaLog) -> None:
        self.broker = broker
        self.rules: LeaderRules = broker.leader_rules
        self.broker_id: int = broker.id
        self.cache: MetadataCache = broker.cache
        self.config: BrokerConfig = broker.config
        self.profile: ReleaseProfile = broker.profile
        """The broker's rules, id, metadata cache, settings and release, which a broker keeps for
        its life: plain attributes, not properties reading through the broker, because the
        fetch path reads them on every follower Fetch (docs/performance.md)."""
        self._cluster = broker.cluster
        self.topic = topic
        self.index = index
        self.log = log
        self.role = NONE
        self.leader = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: tuple[int, ...] = ()
        self.state: IsrState = CommittedPartitionState(())
        self.epoch_start_offset = -1
        """§1 `leaderEpochStartOffsetOpt`: the LEO when this broker took the current epoch (leader only)."""
        self.remote: dict[int, ReplicaState] = {}
        self.follower_lags: dict[int, FollowerLag] = {}
        """Harness ground truth (follower_lag.py), kept beside `remote` but never read by the rules."""
        self.state_since_ms = 0
        """Harness ground truth: when `state` last changed (P-SHRINK)."""
        self.produces: list[PendingProduce] = []
        self.fetch_failed = False
        """§13: FENCED_LEADER_EPOCH on fetch — stop fetching until new metadata."""
        self.pending_truncation: tuple[int, int] | None = None
        """§13: a DivergingEpoch received; truncate before the next fetch."""
        self.replaced_at_equal_epoch: LeaderAndIsr | None = None
        """The last pending proposal that metadata of equal partition epoch replaced (§10): its
        request may still be queued or in flight and be accepted. Ground truth only
        (`IsrAdmission.proposal`); no rule reads it."""
        self.last_diverging: tuple[tuple[int, int], int, int] | None = None
        """The last DivergingEpoch with the log's (LEO, latest epoch) then: a repeat that truncated
        nothing waits for the next regular fetch instead of spinning."""

    # ---------------------------------------------------------------- context

    @property
    def tp(self) -> tuple[str, int]:
        return self.topic, self.index

    @property
    def own_broker_epoch(self) -> int:
        return self.broker.epoch

    @property
    def now_ms(self) -> int:
        return self._cluster.now_ms

    @property
    def effective_min_isr(self) -> int:
        """§7.1, §8: min(min.insync.replicas of the topic, replication factor)."""
        configured = self.cache.min_insync_replicas(self.topic, self.broker.default_min_isr)
        return min(configured, len(self.replicas)) if self.replicas else configured

    # ---------------------------------------------------------------- §2 the one writer of `state`

    def transition(self, state: IsrState) -> None:
        if state != self.state:
            self.state_since_ms = self._cluster.now_ms
        self.state = state

    def behind_followers(self) -> tuple[tuple[int, tuple[int, int, int]], ...]:
        """Harness ground truth (P-SHRINK): (follower, (fetch offset, caught-up time, behind since))
        for each follower whose fetch offset differs from this leader's log end offset; the others
        are caught up whatever the time (KAFKA-7152), and leaving them out keeps this unchanged
        while followers keep up."""
        return tuple(
            (r, (lag.fetch_offset, lag.caught_up_ms, lag.behind_since_ms))
            for r, lag in sorted(self.follower_lags.items()) if lag.behind_since_ms != EQUAL
        )

    def reached(self, branch: LeaderBranch) -> None:
        """Protocol-state coverage: this partition took `branch` (contract/operations/leader_branch.py)."""
        self._cluster.reached(branch)

    # ---------------------------------------------------------------- §4 leader serving a follower Fetch

    def handle_follower_fetch(
        self, fetch: FetchPartition, replica_id: int, broker_epoch: int
    ) -> FetchPartitionResponse:
        rules = self.rules
        log = self.log
        error = rules.fetch_epoch_error(fetch.current_leader_epoch, self.leader_epoch)
        if error is not Error.NONE:
            self.reached(LeaderBranch.FETCH_FENCED_EPOCH if error is Error.FENCED_LEADER_EPOCH
                         else LeaderBranch.FETCH_UNKNOWN_EPOCH)
            return self._fetch_error(fetch, error)
        state = self.remote.get(replica_id)
        if state is None:
            self.reached(LeaderBranch.FETCH_NOT_A_REPLICA)
            return self._fetch_error(fetch, Error.UNKNOWN_LEADER_EPOCH)
        diverging = rules.diverging_epoch(log, fetch)
        fetch_offset = fetch.fetch_offset
        if diverging is not None:
            self.reached(LeaderBranch.FETCH_DIVERGING)
            if rules.diverging_fetch_updates_state():
                self._track_follower(replica_id, state, fetch_offset, broker_epoch)
            return FetchPartitionResponse(
                self.topic, self.index, Error.NONE, log.hw, len(log.records), (), diverging, fetch_offset,
                fetch.current_leader_epoch,
            )
        if fetch_offset > len(log.records):
            return self._fetch_error(fetch, Error.OFFSET_OUT_OF_RANGE)
        records = log.read(fetch_offset, self.config.replica_fetch_max_records)
        if rules.stale_fetch_broker_epoch(broker_epoch, self.cache.alive_broker_epoch(replica_id)):
            self.reached(LeaderBranch.FETCH_STALE_BROKER_EPOCH)
            return self._fetch_error(fetch, Error.NOT_LEADER_OR_FOLLOWER)
        self._track_follower(replica_id, state, fetch_offset, broker_epoch)
        return FetchPartitionResponse(
            self.topic, self.index, Error.NONE, log.hw, len(log.records), records, None, fetch_offset,
            fetch.current_leader_epoch,
        )

    def _track_follower(self, replica_id: int, state: ReplicaState, fetch_offset: int, broker_epoch: int) -> None:
        """§4 `updateFollowerFetchState`: new follower state, then expansion (§5), then the HW (§7)
        if the follower's LEO moved."""
        now = self._cluster.now_ms
        self.remote[replica_id] = self.rules.updated_replica_state(
            state, fetch_offset, now, len(self.log.records), broker_epoch
        )
        lag = self.follower_lags.get(replica_id)
        if lag is not None:
            self.follower_lags[replica_id] = after_fetch(lag, fetch_offset, now, len(self.log.records))
        self.maybe_expand_isr(replica_id)
        if fetch_offset != state.log_end_offset:
            self.maybe_increment_hw()

    def _fetch_error(self, fetch: FetchPartition, error: Error) -> FetchPartitionResponse:
        return FetchPartitionResponse(
            self.topic, self.index, error, self.log.hw, self.log.leo, (), None, fetch.fetch_offset,
            fetch.current_leader_epoch,
        )

    # ---------------------------------------------------------------- §5, §6 proposals

    def maybe_expand_isr(self, replica_id: int) -> None:
        """§5: propose committed ISR + the follower when it is in sync and eligible."""
        if self.role != LEADER:
            return
        rules = self.rules
        if rules.can_add_replica_to_isr(self, replica_id):
            proposal = rules.prepare_isr_expand(self, replica_id)
            self.reached(LeaderBranch.EXPAND_PROPOSED)
            self.transition(proposal)
            self.submit(proposal)
        elif replica_id not in self.state.maximal_isr:
            self._note_expansion_declined(replica_id)

    def _note_expansion_declined(self, replica_id: int) -> None:
        """Which of §5's conditions kept a follower that reached the HW out (coverage only: a
        follower still below the HW is the ordinary catching-up case and names no branch)."""
        state = self.remote.get(replica_id)
        rules = self.rules
        if state is None or state.log_end_offset < self.log.hw:
            return
        if not rules.is_follower_in_sync(state, self.log.hw, self.epoch_start_offset):
            self.reached(LeaderBranch.EXPAND_WAITS_BELOW_EPOCH_START)
        elif not rules.is_replica_isr_eligible(self, replica_id):
            self.reached(LeaderBranch.EXPAND_REFUSED_INELIGIBLE)
        elif not rules.can_propose(self):
            self.reached(LeaderBranch.EXPAND_WAITS_FOR_PENDING)

    def maybe_shrink_isr(self) -> None:
        """§6: the isr-expiration task, for this partition."""
        if self.role != LEADER:
            return
        rules = self.rules
        out = rules.out_of_sync_replicas(self, self.now_ms)
        if out and rules.can_propose(self):
            proposal = rules.prepare_isr_shrink(self, out)
            self.reached(LeaderBranch.SHRINK_PROPOSED)
            self.transition(proposal)
            self.submit(proposal)

    def submit(self, proposal: PendingState) -> None:
        """§9 `submitAlterPartition`: hand the proposal to the broker's AlterPartitionManager; a
        refusal (an item already queued for the partition) arrives as OPERATION_NOT_ATTEMPTED."""
        if not self.broker.manager.submit(self, proposal):
            self.reached(LeaderBranch.SUBMIT_REFUSED)
            self.on_alter_partition_result(proposal, Error.OPERATION_NOT_ATTEMPTED)

    def on_alter_partition_result(self, proposed: PendingState, result: AlterPartitionPartitionResult | Error) -> None:
        """§9: the completion callback of a submitted proposal."""
        rules = self.rules
        if not rules.response_is_current(self, proposed):
            self.reached(LeaderBranch.ANSWER_FOR_REPLACED_STATE_IGNORED)
            return
        if isinstance(result, AlterPartitionPartitionResult):
            commit = rules.on_success(self, proposed, result)
            if commit is None:
                self.reached(LeaderBranch.SUCCESS_IGNORED_OTHER_EPOCH)
                return
            self.reached(LeaderBranch.SUCCESS_COMMITTED)
            self.partition_epoch = commit.partition_epoch
            self.transition(commit.state)
            if rules.recompute_hw_after_commit():
                self.maybe_increment_hw()
            return
        outcome = rules.on_error(self, proposed, result)
        if outcome is ErrorOutcome.REVERT:
            self.reached(LeaderBranch.ERROR_REVERTED)
            self.transition(proposed.last_committed)
        elif outcome is ErrorOutcome.RETRY:
            self.submit(proposed)
        else:
            self.reached(LeaderBranch.ERROR_WAITS_FOR_METADATA)

    # ---------------------------------------------------------------- §7 high watermark, §8 produce

    def maybe_increment_hw(self) -> bool:
        """§7 `maybeIncrementLeaderHW`; completes waiting acks=all requests when the HW moved."""
        if self.role != LEADER:
            return False
        rules = self.rules
        if rules.is_under_min_isr(self):
            self.reached(LeaderBranch.HW_GATED_UNDER_MIN_ISR)
            return False
        candidate = rules.high_watermark_candidate(self, self.now_ms)
        if candidate < len(self.log.records):
            self._note_hw_holders(candidate)
        if candidate <= self.log.hw:
            return False
        self.reached(LeaderBranch.HW_ADVANCED)
        self.log.hw = candidate
        if self.produces:
            self.complete_produces()
        return True

    def _note_hw_holders(self, candidate: int) -> None:
        """Which of §7 step 3's disjuncts the candidate took for replicas outside the maximal
        ISR (coverage only): a caught-up eligible one held it (KAFKA-4485), a caught-up one
        below it did not because it is fenced or shutting down (KAFKA-15021)."""
        rules = self.rules
        hw_isr = rules.hw_isr(self.state)
        leader_end_offset = len(self.log.records)
        now_ms = self._cluster.now_ms
        max_lag = self.config.replica_lag_time_max_ms
        for replica_id, state in self.remote.items():
            offset = state.log_end_offset
            if replica_id in hw_isr or offset > candidate or offset < 0:
                continue
            if not rules.is_caught_up(state, leader_end_offset, now_ms, max_lag):
                continue
            if not rules.may_hold_hw_back(self, replica_id):
                if offset < candidate:
                    self.reached(LeaderBranch.HW_NOT_HELD_BY_INELIGIBLE_REPLICA)
            elif offset == candidate:
                self.reached(LeaderBranch.HW_HELD_BY_CAUGHT_UP_REPLICA)

    def complete_produces(self) -> None:
        waiting = []
        for produce in self.produces:
            outcome = self.rules.produce_completion(self, produce.required_offset)
            if outcome is None:
                waiting.append(produce)
            else:
                self.reached(LeaderBranch.PRODUCE_ACKNOWLEDGED if outcome is Error.NONE
                             else LeaderBranch.PRODUCE_NOT_ENOUGH_AFTER_APPEND)
                self.broker.complete_produce(produce.request, outcome)
        self.produces = waiting

    def append_as_leader(self, record_ids: tuple[int, ...], acks: int, request: int) -> tuple[Error, int]:
        """§8 `appendRecordsToLeader`: (error, base offset). acks=all waits in `produces`."""
        if self.role != LEADER:
            return Error.NOT_LEADER_OR_FOLLOWER, -1
        error = self.rules.produce_error(self, acks)
        self.broker.produce_decided(self.tp, acks, len(self.state.isr), self.effective_min_isr, error)
        if error is not Error.NONE:
            self.reached(LeaderBranch.PRODUCE_NOT_ENOUGH_REPLICAS)
            return error, -1
        base = self.log.leo
        epoch = self.leader_epoch
        self.log.append([(epoch, record_id) for record_id in record_ids])
        end, now = self.log.leo, self.now_ms
        self.follower_lags = {r: after_append(lag, end, now) for r, lag in self.follower_lags.items()}
        self.broker.produce_appended(request, base)
        if acks == -1:
            self.produces.append(PendingProduce(request, self.log.leo, self.now_ms + self.config.request_timeout_ms))
        self.maybe_increment_hw()
        return Error.NONE, base

    def fail_produces(self, error: Error) -> None:
        produces, self.produces = self.produces, []
        for produce in produces:
            self.broker.complete_produce(produce.request, error)

    def expire_produce(self, request: int) -> None:
        for produce in self.produces:
            if produce.request == request:
                self.produces.remove(produce)
                self.reached(LeaderBranch.PRODUCE_TIMED_OUT)
                self.broker.complete_produce(request, Error.REQUEST_TIMED_OUT)
                return

    # ---------------------------------------------------------------- §10 metadata

    def _applies(self, registration: PartitionState) -> bool:
        """§10: whether `makeLeader` / `makeFollower` apply `registration` (one with an older
        partition epoch is dropped); a leader's pending ISR change is then overwritten."""
        if not self.rules.accepts_metadata(self, registration):
            self.reached(LeaderBranch.METADATA_OLDER_DROPPED)
            return False
        if self.role == LEADER and not isinstance(self.state, CommittedPartitionState):
            self.reached(LeaderBranch.METADATA_REPLACED_PENDING)
            if registration.partition_epoch == self.partition_epoch:
                self.replaced_at_equal_epoch = self.state.sent
        return True

    def make_leader(self, registration: PartitionState) -> None:
        """§10 `makeLeader`: overwrite the ISR state with the controller's; on a new leader epoch
        record the epoch start offset (KAFKA-7415) and reset follower state (§4)."""
        rules = self.rules
        if not self._applies(registration):
            return
        was_leader = self.role == LEADER
        new_epoch = registration.leader_epoch > self.leader_epoch
        self.role = LEADER
        self.leader = self.broker_id
        self.replicas = registration.replicas
        self.partition_epoch = registration.partition_epoch
        self.transition(CommittedPartitionState(registration.isr, int(registration.leader_recovery_state)))
        self.fetch_failed = False
        self.pending_truncation = None
        followers = [r for r in registration.replicas if r != self.broker_id]
        if new_epoch:
            self.leader_epoch = registration.leader_epoch
            self.epoch_start_offset = self.log.leo
            self.log.assign_epoch(self.leader_epoch, self.epoch_start_offset)
            self.remote = {
                r: rules.reset_replica_state(self, r, self.remote.get(r) if was_leader else None, registration.isr,
                                             was_leader)
                for r in followers
            }
            self.follower_lags = {
                r: at_leader_epoch(self.follower_lags.get(r) if was_leader else None, r in registration.isr,
                                   self.now_ms, self.log.leo)
                for r in followers
            }
        else:
            self.remote = {r: self.remote.get(r, ReplicaState()) for r in followers}
            self.follower_lags = {
                r: self.follower_lags.get(r) or at_leader_epoch(None, False, self.now_ms, self.log.leo)
                for r in followers
            }
        if rules.clears_pending_on_metadata():
            self.broker.manager.clear_pending(self.tp)
        self.maybe_increment_hw()

    def make_follower(self, registration: PartitionState) -> bool:
        """§10 `makeFollower`: drop leader state; returns whether the fetcher must (re)start
        (a leader-epoch change, §13)."""
        if not self._applies(registration):
            return False
        was_leader = self.role == LEADER
        restart = was_leader or self.role == NONE or registration.leader_epoch != self.leader_epoch
        self.role = FOLLOWER
        self.leader = registration.leader
        self.leader_epoch = registration.leader_epoch
        self.partition_epoch = registration.partition_epoch
        self.replicas = registration.replicas
        self.transition(CommittedPartitionState(()))
        self.remote = {}
        self.follower_lags = {}
        self.epoch_start_offset = -1
        if was_leader:
            self.fail_produces(Error.NOT_LEADER_OR_FOLLOWER)
        if self.rules.clears_pending_on_metadata():
            self.broker.manager.clear_pending(self.tp)
        if restart:
            self.fetch_failed = False
            self.pending_truncation = None
        return restart

    def stop(self) -> None:
        """No longer a replica (reassignment): keep the log, drop every role."""
        if self.role == LEADER:
            self.fail_produces(Error.NOT_LEADER_OR_FOLLOWER)
        self.role = NONE
        self.leader = -1
        self.remote = {}
        self.follower_lags = {}
        self.transition(CommittedPartitionState(()))

    # ---------------------------------------------------------------- §13 follower side

    def fetch_entry(self) -> FetchPartition:
        """The partition's entry in the next Fetch, after any pending truncation (§13)."""
        follower_rules = self.broker.follower_rules
        if self.pending_truncation is not None:
            offset = follower_rules.truncation_offset(self.log, self.pending_truncation)
            self.pending_truncation = None
            if offset < len(self.log.records):
                self.reached(LeaderBranch.FOLLOWER_TRUNCATED_DIVERGING)
            self.log.truncate_to(offset)
        return FetchPartition(self.topic, self.index, self.log.leo, self.log.latest_epoch(), self.leader_epoch)

    def handle_fetch_response(self, response: FetchPartitionResponse) -> bool:
        """§13, §7 follower HW. Returns whether to fetch again at once (records came, or a
        truncation is due)."""
        follower_rules = self.broker.follower_rules
        log = self.log
        error = response.error
        if error is Error.FENCED_LEADER_EPOCH:
            self.reached(LeaderBranch.FOLLOWER_FENCED)
            self.fetch_failed = True
            return False
        if error is Error.OFFSET_OUT_OF_RANGE:
            if log.leo > response.log_end_offset:
                log.truncate_to(response.log_end_offset)
                return True
            return False
        if error is not Error.NONE:
            return False
        if response.diverging_epoch is not None:
            if follower_rules.hw_before_truncation():
                log.hw = follower_rules.follower_high_watermark(response.high_watermark, log)
            repeated = self.last_diverging == (response.diverging_epoch, log.leo, log.latest_epoch())
            self.last_diverging = (response.diverging_epoch, log.leo, log.latest_epoch())
            self.pending_truncation = response.diverging_epoch
            return not repeated
        self.last_diverging = None
        if response.fetch_offset != log.leo:
            return False
        if response.records:
            log.append(response.records)
        log.hw = follower_rules.follower_high_watermark(response.high_watermark, log)
        return bool(response.records)
