"""P-LOG on a real cluster: after the heal the engine reads every broker's log of the run's partition
from its segment files (`observe("replica_logs")`, `segment_files`) and judges the in-sync
replicas' agreement below the high watermark. On real 3.3, 3.9 and 4.1 — after a leader change that left the old
leader with records nobody else had — the entry is recorded for every replica, P-LOG is judged and
holds, and the reader agrees with Kafka's own `kafka-dump-log.sh` on the same segment files."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
from isrcheck.adapters.real_kafka.segment_files import read_partition
from isrcheck.conformance.engine.cluster_history import finish, primitive
from isrcheck.conformance.engine.run import black_box_run
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.catalogue import judge_views, views_not_judged
from isrcheck.contract.history.black_box_json import black_box_entries

REPO = Path(__file__).resolve().parents[2]
BATCH = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) .*?partitionLeaderEpoch: (-?\d+)")
RECORD = re.compile(r"^\| ?offset: (\d+) .*? payload: (.*)$")


def home(release: str) -> Path | None:
    candidate = REPO.parent / "shared" / "kafka" / release
    return candidate if (candidate / "bin" / "kafka-server-start.sh").exists() else None


def leader_change_with_a_divergent_suffix() -> list[tuple[str, dict[str, Any]]]:
    """Leader 1 takes acks=1 records its followers never fetch (its replication listener cut), then
    dies; another ISR member leads a new epoch and takes acks=all records; 1 comes back and must
    truncate its suffix (KIP-101/279) before it can rejoin."""
    topic = "plog"
    return [
        ("create_topic", {"topic": topic, "replicas": [1, 2, 3]}),
        ("produce", {"topic": topic, "records": 3, "acks": "all"}),
        ("net", {"broker": 1, "link": "replication", "mode": "cut"}),
        ("produce", {"topic": topic, "records": 2, "acks": "1"}),
        ("crash", {"broker": 1}),
        ("wait_isr", {"topic": topic, "without": [1], "timeout_ms": 20000}),
        ("produce", {"topic": topic, "records": 2, "acks": "all"}),
        ("restart", {"broker": 1, "lose": "none"}),
        ("tick", {"ms": 3000}),
    ]


def dump_log(kafka_home: Path, segments: list[Path]) -> list[list[Any]]:
    """The records of `segments` as `kafka-dump-log.sh --print-data-log` prints them (no keys here)."""
    with tempfile.TemporaryDirectory(prefix="isrcheck-dump-") as logs:
        env = {**os.environ, "LOG_DIR": logs, "KAFKA_HEAP_OPTS": "-Xmx128m"}
        text = subprocess.run([str(kafka_home / "bin" / "kafka-dump-log.sh"), "--print-data-log", "--files",
                               ",".join(str(s) for s in segments)], env=env, capture_output=True, text=True,
                              timeout=120, check=True).stdout
    records, epoch = [], None
    for line in text.splitlines():
        if (batch := BATCH.search(line)) is not None:
            epoch = int(batch.group(3))
        elif (record := RECORD.match(line.strip())) is not None:
            records.append([int(record.group(1)), epoch, None, record.group(2)])
    return records


@pytest.mark.slow
@pytest.mark.parametrize("release", ["3.3", "3.9", "4.1"])
def test_replicas_agree_after_a_leader_change_and_the_reader_matches_kafka_dump_log(release: str) -> None:
    kafka_home = home(release)
    if kafka_home is None:
        pytest.skip(f"no ../shared/kafka/{release} next to the checkout")
    target = KafkaClusterTarget({})
    target.open(release, {})
    try:
        run = black_box_run(target, release, HistoryConfig())
        for op, args in leader_change_with_a_divergent_suffix():
            run.step(primitive(op, args))
        finish(run)
        topic = target.kafka_topic("plog")
        assert target.cluster is not None
        directories = {100 + b: target.cluster.nodes[f"broker-{b}"].data_dir / f"{topic}-0" for b in (1, 2, 3)}
        dumped = {node: dump_log(kafka_home, sorted(d.glob("*.log"))) for node, d in directories.items()}
        read_again = {node: read_partition(d) for node, d in directories.items()}
    finally:
        target.close()
    history = black_box_entries(run.history)
    violations = judge_views(history, HistoryConfig())
    assert violations == [], [v.message for v in violations]
    assert "P-LOG" not in views_not_judged(history)
    [logs] = [e for e in history if e["type"] == "replica_logs"]
    assert set(logs["replicas"]) == {"101", "102", "103"}
    [healed] = [e["view"] for e in history if e["type"] == "observe" and e["i"] == max(
        x["i"] for x in history if x["type"] == "observe")]
    assert healed["isr"] and sorted(healed["isr"]) == [101, 102, 103], healed
    hw = int(healed["hw"])
    acked = [v for e in history if e["type"] == "op" and e["op"] == "produce" and e["args"]["acks"] == "all"
             for v in e["result"].get("values", [])]
    assert len(acked) == 5 and hw >= 5
    for node in ("101", "102", "103"):
        below = [r for r in logs["replicas"][node] if r[0] < hw]
        assert [r[0] for r in below] == list(range(hw)), node  # every replica holds the whole committed log
        assert set(acked) <= {r[3] for r in below}
    assert len({r[1] for r in logs["replicas"]["102"]}) >= 2  # records of two leader epochs: the leader changed
    [suffix] = [e["result"] for e in history if e["type"] == "op" and e["op"] == "produce" and e["args"]["acks"] == "1"]
    assert suffix["status"] == "acked" and len(suffix["values"]) == 2  # old leader 1 alone took them ...
    assert not set(suffix["values"]) & {r[3] for log in logs["replicas"].values() for r in log}  # ... and truncated
    for node, records in dumped.items():
        assert records == read_again[node] == logs["replicas"][str(node)], node  # Kafka's own decoder agrees
    altered = [dict(e) for e in history]  # the same recorded history with one follower's record re-stamped
    altered[logs["i"]]["replicas"] = {**logs["replicas"], "103": [[0, 7, None, logs["replicas"]["103"][0][3]],
                                                                  *logs["replicas"]["103"][1:]]}
    [found] = judge_views(altered, HistoryConfig())
    assert found.property == "P-LOG" and found.evidence["offset"] == 0 and 103 in found.evidence["brokers"]
