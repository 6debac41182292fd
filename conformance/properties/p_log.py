"""P-LOG (log matching, KIP-101/279): two replicas with the same epoch at an offset hold identical
logs up to it. Only the ground truth shows replicas' logs.
"""

from __future__ import annotations

from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.ground_truth import ClusterObservation, ReplicaView, TopicPartition


def _matching_prefix_violation(a: ReplicaView, b: ReplicaView) -> int | None:
    """The highest offset where both logs hold the same epoch, if their prefixes up to it differ."""
    left, right = a.log, b.log
    shorter, longer = (left, right) if len(left) <= len(right) else (right, left)
    if shorter == longer[:len(shorter)]:
        return None
    index = len(shorter) - 1
    while index >= 0 and left[index][0] != right[index][0]:
        index -= 1
    if index < 0 or left[:index + 1] == right[:index + 1]:
        return None
    return index


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-LOG (log matching, KIP-101/279): two replicas with the same epoch at an offset hold
    identical logs up to it."""
    by_partition: dict[TopicPartition, list[ReplicaView]] = {}
    for view in observation.replicas.values():
        by_partition.setdefault(view.tp, []).append(view)
    violations = []
    for tp, views in by_partition.items():
        views.sort(key=lambda v: v.broker)
        for i, a in enumerate(views):
            for b in views[i + 1:]:
                offset = _matching_prefix_violation(a, b)
                if offset is None:
                    continue
                first = next(k for k in range(offset + 1) if a.log[k] != b.log[k])
                violations.append(Violation(
                    "P-LOG", observation.step,
                    f"{tp_name(tp)}: brokers {a.broker} and {b.broker} both hold epoch {a.log[offset][0]} at offset "
                    f"{offset} but differ at offset {first}",
                    {"partition": tp_name(tp), "brokers": [a.broker, b.broker], "offset": offset,
                     "first_difference": first, "records": [list(a.log[first]), list(b.log[first])]},
                ))
    return violations


PROPERTY = Property("P-LOG", ground_truth=ground_truth)
