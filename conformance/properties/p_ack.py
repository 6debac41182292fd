"""P-ACK: every record acknowledged to an acks=all producer survives (bugs.md property table;
KIP-903). On the ground truth: it is in the log of every leader established after it; on a
black-box history: it is read back, at its offset, after the heal.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import HistoryConfig, exposure_points, ops
from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.ground_truth import ClusterObservation, TopicPartition


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-ACK: every record acknowledged to an acks=all producer is in the log of every leader
    established after it (partitions with an unclean election someone allowed are exempt: KIP-106
    makes the loss the operator's choice there, bugs.md B14)."""
    by_partition: dict[TopicPartition, list[Any]] = {}
    for acked in observation.acked:
        by_partition.setdefault((acked.topic, acked.partition), []).append(acked)
    violations = []
    for tp, records in by_partition.items():
        if tp in observation.unclean:
            continue
        leader = observation.established_leader(tp)
        if leader is None:
            continue
        log = leader.log
        for acked in records:
            held = log[acked.offset] if acked.offset < len(log) else None
            if held is None or held[1] != acked.record:
                violations.append(Violation(
                    "P-ACK", observation.step,
                    f"{tp_name(tp)}: record {acked.record} acknowledged at offset {acked.offset} is not in the log "
                    f"of leader {leader.broker} (epoch {leader.leader_epoch})",
                    {"partition": tp_name(tp), "offset": acked.offset, "record": acked.record,
                     "request": acked.request, "leader": leader.broker, "leader_epoch": leader.leader_epoch,
                     "leader_holds": None if held is None else list(held)},
                ))
    return violations


def views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-ACK: each acks=all acknowledgement (value at offset) is read back by the last consume."""
    exposed = exposure_points(history, config)
    read: dict[str, dict[str, str]] = {}
    for e in ops(history):
        if e["op"] == "consume" and "records" in e["result"]:
            for partition, records in e["result"]["records"].items():
                read[f"{e['args']['topic']}-{partition}"] = records
    violations = []
    for e in ops(history):
        if e["op"] != "produce" or str(e["args"].get("acks", "all")) != "all":
            continue
        partition = f"{e['args']['topic']}-{int(e['args'].get('partition', 0))}"
        if partition not in read:
            continue  # never read back (the run ended early): nothing to judge
        if any(point > e["i"] for point in exposed.get(partition, [])):
            continue
        seen = read[partition]
        for offset, value in zip(e["result"].get("offsets", []), e["result"].get("values", []), strict=False):
            found = seen.get(str(offset))
            if found != value:
                violations.append(Violation(
                    "P-ACK", e["i"], f"{partition}: record {value!r} acknowledged (acks=all) at offset {offset} "
                    + ("is missing after the heal" if found is None else f"reads back as {found!r}"),
                    {"offset": offset, "value": value, "found": found, "read_back": len(seen)}))
    return violations



def views_judged(history: list[dict[str, Any]]) -> bool:
    """Judged only once something was read back: an acknowledgement never read back shows nothing."""
    return any(e["op"] == "consume" and "records" in e["result"] for e in ops(history))


PROPERTY = Property("P-ACK", ground_truth=ground_truth, views=views, views_judged=views_judged)
