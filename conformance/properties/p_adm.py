"""P-ADM: a leader admits a produce request against its ISR exactly as the protocol says
(leader.md §8; Kafka 3.9.0 `Partition.appendRecordsToLeader`): an acks=all request is refused
with NOT_ENOUGH_REPLICAS — nothing appended — exactly when the leader's committed ISR has fewer
members than the min ISR in effect (min(min.insync.replicas, replication factor),
`Partition.effectiveMinIsr`); acks=0 and acks=1 requests are never refused for the ISR's size.
Both directions matter: an append below the min ISR breaks the acks=all promise's precondition,
a refusal at or above it is an outage Kafka does not have.

The committed ISR is the one the check reads: during a pending expansion Kafka's
`PendingExpandIsr.isr` is the last committed ISR, not the maximal one (`maximalIsr` counts only
for completing the request, §8 `checkEnoughReplicasReachOffset`).

Judged on the ground truth only (each leader's decisions with the ISR size and min ISR it read):
a black box shows a refusal but not the ISR its leader read at that instant, so for a black-box
run the property is unknown.
"""

from __future__ import annotations

from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History
from isrcheck.contract.history.ground_truth import ClusterObservation, ProduceDecision

APPENDED = "APPENDED"
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
ACKS_ALL = -1


def expected_outcome(decision: ProduceDecision) -> str:
    """§8: refused iff acks=all and |committed ISR| < min ISR in effect."""
    if decision.acks == ACKS_ALL and decision.isr_size < decision.min_isr:
        return NOT_ENOUGH_REPLICAS
    return APPENDED


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-ADM: every produce admission decision since the previous observation follows §8."""
    seen = 0 if history.previous is None else len(history.previous.produce_decisions)
    violations = []
    for decision in observation.produce_decisions[seen:]:
        expected = expected_outcome(decision)
        if decision.outcome == expected:
            continue
        where = f"{decision.topic}-{decision.partition}"
        violations.append(Violation(
            "P-ADM", decision.step,
            f"{where}: leader {decision.leader} answered {decision.outcome} to an acks={decision.acks} produce with "
            f"{decision.isr_size} ISR members and min ISR {decision.min_isr} (expected {expected})",
            {"partition": where, "leader": decision.leader, "acks": decision.acks, "isr_size": decision.isr_size,
             "min_isr": decision.min_isr, "outcome": decision.outcome, "expected": expected},
        ))
    return violations


PROPERTY = Property("P-ADM", ground_truth=ground_truth)
