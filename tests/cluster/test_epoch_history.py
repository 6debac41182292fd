"""The controller's history the observation carries for P-LEAD: the ISR committed with each
partition epoch (`ClusterObservation.epoch_isrs`), which a leader's committed ISR must equal at
the leader's own partition epoch (leader.md §2)."""

from __future__ import annotations

from cluster_helpers import TOPIC, leader_partition, new_cluster
from isrcheck.conformance.properties.monitor import PropertyMonitor
from isrcheck.conformance.properties.p_lead import ground_truth as p_lead
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.rpc import FETCH, HEARTBEAT


def test_each_partition_epoch_keeps_the_isr_committed_with_it() -> None:
    """Created with ISR {1,2,3} at epoch 0; the leader's shrink of the silent follower 3 commits
    {1,2} at 1; fencing 2 removes it at 2. Each epoch keeps its own ISR, and the leader holds the
    one of the epoch it is at."""
    cluster = new_cluster(lag_ms=1_000)
    cluster.hold(Selector(FETCH, 3, None))
    cluster.produce(TOPIC, 0, 1, 1)
    cluster.advance(3_000)
    cluster.hold(Selector(HEARTBEAT, 2, None))
    cluster.advance(12_000)
    history = {key: set(isr) for key, isr in cluster.observe().epoch_isrs.items() if key[0] == TOPIC}
    assert history == {(TOPIC, 0, 0): {1, 2, 3}, (TOPIC, 0, 1): {1, 2}, (TOPIC, 0, 2): {1}}
    leader = leader_partition(cluster)
    assert (leader.partition_epoch, set(leader.state.isr)) == (2, {1})
    monitor = PropertyMonitor()
    assert monitor.observe(cluster.observe()) == [] and p_lead(cluster.observe(), monitor.history) == []
