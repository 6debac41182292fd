"""P-SHRINK on the simulated cluster's ground truth (leader.md §6; Kafka 3.9.0
`Partition.maybeShrinkIsr`, `Partition.getOutOfSyncReplicas`, `ReplicaState.isCaughtUp`, the
`isr-expiration` task of `ReplicaManager.startup`): the reference's leader drops a follower that
stopped fetching within replica.lag.time.max.ms plus one check period and P-SHRINK holds; leader
rules that never find the follower out of sync — two of them cosmic-ray survivors of the mutation
score — break it, one of them only when the stuck follower keeps fetching the same offset."""

from __future__ import annotations

from cluster_helpers import TOPIC, TP, leader_partition, new_cluster
from isrcheck.conformance.properties.checker import Violation
from isrcheck.conformance.properties.monitor import PropertyMonitor
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.contract.history.ground_truth_json import ground_truth_from_json, ground_truth_json
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.leader_rules import LeaderRules
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.partition import Partition
from isrcheck.reference_impl.replica_state import ReplicaState
from isrcheck.reference_impl.rpc import FETCH, FetchPartition

LAG_MS = 10_000
PERIOD_MS = LAG_MS // 2
STUCK = 3


class CaughtUpAtOrPastTheEnd(LeaderRules):
    """Caught up whatever the time: only the log end offset test of `is_caught_up` is kept."""

    def is_caught_up(self, state: ReplicaState, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        return state.log_end_offset == leader_end_offset or max_lag_ms > 0


class NoShrinkCandidates(LeaderRules):
    """cosmic-ray ZeroIterationForLoop in `out_of_sync_replicas` (leader_rules.py:185): no member is examined."""

    def out_of_sync_replicas(self, partition: Partition, now_ms: int) -> tuple[int, ...]:
        return ()


class CaughtUpWhileBehind(LeaderRules):
    """cosmic-ray `>=` → `is not` in `updated_replica_state` (leader_rules.py:88): a fetch below
    the leader's end offset counts as caught up now."""

    def updated_replica_state(
        self, old: ReplicaState, fetch_offset: int, fetch_time_ms: int, leader_end_offset: int, broker_epoch: int
    ) -> ReplicaState:
        state = super().updated_replica_state(old, fetch_offset, fetch_time_ms, leader_end_offset, broker_epoch)
        if fetch_offset is not leader_end_offset:
            state = ReplicaState(state.log_end_offset, state.log_start_offset, state.last_fetch_leader_log_end_offset,
                                 state.last_fetch_time_ms, max(old.last_caught_up_time_ms, fetch_time_ms),
                                 state.broker_epoch)
        return state


def cut_off_follower(
    cluster: Cluster, monitor: PropertyMonitor, stuck_fetches: bool = False
) -> list[ClusterObservation]:
    """Follower 3's fetches are held and a record is written, then 3 × lag pass in 100 ms steps,
    observed after each; with `stuck_fetches` the leader is also handed a Fetch from 3 at offset 0
    every 500 ms (a follower that fetches but never appends)."""
    leader = leader_partition(cluster)
    assert leader.broker_id == 1 and STUCK in leader.state.isr
    cluster.hold(Selector(FETCH, STUCK))
    cluster.produce(TOPIC, 0, 1, 1)
    observations = []
    for tick in range(3 * LAG_MS // 100):
        cluster.advance(100)
        if stuck_fetches and tick % 5 == 0 and leader.role == "leader":
            fetch = FetchPartition(TOPIC, 0, 0, -1, leader.leader_epoch)
            leader.handle_follower_fetch(fetch, STUCK, cluster.brokers[STUCK].epoch)
        observation = cluster.observe()
        monitor.observe(observation)
        observations.append(observation)
    return observations


def shrink_violations(rules: LeaderRules | None = None, stuck_fetches: bool = False) -> tuple[Cluster, list[Violation]]:
    cluster = new_cluster(lag_ms=LAG_MS, **({} if rules is None else {"leader_rules": rules}))
    monitor = PropertyMonitor(["P-SHRINK"])
    cut_off_follower(cluster, monitor, stuck_fetches)
    return cluster, monitor.violations


def test_the_reference_drops_the_cut_off_follower_within_the_bound_and_p_shrink_holds() -> None:
    cluster = new_cluster(lag_ms=LAG_MS)
    monitor = PropertyMonitor(["P-SHRINK"])
    observations = cut_off_follower(cluster, monitor)
    assert monitor.violations == []
    registration = cluster.controller.partition(*TP)
    assert registration is not None and STUCK not in registration.isr
    # the property was armed: the leader reported 3 behind while 3 was in its ISR, and the shrink
    # came after 3 had been out of sync (lag) and before one more check period had passed
    armed = [o.now_ms for o in observations
             if (view := o.replica(1, TP)) and STUCK in view.isr and any(f.broker == STUCK for f in view.behind)]
    assert armed
    dropped = next(o.now_ms for o in observations if STUCK not in (o.replica(1, TP) or o.replica(2, TP)).isr)
    assert LAG_MS < dropped - armed[0] <= LAG_MS + PERIOD_MS + 200


def test_p_shrink_survives_a_record_round_trip() -> None:
    cluster = new_cluster(lag_ms=LAG_MS)
    observations = cut_off_follower(cluster, PropertyMonitor(["P-SHRINK"]))
    behind = next(o for o in observations if o.replica(1, TP) and o.replica(1, TP).behind)  # type: ignore[union-attr]
    again = ground_truth_from_json(ground_truth_json(behind))
    assert again.replica(1, TP) == behind.replica(1, TP)
    assert again.brokers[1].replica_lag_time_max_ms == LAG_MS


def test_p_shrink_finds_a_leader_that_never_sees_the_follower_out_of_sync() -> None:
    for rules in (CaughtUpAtOrPastTheEnd(), NoShrinkCandidates()):
        cluster, violations = shrink_violations(rules)
        registration = cluster.controller.partition(*TP)
        assert registration is not None and STUCK in registration.isr, type(rules).__name__
        assert violations, type(rules).__name__
        first = violations[0]
        assert first.property == "P-SHRINK"
        assert first.evidence["follower"] == STUCK and first.evidence["leader"] == 1
        # judged at the first observation past the bound, not before
        assert 0 < first.evidence["late_ms"] <= 100


def test_p_shrink_finds_a_stuck_follower_counted_as_caught_up_by_its_fetches() -> None:
    _, reference = shrink_violations(stuck_fetches=True)
    assert reference == []
    _, violations = shrink_violations(CaughtUpWhileBehind(), stuck_fetches=True)
    assert [v.evidence["follower"] for v in violations[:1]] == [STUCK]
    assert violations[0].evidence["fetch_offset"] == 0
