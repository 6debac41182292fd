"""kafka-cluster operations that need no Kafka: `mark` and `tick` {align}, which meet a broker's
periodic task (the leader's ISR-expiration check) at a chosen phase, and the option checks."""

from __future__ import annotations

import time

import pytest
from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
from isrcheck.contract.errors import UsageError


def test_tick_align_sleeps_to_the_chosen_phase_of_a_marked_op() -> None:
    target = KafkaClusterTarget({})
    target.cluster = object()  # type: ignore[assignment]  # tick touches no node
    target.execute("tick", {"ms": 0, "mark": "check"})
    marked = target.marks["check"]
    target.execute("tick", {"ms": 300})
    result = target.execute("tick", {"align": "check", "period_ms": 1000, "at_ms": 700})
    waited = time.monotonic() - marked
    assert 0.68 <= waited < 0.95, waited  # to 0.7 s past the mark, not to the next period
    assert abs(result["phase_s"] - 0.7) < 0.2
    result = target.execute("tick", {"align": "check", "period_ms": 1000, "at_ms": 100})  # 0.1 s is past: next period
    assert 1.08 <= time.monotonic() - marked < 1.4 and abs(result["phase_s"] - 0.1) < 0.2


def test_kafka_defaults_and_a_session_timeout_contradict() -> None:
    with pytest.raises(UsageError, match="contradict"):
        KafkaClusterTarget({"kafka-defaults": "1", "session-timeout-ms": "6000"})


def test_kafka_defaults_leave_the_timing_keys_to_the_release() -> None:
    from pathlib import Path

    from isrcheck.adapters.real_kafka.cluster_processes import KAFKA_DEFAULT_TIMINGS, ClusterLayout

    tuned = ClusterLayout().properties("broker-1", Path("/data"))
    shipped = ClusterLayout(kafka_defaults=True).properties("broker-1", Path("/data"))
    assert set(KAFKA_DEFAULT_TIMINGS) <= set(tuned)
    assert not set(KAFKA_DEFAULT_TIMINGS) & set(shipped)
    assert {k: v for k, v in tuned.items() if k not in KAFKA_DEFAULT_TIMINGS} == shipped


class PausedBrokers:
    """Just what `leader_high_watermark` asks of a cluster: which nodes it paused."""

    def __init__(self, *paused: str) -> None:
        self.names = set(paused)

    def paused(self, name: str) -> bool:
        return name in self.names


@pytest.mark.parametrize(("leader", "paused", "asked"), [
    (102, (), True),                 # a running leader answers ListOffsets
    (102, ("broker-2",), False),     # SIGSTOPped: the request would wait its 6 s timeout for nothing
    (102, ("broker-1",), True),      # another broker paused: the leader still answers
    (-1, (), False),                 # no leader: ListOffsets has no one to go to
])
def test_the_high_watermark_is_asked_only_of_a_leader_that_can_answer(
        leader: int, paused: tuple[str, ...], asked: bool) -> None:
    target = KafkaClusterTarget({})
    target.cluster = PausedBrokers(*paused)  # type: ignore[assignment]
    calls: list[tuple[str, int]] = []

    def list_offsets(topic: str, partition: int) -> int:
        calls.append((topic, partition))
        return 7

    target.high_watermark = list_offsets  # type: ignore[method-assign]
    hw = target.leader_high_watermark("t", 0, leader)
    assert calls == ([("t", 0)] if asked else [])
    assert hw == (7 if asked else None)
