"""P-1IF: at most one AlterPartition in flight per broker, one proposal per partition (leader.md
§2, §12). Only the ground truth shows in-flight requests.
"""

from __future__ import annotations

from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.ground_truth import ClusterObservation, TopicPartition


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-1IF: per broker at most one AlterPartition request in flight, and per partition at most
    one outstanding proposal (queued or in flight) (leader.md §2, §12)."""
    violations = []
    for broker, view in observation.brokers.items():
        if not view.alive:
            continue
        if view.alter_partition_requests > 1:
            violations.append(Violation(
                "P-1IF", observation.step,
                f"broker {broker} has {view.alter_partition_requests} AlterPartition requests in flight",
                {"broker": broker, "requests": view.alter_partition_requests},
            ))
        proposals: dict[TopicPartition, set[int]] = {}
        for tp, item, _ in view.alter_partition_items:
            proposals.setdefault(tp, set()).add(item)
        for tp, items in proposals.items():
            if len(items) > 1:
                violations.append(Violation(
                    "P-1IF", observation.step,
                    f"{tp_name(tp)}: broker {broker} has {len(items)} outstanding ISR proposals",
                    {"partition": tp_name(tp), "broker": broker, "proposals": sorted(items)},
                ))
    return violations


PROPERTY = Property("P-1IF", ground_truth=ground_truth)
