"""One test (or a few) per leader rule of leader.md; each docstring names the section."""

from __future__ import annotations

import pytest
from cluster_helpers import TOPIC, TP, leader_partition, new_cluster
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.isr_state import CommittedPartitionState, LeaderAndIsr, PendingExpandIsr, PendingShrinkIsr
from isrcheck.reference_impl.leader_rules import ErrorOutcome, LeaderRules
from isrcheck.reference_impl.messages import AlterPartitionPartitionResult, IsrMember
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.replica_state import ReplicaState
from isrcheck.reference_impl.rpc import FetchPartition
from isrcheck.reference_impl.state import PartitionState

RULES = LeaderRules()


# ------------------------------------------------------------------------------------ §4 fetch


def test_fetch_epoch_error() -> None:
    """§4 / KIP-320: an older CurrentLeaderEpoch is fenced, a newer one is unknown."""
    assert RULES.fetch_epoch_error(3, 4) is Error.FENCED_LEADER_EPOCH
    assert RULES.fetch_epoch_error(5, 4) is Error.UNKNOWN_LEADER_EPOCH
    assert RULES.fetch_epoch_error(4, 4) is Error.NONE


def test_caught_up_time_when_fetching_at_the_leader_leo() -> None:
    """§4 step 2, first case: fetch offset ≥ leader LEO → lastCaughtUpTime := this fetch's time."""
    state = RULES.updated_replica_state(ReplicaState(last_caught_up_time_ms=5), 10, 100, 10, 7)
    assert (state.log_end_offset, state.last_caught_up_time_ms, state.last_fetch_time_ms, state.broker_epoch) == (
        10, 100, 100, 7)


def test_caught_up_time_of_the_previous_fetch() -> None:
    """§4 step 2, second case: offset ≥ the leader LEO seen at the previous fetch → that fetch's time."""
    old = ReplicaState(log_end_offset=5, last_fetch_leader_log_end_offset=8, last_fetch_time_ms=50,
                       last_caught_up_time_ms=10)
    state = RULES.updated_replica_state(old, 8, 100, 12, 7)
    assert state.last_caught_up_time_ms == 50
    assert state.last_fetch_leader_log_end_offset == 12


def test_caught_up_time_unchanged_when_behind() -> None:
    """§4 step 2, otherwise unchanged; step 3 stores LEO, fetch time, max(leader LEO) and the epoch."""
    old = ReplicaState(log_end_offset=2, last_fetch_leader_log_end_offset=8, last_fetch_time_ms=50,
                       last_caught_up_time_ms=10)
    state = RULES.updated_replica_state(old, 4, 100, 6, 9)
    assert (state.log_end_offset, state.last_caught_up_time_ms, state.last_fetch_leader_log_end_offset,
            state.broker_epoch) == (4, 10, 8, 9)


def test_is_caught_up() -> None:
    """§4 `isCaughtUp`: LEO equal to the leader's (KAFKA-7152) or within replica.lag.time.max.ms."""
    assert RULES.is_caught_up(ReplicaState(log_end_offset=9, last_caught_up_time_ms=0), 9, 10**6, 100)
    assert RULES.is_caught_up(ReplicaState(log_end_offset=3, last_caught_up_time_ms=900), 9, 1000, 100)
    assert not RULES.is_caught_up(ReplicaState(log_end_offset=3, last_caught_up_time_ms=899), 9, 1000, 100)


def test_stale_fetch_broker_epoch() -> None:
    """§4 step 1 (KIP-903): a Fetch whose epoch is older than the cached unfenced one is rejected;
    -1 (Fetch < v15) and an unknown/fenced cached epoch are not."""
    assert RULES.stale_fetch_broker_epoch(5, 8)
    assert not RULES.stale_fetch_broker_epoch(8, 8)
    assert not RULES.stale_fetch_broker_epoch(-1, 8)
    assert not RULES.stale_fetch_broker_epoch(5, None)


def test_reset_replica_state_of_a_new_leader() -> None:
    """§4 reset: a broker that becomes leader forgets follower LEOs; ISR members get lastCaughtUpTime now."""
    cluster = new_cluster()
    cluster.advance(700)
    partition = leader_partition(cluster)
    old = ReplicaState(log_end_offset=4, broker_epoch=3, last_caught_up_time_ms=1)
    in_isr = RULES.reset_replica_state(partition, 2, old, (1, 2), was_leader=False)
    outside = RULES.reset_replica_state(partition, 3, old, (1, 2), was_leader=False)
    assert in_isr == ReplicaState(last_caught_up_time_ms=700)
    assert outside == ReplicaState(last_caught_up_time_ms=0)


def test_reset_replica_state_of_a_re_elected_leader() -> None:
    """§4 reset: the same leader with a new epoch keeps LEO and broker epoch, restarts the clocks."""
    cluster = new_cluster()
    cluster.advance(700)
    partition = leader_partition(cluster)
    partition.epoch_start_offset = 6
    old = ReplicaState(log_end_offset=4, broker_epoch=3, last_fetch_time_ms=5, last_caught_up_time_ms=1)
    state = RULES.reset_replica_state(partition, 2, old, (1, 2), was_leader=True)
    assert (state.log_end_offset, state.broker_epoch, state.last_fetch_leader_log_end_offset,
            state.last_fetch_time_ms, state.last_caught_up_time_ms) == (4, 3, 6, 700, 700)
    assert RULES.reset_replica_state(partition, 3, old, (1, 2), was_leader=True).last_caught_up_time_ms == 0


def fetch(partition_offset: int, last_epoch: int, leader_epoch: int = 0) -> FetchPartition:
    return FetchPartition(TOPIC, 0, partition_offset, last_epoch, leader_epoch)


def test_diverging_fetch_is_not_progress() -> None:
    """§4, §13 (KAFKA-10554, KAFKA-13141): a fetch whose LastFetchedEpoch disagrees with the leader's
    epoch cache gets DivergingEpoch and no data, and leaves the follower's state untouched."""
    cluster = new_cluster()
    cluster.produce(TOPIC, 0, 1, 3)
    cluster.advance(600)
    partition = leader_partition(cluster)
    before = partition.remote[2]
    response = partition.handle_follower_fetch(fetch(5, 0), 2, cluster.brokers[2].epoch)
    assert response.diverging_epoch == (0, 3) and response.records == ()
    assert partition.remote[2] == before


def test_fetch_from_an_older_incarnation_is_rejected() -> None:
    """§4 step 1 (KIP-903, KAFKA-15221): NOT_LEADER_OR_FOLLOWER, state untouched."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    before = partition.remote[2]
    stale = cluster.brokers[2].epoch - 1
    response = partition.handle_follower_fetch(fetch(0, -1), 2, stale)
    assert response.error is Error.NOT_LEADER_OR_FOLLOWER
    assert partition.remote[2] == before


def test_fetch_with_an_old_leader_epoch_is_fenced() -> None:
    """§4 (KIP-320): checked before anything else; nothing is updated."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    partition.leader_epoch = 3
    before = partition.remote[2]
    assert partition.handle_follower_fetch(fetch(0, -1, 2), 2, -1).error is Error.FENCED_LEADER_EPOCH
    assert partition.remote[2] == before


def test_fetch_from_a_replica_outside_the_assignment() -> None:
    """§4: a replica id without a Replica object gets UNKNOWN_LEADER_EPOCH (KAFKA-13837)."""
    cluster = new_cluster(brokers=(1, 2, 3, 4))
    partition = leader_partition(cluster)
    assert partition.handle_follower_fetch(fetch(0, -1), 4, -1).error is Error.UNKNOWN_LEADER_EPOCH


# ------------------------------------------------------------------------------------ §5 expansion


def test_in_sync_needs_the_hw_and_the_epoch_start_offset() -> None:
    """§5 condition 3 (KAFKA-7128): LEO ≥ HW and ≥ leaderEpochStartOffset."""
    state = ReplicaState(log_end_offset=5)
    assert RULES.is_follower_in_sync(state, 5, 5)
    assert not RULES.is_follower_in_sync(state, 5, 11)
    assert not RULES.is_follower_in_sync(state, 6, 0)


@pytest.mark.parametrize(
    ("fenced", "shutting_down", "fetch_epoch", "eligible"),
    [
        (False, False, "current", True),
        (False, False, -1, True),
        (False, False, None, False),
        (False, False, "stale", False),
        (True, False, "current", False),
        (False, True, "current", False),
    ],
)
def test_isr_eligibility(fenced: bool, shutting_down: bool, fetch_epoch: object, eligible: bool) -> None:
    """§5 condition 4 (KIP-841, KIP-903): in the metadata cache, not fenced, not shutting down, and
    the last Fetch's broker epoch -1 or the cached one."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    registration = partition.cache.brokers[2]
    partition.cache.brokers[2] = type(registration)(
        2, registration.epoch, registration.incarnation, fenced, shutting_down
    )
    named = {"current": registration.epoch, "stale": registration.epoch - 1}
    epoch = named[fetch_epoch] if isinstance(fetch_epoch, str) else fetch_epoch
    assert epoch is None or isinstance(epoch, int)
    partition.remote[2] = ReplicaState(log_end_offset=0, broker_epoch=epoch)
    assert RULES.is_replica_isr_eligible(partition, 2) is eligible


def test_can_add_only_from_committed_state_and_outside_the_isr() -> None:
    """§5 conditions 1–2; a new proposal only from CommittedPartitionState (§2)."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    partition.remote[3] = ReplicaState(log_end_offset=0, broker_epoch=cluster.brokers[3].epoch)
    assert not RULES.can_add_replica_to_isr(partition, 3)  # already in the ISR
    partition.transition(CommittedPartitionState((1, 2)))
    assert RULES.can_add_replica_to_isr(partition, 3)
    proposal = RULES.prepare_isr_shrink(partition, (2,))
    partition.transition(proposal)
    assert not RULES.can_add_replica_to_isr(partition, 3)


def test_expansion_proposal_carries_broker_epochs() -> None:
    """§5 `prepareIsrExpand` / `addBrokerEpochToIsr`: committed ISR + F; the leader's own epoch,
    followers' last Fetch epochs, -1 for a member that has not fetched; epochs of the leader."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    partition.transition(CommittedPartitionState((1, 2)))
    partition.remote[2] = ReplicaState(broker_epoch=None)
    partition.remote[3] = ReplicaState(log_end_offset=0, broker_epoch=42)
    proposal = RULES.prepare_isr_expand(partition, 3)
    assert proposal.maximal_isr == (1, 2, 3) and proposal.isr == (1, 2)
    assert proposal.sent == LeaderAndIsr(
        1, partition.leader_epoch, (IsrMember(1, cluster.brokers[1].epoch), IsrMember(2, -1), IsrMember(3, 42)),
        partition.partition_epoch,
    )


def test_caught_up_follower_triggers_an_expansion() -> None:
    """§5: evaluated on every follower fetch; the proposal goes to the AlterPartitionManager."""
    cluster = new_cluster()
    cluster.hold(Selector("Fetch", 3))
    cluster.produce(TOPIC, 0, 1, 2)
    cluster.advance(16_000)
    assert cluster.controller.partition(*TP).isr == (1, 2)
    cluster.hold(Selector("AlterPartition", 1))
    cluster.release(Selector("Fetch", 3))
    cluster.advance(1000)
    partition = leader_partition(cluster)
    assert isinstance(partition.state, PendingExpandIsr) and partition.state.new_in_sync_replica == 3
    assert [item[0] for item in cluster.brokers[1].manager.outstanding()] == [TP]


# ------------------------------------------------------------------------------------ §6 shrink


def test_out_of_sync_replicas() -> None:
    """§6 `getOutOfSyncReplicas`: nothing while in flight; members with no Replica (KAFKA-9672) or
    not caught up; never the leader."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    partition.log.append([(0, 100)])
    now = 50_000
    partition.remote[2] = ReplicaState(log_end_offset=1, last_caught_up_time_ms=0)
    partition.remote[3] = ReplicaState(log_end_offset=0, last_caught_up_time_ms=0)
    assert RULES.out_of_sync_replicas(partition, now) == (3,)
    del partition.remote[2]
    assert RULES.out_of_sync_replicas(partition, now) == (2, 3)
    partition.transition(RULES.prepare_isr_shrink(partition, (3,)))
    assert RULES.out_of_sync_replicas(partition, now) == ()


def test_shrink_proposal() -> None:
    """§6 `prepareIsrShrink`: committed ISR − out-of-sync; the maximal ISR stays the committed one (§3)."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    proposal = RULES.prepare_isr_shrink(partition, (3,))
    assert isinstance(proposal, PendingShrinkIsr)
    assert proposal.sent.isr_ids == (1, 2) and proposal.maximal_isr == (1, 2, 3) and proposal.isr == (1, 2, 3)


def test_shrink_runs_on_the_half_lag_timer() -> None:
    """§6: the isr-expiration task runs every replica.lag.time.max.ms / 2, so a stalled follower is
    removed between 1× and 1.5× the lag time after it stopped being caught up."""
    cluster = new_cluster(lag_ms=10_000)
    cluster.hold(Selector("Fetch", 3))
    cluster.produce(TOPIC, 0, 1, 1)
    start = cluster.now_ms
    shrunk_at = None
    while shrunk_at is None and cluster.now_ms < start + 20_000:
        cluster.advance(100)
        if cluster.controller.partition(*TP).isr == (1, 2):
            shrunk_at = cluster.now_ms - start
    assert shrunk_at is not None and 10_000 <= shrunk_at <= 15_100


# ------------------------------------------------------------------------------------ §3, §7 HW


def test_hw_isr_is_the_maximal_isr() -> None:
    """§3 (KIP-497): expansion counts at once, shrink only when committed."""
    committed = CommittedPartitionState((1, 2))
    sent = LeaderAndIsr(1, 0, (), 0)
    assert RULES.hw_isr(committed) == (1, 2)
    assert RULES.hw_isr(PendingExpandIsr(3, sent, committed)) == (1, 2, 3)
    assert RULES.hw_isr(PendingShrinkIsr((2,), sent, committed)) == (1, 2)


def test_hw_candidate() -> None:
    """§7 step 3: ISR followers and caught-up eligible non-ISR followers hold the HW back (KAFKA-4485);
    an ineligible one does not (KAFKA-15021); an unknown LEO pins it (-1)."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    partition.log.append([(0, 100 + i) for i in range(10)])
    partition.transition(CommittedPartitionState((1, 2)))
    now = 20_000
    partition.remote[2] = ReplicaState(log_end_offset=8)
    partition.remote[3] = ReplicaState(log_end_offset=5, last_caught_up_time_ms=now, broker_epoch=-1)
    assert RULES.high_watermark_candidate(partition, now) == 5
    partition.remote[3] = ReplicaState(log_end_offset=5, last_caught_up_time_ms=0, broker_epoch=-1)
    assert RULES.high_watermark_candidate(partition, now) == 8
    partition.remote[3] = ReplicaState(log_end_offset=5, last_caught_up_time_ms=now, broker_epoch=None)
    assert RULES.high_watermark_candidate(partition, now) == 8
    partition.remote[2] = ReplicaState()
    assert RULES.high_watermark_candidate(partition, now) == -1


@pytest.mark.parametrize(("release", "gated"), [("3.5", False), ("3.7", True), ("4.1", True)])
def test_hw_does_not_move_under_min_isr_from_3_7(release: str, gated: bool) -> None:
    """§7.1 (KAFKA-15583): committed ISR below min(min.insync.replicas, RF) freezes the HW, 3.7+."""
    cluster = new_cluster(release, min_insync_replicas=2)
    partition = leader_partition(cluster)
    partition.transition(CommittedPartitionState((1,)))
    assert RULES.is_under_min_isr(partition) is gated
    partition.remote = {}
    partition.log.append([(0, 100)])
    assert partition.maybe_increment_hw() is not gated


def test_hw_only_moves_forward() -> None:
    """§7 step 4: the leader HW is monotonic within a leadership."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    partition.log.append([(0, 100), (0, 101)])
    partition.log.hw = 2
    partition.remote[2] = ReplicaState(log_end_offset=1)
    assert not partition.maybe_increment_hw()
    assert partition.log.hw == 2


# ------------------------------------------------------------------------------------ §8 acks


def test_acks_all_needs_the_committed_isr_at_append() -> None:
    """§8: acks=all with |committed ISR| < effective min ISR → NOT_ENOUGH_REPLICAS, nothing appended."""
    cluster = new_cluster(min_insync_replicas=2)
    partition = leader_partition(cluster)
    partition.transition(CommittedPartitionState((1,)))
    assert RULES.produce_error(partition, -1) is Error.NOT_ENOUGH_REPLICAS
    assert RULES.produce_error(partition, 1) is Error.NONE
    state = cluster.produce(TOPIC, 0, -1, 1)
    assert (state.status, state.error, partition.log.leo) == ("failed", "NOT_ENOUGH_REPLICAS", 0)


def test_acks_all_completion() -> None:
    """§8 `checkEnoughReplicasReachOffset`: wait for HW ≥ offset, then success iff the maximal ISR
    still has min ISR members, else NOT_ENOUGH_REPLICAS_AFTER_APPEND."""
    cluster = new_cluster(min_insync_replicas=2)
    partition = leader_partition(cluster)
    partition.log.append([(0, 100)])
    assert RULES.produce_completion(partition, 1) is None
    partition.log.hw = 1
    assert RULES.produce_completion(partition, 1) is Error.NONE
    partition.transition(CommittedPartitionState((1,)))
    assert RULES.produce_completion(partition, 1) is Error.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def test_acks_all_is_acknowledged_when_the_hw_passes() -> None:
    """§8 end to end: the request waits until every maximal-ISR member fetched the records."""
    cluster = new_cluster(min_insync_replicas=2)
    state = cluster.produce(TOPIC, 0, -1, 3)
    assert state.status == "pending"
    cluster.advance(600)
    assert state.status == "acked" and [a.offset for a in cluster.acked] == [0, 1, 2]


# ------------------------------------------------------------------------------------ §9 responses


def result(isr: tuple[int, ...], leader_epoch: int = 0, partition_epoch: int = 1) -> AlterPartitionPartitionResult:
    return AlterPartitionPartitionResult(0, Error.NONE, 1, leader_epoch, isr, partition_epoch)


def test_response_for_a_replaced_state_is_ignored() -> None:
    """§9 step 1: partitionState != proposed → ignore the response entirely."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    proposal = RULES.prepare_isr_shrink(partition, (3,))
    assert not RULES.response_is_current(partition, proposal)
    partition.transition(proposal)
    assert RULES.response_is_current(partition, proposal)


def test_success_handling() -> None:
    """§9 step 2: leader epoch ≠ local → stay pending; partition epoch older → stay pending; equal
    (KAFKA-12751) or newer → commit the ISR the controller returned (not the proposed one)."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    proposal = RULES.prepare_isr_shrink(partition, (3,))
    assert RULES.on_success(partition, proposal, result((1, 2), leader_epoch=1)) is None
    partition.partition_epoch = 2
    assert RULES.on_success(partition, proposal, result((1, 2), partition_epoch=1)) is None
    commit = RULES.on_success(partition, proposal, result((1,), partition_epoch=2))
    assert commit is not None and commit.state.isr == (1,) and commit.partition_epoch == 2


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (Error.OPERATION_NOT_ATTEMPTED, ErrorOutcome.REVERT),
        (Error.INELIGIBLE_REPLICA, ErrorOutcome.REVERT),
        (Error.UNKNOWN_TOPIC_OR_PARTITION, ErrorOutcome.WAIT),
        (Error.UNKNOWN_TOPIC_ID, ErrorOutcome.WAIT),
        (Error.FENCED_LEADER_EPOCH, ErrorOutcome.WAIT),
        (Error.INVALID_UPDATE_VERSION, ErrorOutcome.WAIT),
        (Error.INVALID_REQUEST, ErrorOutcome.WAIT),
        (Error.NEW_LEADER_ELECTED, ErrorOutcome.WAIT),
        (Error.UNKNOWN_SERVER_ERROR, ErrorOutcome.RETRY),
    ],
)
def test_error_table(error: Error, outcome: ErrorOutcome) -> None:
    """§9 step 3 table."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    assert RULES.on_error(partition, RULES.prepare_isr_shrink(partition, (3,)), error) is outcome


def test_error_outcomes_applied() -> None:
    """§9 step 3: REVERT restores lastCommittedState; WAIT stays pending; RETRY resubmits."""
    cluster = new_cluster()
    cluster.hold(Selector("AlterPartition", 1))
    partition = leader_partition(cluster)
    committed = partition.state
    for error, expected_pending in (
        (Error.INELIGIBLE_REPLICA, False), (Error.FENCED_LEADER_EPOCH, True), (Error.UNKNOWN_SERVER_ERROR, True),
    ):
        partition.transition(committed)
        cluster.brokers[1].manager.items.clear()
        proposal = RULES.prepare_isr_shrink(partition, (3,))
        partition.transition(proposal)
        partition.on_alter_partition_result(proposal, error)
        assert (partition.state == proposal) is expected_pending
    assert [item[0] for item in cluster.brokers[1].manager.outstanding()] == [TP]


def test_a_second_proposal_is_refused_and_reverted() -> None:
    """§9/§12: while the manager holds an item for the partition, a new proposal gets
    OPERATION_NOT_ATTEMPTED and the partition reverts to its committed state."""
    cluster = new_cluster()
    cluster.hold(Selector("AlterPartition", 1))
    partition = leader_partition(cluster)
    first = RULES.prepare_isr_shrink(partition, (3,))
    partition.transition(first)
    partition.submit(first)
    committed = CommittedPartitionState((1, 2, 3))
    partition.transition(committed)
    second = RULES.prepare_isr_shrink(partition, (2,))
    partition.transition(second)
    partition.submit(second)
    assert partition.state == committed
    assert len(cluster.brokers[1].manager.outstanding()) == 1


def test_hw_recomputed_after_a_committed_shrink() -> None:
    """§7 / §9 (KAFKA-13091): a committed shrink advances the HW without further traffic."""
    cluster = new_cluster(min_insync_replicas=1)
    cluster.hold(Selector("Fetch", 3))
    state = cluster.produce(TOPIC, 0, -1, 1)
    cluster.advance(16_000)
    assert cluster.controller.partition(*TP).isr == (1, 2)
    assert state.status == "acked" and leader_partition(cluster).log.hw == 1


# ------------------------------------------------------------------------------------ §10 metadata


def test_older_partition_epoch_metadata_is_dropped() -> None:
    """§10: makeLeader/makeFollower drop an update whose partition epoch is older than the local one."""
    cluster = new_cluster()
    partition = leader_partition(cluster)
    partition.partition_epoch = 5
    older = PartitionState((1, 2, 3), (1,), 1, 0, 4)
    assert not RULES.accepts_metadata(partition, older)
    partition.make_leader(older)
    assert partition.state.isr == (1, 2, 3)


def test_new_metadata_supersedes_a_pending_proposal() -> None:
    """§10: new metadata overwrites the pending state; the in-flight item is not cancelled
    (KAFKA-12686); its late response is ignored; the next fetch re-proposes."""
    cluster = new_cluster()
    cluster.hold(Selector("Fetch", 3))
    cluster.hold(Selector("AlterPartition", 1))
    cluster.produce(TOPIC, 0, 1, 1)
    cluster.advance(16_000)
    partition = leader_partition(cluster)
    assert isinstance(partition.state, PendingShrinkIsr)
    cluster.create_topic("other", [[1, 2, 3]])
    cluster.controller.reassign(TOPIC, 0, [1, 2, 3])
    cluster.controller.fence_stale_broker(3)
    cluster.controller_changed()
    cluster.settle()
    assert partition.state == CommittedPartitionState((1, 2))
    assert [item[0] for item in cluster.brokers[1].manager.outstanding()] == [TP]
    cluster.release(Selector("AlterPartition", 1))
    cluster.settle()
    assert partition.state == CommittedPartitionState((1, 2)) and not cluster.brokers[1].manager.outstanding()


def test_new_leader_epoch_records_the_epoch_start_offset() -> None:
    """§10 `makeLeader` with a higher epoch: leaderEpochStartOffset := LEO, written to the epoch
    cache (KAFKA-7415); followers reset (§4)."""
    cluster = new_cluster()
    cluster.produce(TOPIC, 0, 1, 4)
    cluster.advance(600)
    cluster.crash(1)
    cluster.advance(10_000)
    new_leader = leader_partition(cluster)
    assert new_leader.broker_id == 2 and new_leader.leader_epoch == 1
    assert new_leader.epoch_start_offset == 4 and new_leader.log.epochs[-1] == (1, 4)
    assert new_leader.remote[3].log_end_offset in (-1, 4)
