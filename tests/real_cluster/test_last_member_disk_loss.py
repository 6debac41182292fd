"""The last ISR member loses its disk, on real brokers (conformance/scenarios/cluster/
kip858_last_member_disk_loss.yaml states what each release does, from the source). Leader 101,
replicas [101, 103], min.insync.replicas 1: 103 dies, three records are acknowledged with ISR
[101], 101 dies and restarts with an empty, reformatted log directory (a new directory id), then
103 restarts. Whatever order 101's AssignReplicasToDirs and its unfencing took, 103's unfence is an
election that visits the partition, so every release ends with the empty 101 leading and the
acknowledged records gone; the black-box properties exempt that (every in-sync copy was lost), also
on 4.1, where ELR empties the observed ISR before the disk loss."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
from isrcheck.conformance.engine.cluster_history import run_history
from isrcheck.conformance.properties.black_box_history import HistoryConfig

REPO = Path(__file__).resolve().parents[2]

STEPS: list[tuple[str, dict[str, Any]]] = [
    ("create_topic", {"topic": "dl", "replicas": [1, 3], "configs": {"min.insync.replicas": "1"}}),
    ("produce", {"topic": "dl", "records": 3, "acks": "all"}),
    ("crash", {"broker": 3}),
    ("wait_isr", {"topic": "dl", "isr": [1], "timeout_ms": 30000}),
    ("crash", {"broker": 1}),
    ("tick", {"ms": 12000}),
    ("restart", {"broker": 1, "lose": "disk"}),
    ("tick", {"ms": 10000}),
    ("restart", {"broker": 3, "lose": "none"}),
    ("tick", {"ms": 10000}),
]


def home(release: str) -> Path | None:
    candidate = REPO.parent / "shared" / "kafka" / release
    return candidate if (candidate / "bin" / "kafka-server-start.sh").exists() else None


@pytest.mark.slow
@pytest.mark.parametrize("release", ["3.3", "3.9", "4.1"])
def test_the_last_isr_member_back_with_an_empty_disk_ends_up_leading_empty(release: str) -> None:
    if home(release) is None:
        pytest.skip(f"no ../shared/kafka/{release} next to the checkout")
    target = KafkaClusterTarget({"kafka-home": str(home(release))})
    history, violations = run_history(target, release, STEPS, HistoryConfig(6000, 4000, 1), heal_timeout_ms=30000)
    produced = next(e for e in history if e["type"] == "op" and e["op"] == "produce")
    assert produced["result"]["status"] == "acked" and len(produced["result"]["offsets"]) == 3
    views = [e["view"] for e in history if e["type"] == "observe"]
    assert any(v.get("leader") == -1 for v in views), "101's crash left the partition leaderless"
    if release == "4.1":
        assert any(v.get("leader") == -1 and v.get("isr") == [] for v in views), "ELR on: the ISR emptied"
    assert views[-1]["leader"] == 101 and views[-1]["hw"] == 0
    consumed = [e for e in history if e["type"] == "op"][-1]
    assert consumed["op"] == "consume" and consumed["result"]["records"] == {"0": {}}
    assert violations == []
