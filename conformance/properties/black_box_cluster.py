"""Black-box properties of a real Kafka cluster, judged from what clients can see (bugs.md
property table, restricted to what survives without access to the replicas' logs):

* **no acknowledged record lost** (P-ACK): every record a producer saw acknowledged with
  acks=all is read back, at its offset, by a consumer after the cluster healed;
* **leader in ISR** (LeaderInIsr): a partition with a leader lists it in its ISR;
* **no fenced broker in the ISR once metadata settled** (P-ELIG, black-box form): after the
  session timeout has passed since a broker went down (killed, stopped, paused, cut off), it is
  no longer in any ISR — except as the last member, which Kafka keeps (controller.md §3, §4.4).

Each checker takes recorded observations (plain values, JSON-able) and returns violations, so
it runs here on recorded data without Docker; `isrcheck.adapters.real_kafka.kafka_cluster` records them and
`isrcheck.conformance.engine.black_box_cluster` runs the checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from isrcheck.operations.black_box import Acked, PartitionView, TopicPartition


@dataclass(frozen=True)
class ClusterViolation:
    property: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property, "message": self.message, "evidence": self.evidence}


def lost_acknowledged(acked: Iterable[Acked], consumed: Mapping[TopicPartition, Mapping[int, bytes]]
                      ) -> list[ClusterViolation]:
    violations = []
    for record in acked:
        seen = consumed.get((record.topic, record.partition), {})
        if seen.get(record.offset) != record.value:
            violations.append(ClusterViolation(
                "P-ACK", f"acknowledged record {record.topic}-{record.partition}@{record.offset} was lost"
                + ("" if record.offset not in seen else " (another record is at its offset)"),
                {"offset": record.offset, "value": record.value.hex(),
                 "found": seen[record.offset].hex() if record.offset in seen else None},
            ))
    return violations


def leader_not_in_isr(partitions: Mapping[TopicPartition, PartitionView]) -> list[ClusterViolation]:
    return [
        ClusterViolation("LeaderInIsr", f"{t}-{p}: leader {v.leader} is not in the ISR {list(v.isr)}",
                         {"leader": v.leader, "isr": list(v.isr)})
        for (t, p), v in sorted(partitions.items()) if v.leader >= 0 and v.leader not in v.isr
    ]


def fenced_in_isr(partitions: Mapping[TopicPartition, PartitionView], down_since: Mapping[int, float], now: float,
                  session_timeout_s: float, settle_s: float = 2.0) -> list[ClusterViolation]:
    """Brokers down for longer than the session timeout (+ settle time) must have left every
    ISR they are not the last member of."""
    settled = {b for b, since in down_since.items() if now - since > session_timeout_s + settle_s}
    violations = []
    for (t, p), view in sorted(partitions.items()):
        for broker in view.isr:
            if broker in settled and len(view.isr) > 1:
                violations.append(ClusterViolation(
                    "P-ELIG", f"{t}-{p}: broker {broker}, down for {now - down_since[broker]:.1f} s, is still in "
                              f"the ISR {list(view.isr)}", {"broker": broker, "isr": list(view.isr)}))
    return violations
