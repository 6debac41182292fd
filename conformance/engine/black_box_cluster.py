"""The black-box cluster loop for `kafka-cluster` (Docker): a small random schedule of faults and
acks=all writes, then heal, read everything back and judge the black-box properties
(`isrcheck.conformance.properties.black_box_cluster`) on what the target recorded."""

from __future__ import annotations

import random
import time

from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
from isrcheck.conformance.properties.black_box_cluster import (
    ClusterViolation,
    fenced_in_isr,
    leader_not_in_isr,
    lost_acknowledged,
)


def check_cluster(target: KafkaClusterTarget, read_back: bool = False) -> list[ClusterViolation]:
    """The black-box violations in what `target` shows now (and, with `read_back`, in what a
    consumer reads back of every acknowledged write)."""
    views = target.partitions()
    violations = leader_not_in_isr(views)
    violations += fenced_in_isr(views, target.down_since, time.time(), target.session_timeout_ms / 1000)
    if read_back:
        consumed: dict[tuple[str, int], dict[int, bytes]] = {}
        for topic in {a.topic for a in target.acked}:
            consumed.update(target.consume(topic))
        violations += lost_acknowledged(target.acked, consumed)
    return violations


def run_cluster_campaign(target: KafkaClusterTarget, release: str, rounds: int = 20, seed: int = 0
                         ) -> list[ClusterViolation]:
    """Random crashes/pauses/partitions interleaved with acks=all writes, then heal, read
    everything back and check. Returns every violation (empty = nothing found)."""
    rng = random.Random(seed)
    target.open(release, {})
    try:
        target.execute("create_topic", {"topic": "isrcheck", "partitions": 1, "replication": 3})
        time.sleep(2)
        down: set[int] = set()
        violations: list[ClusterViolation] = []
        for _ in range(rounds):
            choice = rng.random()
            broker = rng.choice([1, 2, 3])
            if choice < 0.5:
                target.execute("produce", {"topic": "isrcheck", "records": rng.randint(1, 5)})
            elif choice < 0.7 and broker not in down and len(down) < 1:
                target.execute(rng.choice(["crash", "pause", "disconnect"]), {"broker": broker})
                down.add(broker)
            elif down:
                back = down.pop()
                for op in ("unpause", "connect", "restart"):
                    try:
                        target.execute(op, {"broker": back})
                    except Exception:  # not in that state
                        continue
            violations += check_cluster(target)
            target.execute("tick", {"ms": rng.randint(200, 2000)})
        target.execute("heal", {})
        return violations + check_cluster(target, read_back=True)
    finally:
        target.close()
