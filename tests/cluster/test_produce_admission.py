"""P-ADM on the simulated cluster's ground truth (leader.md §8; Kafka 3.9.0
`Partition.appendRecordsToLeader`): the reference's leaders record each produce admission decision
with the committed ISR size and min ISR they read, P-ADM holds on them, and three one-rule variations
of `LeaderRules.produce_error` — the two surviving cosmic-ray mutants of the mutation score (`<=` for
`<`, `acks == -0` for `acks == -1`) and one reading the maximal ISR of a pending expansion — break it."""

from __future__ import annotations

import pytest
from cluster_helpers import TOPIC, leader_partition, new_cluster
from isrcheck.conformance.properties.monitor import PropertyMonitor
from isrcheck.contract.history.ground_truth import ProduceDecision
from isrcheck.contract.history.ground_truth_json import ground_truth_from_json, ground_truth_json
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.isr_state import CommittedPartitionState, IsrState, LeaderAndIsr, PendingExpandIsr
from isrcheck.reference_impl.leader_rules import LeaderRules
from isrcheck.reference_impl.partition import Partition


class RefusesAtMinIsr(LeaderRules):
    """cosmic-ray's `<` → `<=`: acks=all refused when the ISR has exactly min ISR members."""

    def produce_error(self, partition: Partition, acks: int) -> Error:
        if acks == -1 and len(partition.state.isr) <= partition.effective_min_isr:
            return Error.NOT_ENOUGH_REPLICAS
        return Error.NONE


class ChecksAcksZero(LeaderRules):
    """cosmic-ray's `-1` → `-0`: the check applies to acks=0, never to acks=all."""

    def produce_error(self, partition: Partition, acks: int) -> Error:
        if acks == -0 and len(partition.state.isr) < partition.effective_min_isr:
            return Error.NOT_ENOUGH_REPLICAS
        return Error.NONE


class ReadsMaximalIsr(LeaderRules):
    """The check reads the maximal ISR (a pending expansion counts) instead of the committed one."""

    def produce_error(self, partition: Partition, acks: int) -> Error:
        if acks == -1 and len(partition.state.maximal_isr) < partition.effective_min_isr:
            return Error.NOT_ENOUGH_REPLICAS
        return Error.NONE


COMMITTED_ONE = CommittedPartitionState((1,))
STATES: dict[str, IsrState] = {
    "full": CommittedPartitionState((1, 2, 3)),
    "at_min": CommittedPartitionState((1, 2)),
    "below_min": COMMITTED_ONE,
    "expanding": PendingExpandIsr(2, LeaderAndIsr(1, 0, (), 0), COMMITTED_ONE),
}


def produce_under(cluster: Cluster, state: str, acks: int) -> tuple[str, ProduceDecision]:
    """The leader's ISR set to `state` by hand, one produce: (the producer's status, the recorded
    decision). The controller's ISR is left as it was, which P-LEAD would flag: the monitors here
    judge P-ADM alone."""
    partition = leader_partition(cluster)
    assert partition.broker.id == 1
    partition.transition(STATES[state])
    before = len(cluster.observe().produce_decisions)
    produced = cluster.produce(TOPIC, 0, acks, 1)
    decisions = cluster.observe().produce_decisions
    assert len(decisions) == before + 1
    return produced.error or produced.status, decisions[-1]


@pytest.mark.parametrize(("state", "acks", "isr_size", "outcome"), [
    ("full", -1, 3, "APPENDED"),
    ("at_min", -1, 2, "APPENDED"),
    ("below_min", -1, 1, "NOT_ENOUGH_REPLICAS"),
    ("below_min", 1, 1, "APPENDED"),
    ("below_min", 0, 1, "APPENDED"),
    ("expanding", -1, 1, "NOT_ENOUGH_REPLICAS"),  # the committed ISR, not the maximal (1, 2)
])
def test_the_reference_records_each_decision_and_p_adm_holds(
    state: str, acks: int, isr_size: int, outcome: str
) -> None:
    cluster = new_cluster(min_insync_replicas=2)
    monitor = PropertyMonitor(["P-ADM"])
    monitor.observe(cluster.observe())
    status, decision = produce_under(cluster, state, acks)
    assert (decision.topic, decision.partition, decision.leader) == (TOPIC, 0, 1)
    assert (decision.acks, decision.isr_size, decision.min_isr, decision.outcome) == (acks, isr_size, 2, outcome)
    assert (status == "NOT_ENOUGH_REPLICAS") == (outcome == "NOT_ENOUGH_REPLICAS")
    assert monitor.observe(cluster.observe()) == []


@pytest.mark.parametrize(("rules", "state", "acks", "outcome"), [
    (RefusesAtMinIsr(), "at_min", -1, "NOT_ENOUGH_REPLICAS"),
    (ChecksAcksZero(), "below_min", -1, "APPENDED"),
    (ChecksAcksZero(), "below_min", 0, "NOT_ENOUGH_REPLICAS"),
    (ReadsMaximalIsr(), "expanding", -1, "APPENDED"),
])
def test_a_mutated_admission_rule_breaks_p_adm(rules: LeaderRules, state: str, acks: int, outcome: str) -> None:
    cluster = new_cluster(min_insync_replicas=2, leader_rules=rules)
    monitor = PropertyMonitor(["P-ADM"])
    monitor.observe(cluster.observe())
    _, decision = produce_under(cluster, state, acks)
    assert decision.outcome == outcome
    found = monitor.observe(cluster.observe())
    assert [v.property for v in found] == ["P-ADM"]
    assert found[0].evidence["outcome"] == outcome and found[0].evidence["expected"] != outcome


def test_decisions_survive_a_record_and_old_records_load_without_them() -> None:
    cluster = new_cluster(min_insync_replicas=2)
    produce_under(cluster, "below_min", -1)
    observation = cluster.observe()
    data = ground_truth_json(observation)
    assert ground_truth_from_json(data).produce_decisions == observation.produce_decisions != ()
    del data["produce_decisions"]
    assert ground_truth_from_json(data).produce_decisions == ()
