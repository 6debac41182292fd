"""P-LOG (log matching, KIP-101/279): replicas agree on the log. On a simulation's ground truth,
after every step: two replicas with the same epoch at an offset hold identical logs up to it. On a
black-box cluster history, after the heal: the in-sync replicas hold the same records (offset,
leader epoch, key, value) below the high watermark — judged on the `replica_logs` entry the
engine records when the target can read every replica's log (`cluster_history.finish`),
unknown without it.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import HistoryConfig, observations, ops
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


def judged_partitions(history: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each `replica_logs` entry read after the (last) heal, with the partition's last view observed
    between the heal and it that has a leader and a high watermark; an entry the target failed
    to read, one missing a member of that view's ISR, or one without such a view judges nothing."""
    heals = [e["i"] for e in ops(history) if e["op"] == "heal"]
    if not heals:
        return []
    judged = []
    for entry in history:
        if entry["type"] != "replica_logs" or entry["i"] < heals[-1] or not isinstance(entry.get("replicas"), dict):
            continue
        seen = [e["view"] for e in observations(history) if heals[-1] < e["i"] < entry["i"]
                and e["partition"] == entry["partition"] and e["view"].get("exists")]
        if (seen and seen[-1].get("hw") is not None and int(seen[-1].get("leader", -1)) >= 0
                and all(str(b) in entry["replicas"] for b in seen[-1].get("isr", []))):
            judged.append((entry, seen[-1]))
    return judged


def first_difference(log: list[list[Any]], other: list[list[Any]], hw: int) -> tuple[int, Any, Any] | None:
    """The lowest offset below `hw` where two replicas' logs differ — a record that is not the same
    in both, or that one holds and the other does not — counted from the later of their first
    offsets (a log may start later: retention, a replica rebuilt from the leader's log start)."""
    mine = {int(r[0]): list(r) for r in log if int(r[0]) < hw}
    theirs = {int(r[0]): list(r) for r in other if int(r[0]) < hw}
    start = max(min(mine, default=0), min(theirs, default=0))
    for offset in range(start, hw):
        if mine.get(offset) != theirs.get(offset):
            return offset, mine.get(offset), theirs.get(offset)
    return None


def views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-LOG after the heal (KIP-101/279; leader.md §15: what is below the high watermark is
    committed and every in-sync replica holds it): every member of the ISR observed after the
    heal holds the leader's records below the high watermark observed then — the same offsets,
    leader epochs, keys and values. A follower copies the leader's batches as they are
    (`ReplicaFetcherThread.processPartitionData` appends them with their leader epochs, 3.9.0)
    and truncates a divergent suffix to the leader's epoch boundary before fetching
    (`AbstractFetcherThread.truncateToEpochEndOffsets`), so no difference below the high
    watermark is legitimate. Records past it may still differ; replicas out of the ISR are not
    judged (not yet truncated)."""
    violations = []
    for entry, view in judged_partitions(history):
        logs, hw = entry["replicas"], int(view["hw"])
        members = [str(b) for b in view.get("isr", [])]
        leader = str(view["leader"])
        if not members:
            continue
        reference = leader if leader in members else members[0]
        for member in members:
            if member == reference:
                continue
            found = first_difference(logs[reference], logs[member], hw)
            if found is None:
                continue
            offset, held, other = found
            violations.append(Violation(
                "P-LOG", entry["i"],
                f"{entry['partition']}: in-sync replicas {reference} and {member} differ at offset {offset} below "
                f"the high watermark {hw}: {held} vs {other}",
                {"partition": entry["partition"], "brokers": [int(reference), int(member)], "offset": offset,
                 "hw": hw, "isr": list(view.get("isr", [])), "records": [held, other]}))
    return violations


def views_judged(history: list[dict[str, Any]]) -> bool:
    """Judged only on a history with every replica's log read after the heal."""
    return bool(judged_partitions(history))


PROPERTY = Property("P-LOG", ground_truth=ground_truth, views=views, views_judged=views_judged)
