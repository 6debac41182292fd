"""Known divergences: where real Kafka differs from the reference for a reason triaged as Kafka's
own (docs/known-divergences.md, "Open divergences"), each matched by a rule on the run.

A rule is a predicate on the step where the two sides parted — its request, both answers and the
reference's state before it — never on the finding's signature string: the same error code from
another cause must still be a finding. A finding a rule matches keeps everything it says and
gains the rule's name (`Finding.known`); a run whose findings all match is recorded as `known`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.operations.findings import DIVERGENCE, Finding
from isrcheck.contract.operations.known_rule import KnownRule, partition_of


@dataclass(frozen=True)
class DivergingStep:
    """What a rule may read: the step where a divergence was found, as both sides saw it."""

    op: str
    args: dict[str, Any]
    reference_before: ControllerObservation
    """The reference's observation before the step (the partitions and brokers in play)."""
    reference: dict[str, Any]
    target: dict[str, Any]


def replication_factors(before: ControllerObservation, topic: str) -> dict[int, int]:
    """Partition → number of replicas, for the topic's existing partitions in an observation."""
    return {partition: len(state["replicas"]) for (name, partition), state in before.partitions.items()
            if name == topic and state.get("exists", True) and isinstance(state.get("replicas"), list)}


def factor_from_any_partition(finding: Finding, step: DivergingStep) -> bool:
    """KD1: ReplicationControlManager.createPartitions (3.3.2-4.1.1) checks the new replica lists
    against `topicInfo.parts.values().iterator().next()` — a hash-table slot's last key, not
    partition 0 as the reference (controller.md §5). It can only matter when the existing
    partitions have different replication factors, and then each answer must be the one some
    existing partition's factor gives: all new lists one length, which is an existing factor, and
    one side accepting (NONE) while the other refuses (INVALID_REPLICA_ASSIGNMENT). The state
    differences of that step are the partitions only one side created."""
    if step.op != "create_partitions" or finding.kind != DIVERGENCE:
        return False
    topic, assignment = step.args.get("topic"), step.args.get("assignment")
    if not isinstance(topic, str) or not isinstance(assignment, list) or not assignment:
        return False
    factors = replication_factors(step.reference_before, topic)
    lengths = {len(replicas) for replicas in assignment if isinstance(replicas, list)}
    if len(set(factors.values())) < 2 or len(lengths) != 1 or lengths.pop() not in factors.values():
        return False
    answers = {step.reference.get("error"), step.target.get("error")}
    if answers != {"NONE", "INVALID_REPLICA_ASSIGNMENT"}:
        return False
    if finding.field == "error":
        return True
    created: tuple[str, int] | None = partition_of(finding.evidence.get("partition"))
    if finding.field is None or not finding.field.startswith("partition.") or created is None:
        return False
    return created[0] == topic and created[1] >= len(factors)


KNOWN_DIVERGENCES: tuple[KnownRule[DivergingStep], ...] = (
    KnownRule(
        name="create-partitions-first-value-factor",
        title="CreatePartitions checks the new replica lists against the replication factor of the "
              "first value of a hash map (a hash-table slot's last key), not partition 0's",
        source="ReplicationControlManager.createPartitions (3.3.2-4.1.1): "
               "topicInfo.parts.values().iterator().next(); docs/known-divergences.md KD1",
        matches=factor_from_any_partition,
    ),
)
RULES_BY_NAME = {rule.name: rule for rule in KNOWN_DIVERGENCES}


def known_rule(finding: Finding, step: DivergingStep) -> str | None:
    """The name of the first rule that matches `finding` at `step`, or None (a finding)."""
    for rule in KNOWN_DIVERGENCES:
        if rule.matches(finding, step):
            name: str = rule.name
            return name
    return None


def classified(findings: list[Finding], step: DivergingStep) -> list[Finding]:
    """The findings of one step with each divergence a rule matches marked `known`; the others
    unchanged. Whether the run is only known is for its outcome to say (every finding known)."""
    return [finding if finding.kind != DIVERGENCE or (rule := known_rule(finding, step)) is None
            else dataclasses.replace(finding, known=rule) for finding in findings]
