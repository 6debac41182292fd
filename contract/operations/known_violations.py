"""Known violations: a property the ground truth breaks the way real Kafka breaks it, because the
reference follows Kafka there (docs/known-divergences.md, "Known Kafka bugs the reference
reproduces"). Each is matched by a rule on the observation where the violation was found, never
by its signature string: the same property broken another way is still a finding.

A matched finding keeps everything it says and gains the rule's name (`Finding.known`), exactly
as a known divergence does (`known_divergences.py`); a run whose findings all match is recorded
as `known`, and a campaign with nothing else exits 0 ("known divergences only").
"""

from __future__ import annotations

import dataclasses

from isrcheck.contract.history.ground_truth import PROPOSAL_REPLACED_AT_EQUAL_EPOCH, ClusterObservation
from isrcheck.contract.operations.findings import VIOLATION, Finding
from isrcheck.contract.operations.known_rule import KnownRule, partition_of


def stale_expansion_admitted(finding: Finding, observation: ClusterObservation) -> bool:
    """KB1: a P-HWV violation "ISR member M has LEO below the leader's HW" where M's latest entry
    into the partition's ISR was an AlterPartition the controller accepted, at the request's
    partition epoch, after its leader had stopped counting it and committed that same partition
    epoch: metadata of equal partition epoch replaced the pending expansion
    (`Partition.makeLeader` applies a state whose partition epoch is not smaller than its own,
    3.3.2-4.1.1), the HW moved on without M, and the request still carried the controller's
    current partition epoch (`ReplicationControlManager.alterPartition`). Real Kafka loses
    acknowledged records this way (docs/upstream/equal-epoch-isr-expansion.md). A member below
    the HW that entered the ISR any other way — a proposal its leader still held, one it replaced
    by a newer proposal (KAFKA-12686's concurrent items), one a controller accepted at a stale
    partition epoch — is a finding."""
    if finding.kind != VIOLATION or finding.property != "P-HWV" or "member_leo" not in finding.evidence:
        return False
    tp: tuple[str, int] | None = partition_of(finding.evidence.get("partition"))
    member = finding.evidence.get("member")
    if tp is None or not isinstance(member, int):
        return False
    entries = [a for a in observation.admissions if (a.topic, a.partition) == tp and a.broker == member]
    return bool(entries) and entries[-1].proposal == PROPOSAL_REPLACED_AT_EQUAL_EPOCH


KNOWN_VIOLATIONS: tuple[KnownRule[ClusterObservation], ...] = (
    KnownRule(
        name="equal-epoch-stale-expansion",
        title="metadata of equal partition epoch replaces a leader's pending ISR expansion; the "
              "controller then accepts the stale expansion and admits a member below the HW",
        source="Partition.makeLeader (3.3.2-4.1.1: skips only partitionEpoch < local); "
               "docs/upstream/equal-epoch-isr-expansion.md; docs/known-divergences.md KB1",
        matches=stale_expansion_admitted,
    ),
)


def classified_violation(finding: Finding, observation: ClusterObservation | None) -> Finding:
    """`finding` marked with the first rule that matches it on `observation`, or unchanged."""
    if observation is None or finding.kind != VIOLATION:
        return finding
    for rule in KNOWN_VIOLATIONS:
        if rule.matches(finding, observation):
            return dataclasses.replace(finding, known=rule.name)
    return finding
