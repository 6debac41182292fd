"""A campaign's kafka-cluster kept between runs: one cluster start for several runs, each run on
topics of its own and judged on its own history; what a run damaged restarted alone; a run that
cannot be separated from the next (a finding, an unsettled heal) ends its cluster.

The first tests need no Kafka (the rule of `KafkaClusterTarget.close` on a stand-in cluster); the
others run real clusters of ../shared/kafka/3.3 and are `slow` (one to three cluster starts each)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.real_kafka.cluster_processes import free_base_port
from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.cluster_history import run_history
from isrcheck.conformance.properties.black_box_history import HistoryConfig

REPO = Path(__file__).resolve().parents[2]


class StandInCluster:
    """What `close` touches of a `RealKafkaCluster`: whether it was stopped, and with its logs."""

    def __init__(self) -> None:
        self.failed = False
        self.stops = 0
        self.cluster_id = "stand-in"

    def stop(self) -> None:
        self.stops += 1


class StandInAdmin:
    def __init__(self) -> None:
        self.deleted: list[list[str]] = []

    def delete_topics(self, topics: list[str], timeout_ms: int) -> None:
        self.deleted.append(topics)

    def close(self) -> None:
        pass


def closed(reuse: bool, healed: bool, found: bool, options: dict[str, str] | None = None
           ) -> tuple[StandInCluster, StandInAdmin, KafkaClusterTarget]:
    target = KafkaClusterTarget(options or {})
    cluster, admin = StandInCluster(), StandInAdmin()
    target.cluster, target.admin = cluster, admin  # type: ignore[assignment]
    target.reuse, target.healed, target.keep_logs = reuse, healed, found
    target.run_on_cluster, target.created = 1, {"isrcheck"}
    target.close()
    return cluster, admin, target


def test_close_keeps_a_healed_cluster_only_for_a_campaign_that_reuses() -> None:
    cluster, admin, target = closed(reuse=True, healed=True, found=False)
    assert cluster.stops == 0 and target.cluster is cluster and admin.deleted == [["isrcheck"]]
    for reuse, healed, found, options in ((False, True, False, {}), (True, False, False, {}),
                                          (True, True, True, {}), (True, True, False, {"reuse": "0"})):
        cluster, admin, target = closed(reuse, healed, found, options)
        assert cluster.stops == 1 and target.cluster is None and admin.deleted == [], (reuse, healed, found, options)
        assert cluster.failed == found  # a finding keeps the nodes' logs


def test_shutdown_stops_a_kept_cluster() -> None:
    cluster, _, target = closed(reuse=True, healed=True, found=False)
    target.shutdown()
    assert cluster.stops == 1 and target.cluster is None and not target.reuse


def test_each_run_on_a_kept_cluster_has_topics_of_its_own() -> None:
    target = KafkaClusterTarget({})
    names = []
    for run in (1, 2, 3):
        target.run_on_cluster = run
        names.append(target.kafka_topic("isrcheck"))
    assert names == ["isrcheck", "isrcheck-r2", "isrcheck-r3"]


# ---------------------------------------------------------------------------- real clusters


def home(release: str) -> Path | None:
    candidate = REPO.parent / "shared" / "kafka" / release
    return candidate if (candidate / "bin" / "kafka-server-start.sh").exists() else None


def leftovers(base_port: int) -> list[Path]:
    """Run directories of clusters on `base_port` (other clusters of the machine are not this test's)."""
    return list(Path(tempfile.gettempdir()).glob(f"isrcheck-cluster-{base_port}-*"))


def java_pids_of(workdir: Path) -> set[int]:
    """The JVMs whose command line names the cluster's directory (its log and properties paths)."""
    pids = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if args and args[0].endswith(b"java") and any(str(workdir).encode() in a for a in args):
            pids.add(int(cmdline.parent.name))
    return pids


def opening(history: list[dict[str, Any]]) -> dict[str, Any]:
    [create] = [e for e in history if e["type"] == "op" and e["op"] == "create_topic"]
    return dict(create["result"]["cluster"])


def acked_and_read(history: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    acked = [v for e in history if e["type"] == "op" and e["op"] == "produce" for v in e["result"].get("values", [])]
    [consume] = [e for e in history if e["type"] == "op" and e["op"] == "consume"]
    return acked, sorted(consume["result"]["records"]["0"].values())


@pytest.mark.slow
@pytest.mark.skipif(home("3.3") is None, reason="no ../shared/kafka/3.3")
def test_runs_share_a_cluster_a_damaged_node_is_restarted_alone_and_a_finding_ends_it() -> None:
    """Three runs on one target with reuse on. Run 2 runs on run 1's cluster (same cluster id, the
    same JVMs but the one killed between the runs, which is restarted alone) and reads back exactly
    its own records from its own topic — run 1's are not there; its history begins with its own
    create_topic and holds every property. Run 2 is then closed as a run with a finding: run 3
    starts a fresh cluster. Nothing is left running."""
    target = KafkaClusterTarget({"kafka-home": str(home("3.3"))})
    target.reuse = True
    kept_logs: Path | None = None
    try:
        first_steps = [("create_topic", {"topic": "t"}), ("produce", {"topic": "t", "records": 3, "acks": "all"}),
                       ("crash", {"broker": 2}), ("produce", {"topic": "t", "records": 2, "acks": "all"})]
        first, violations = run_history(target, "3.3", first_steps, HistoryConfig())
        assert violations == [] and target.cluster is not None, [v.to_json() for v in violations]
        workdir = target.cluster.workdir
        assert workdir is not None
        pids_before = {name: node.pid for name, node in target.cluster.nodes.items()}
        target.cluster.kill("broker-3")  # damage outside any run's history: found and repaired between runs

        second_steps = [("create_topic", {"topic": "t"}), ("produce", {"topic": "t", "records": 2, "acks": "all"}),
                        ("produce", {"topic": "t", "records": 1, "acks": "1"})]
        second = run_history_keeping(target, second_steps)
        assert opening(first)["fresh"] and opening(first)["cluster_id"] == opening(second)["cluster_id"]
        assert opening(second) | {"open_s": 0} == {"cluster_id": opening(first)["cluster_id"], "run_on_cluster": 2,
                                                   "fresh": False, "restarted": ["broker-3"], "open_s": 0}
        assert target.cluster is not None and target.cluster.workdir == workdir
        pids_after = {name: node.pid for name, node in target.cluster.nodes.items()}
        assert {n for n in pids_after if pids_after[n] != pids_before[n]} == {"broker-3"}
        assert java_pids_of(workdir) == set(pids_after.values())

        first_acked, first_read = acked_and_read(first)
        second_acked, second_read = acked_and_read(second)
        assert len(first_acked) == 5 and sorted(first_acked) == first_read
        assert len(second_acked) == 3 and sorted(second_acked) == second_read  # none of run 1's records
        assert second[0]["op"] == "create_topic" and second[0]["result"]["kafka_topic"] == "t-r2"
        assert {e["partition"] for e in second if e["type"] == "observe"} == {"t-0"}
        produced = [e for e in second if e["type"] == "op" and e["op"] == "produce"]
        assert produced[0]["result"]["offsets"] == [0, 1]  # a topic of its own: its first record at offset 0

        # run 2 closed as a run with a finding: its cluster ends (logs kept), run 3 starts afresh
        target.keep_logs = True
        target.close()
        assert target.cluster is None and java_pids_of(workdir) == set()
        kept_logs = workdir
        third, violations = run_history(target, "3.3", [("create_topic", {"topic": "t"})], HistoryConfig())
        assert violations == []
        assert opening(third)["fresh"] and opening(third)["cluster_id"] != opening(first)["cluster_id"]
        assert third[0]["result"]["kafka_topic"] == "t"
        assert target.cluster is not None and target.cluster.workdir is not None
        third_workdir = target.cluster.workdir
    finally:
        target.shutdown()
        if kept_logs is not None:
            shutil.rmtree(kept_logs, ignore_errors=True)
    assert not third_workdir.exists() and java_pids_of(third_workdir) == set()


def run_history_keeping(target: KafkaClusterTarget, steps: list[tuple[str, dict[str, Any]]]
                        ) -> list[dict[str, Any]]:
    """`run_history` whose close keeps the cluster (the test closes it itself afterwards)."""
    close = target.close
    target.close = lambda: None  # type: ignore[method-assign]
    try:
        history, violations = run_history(target, "3.3", steps, HistoryConfig())
    finally:
        target.close = close  # type: ignore[method-assign]
    assert violations == [], [v.to_json() for v in violations]
    return history


@pytest.mark.slow
@pytest.mark.skipif(home("3.3") is None, reason="no ../shared/kafka/3.3")
def test_a_campaign_starts_one_cluster_for_its_runs(tmp_path: Path) -> None:
    """`run_campaign` at the cluster level: every run after the first runs on the cluster its
    predecessor left, unless the predecessor could not be separated from it (a finding, an
    unsettled heal) — counted from the records; the campaign stops its cluster at the end."""
    base = free_base_port()
    result = run_campaign(CampaignConfig(adapter=f"kafka-cluster,kafka-home={home('3.3')},base-port={base}",
                                         release="3.3",
                                         level="cluster", examples=4, steps=4, seed=5, records_dir=tmp_path,
                                         batch_size=4, stop_at_first=False))
    runs = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert result.runs == len(runs) == 4
    openings = [opening(run["history"]["entries"]) for run in runs]
    assert openings[0]["fresh"]
    for previous, run, this in zip(runs, runs[1:], openings[1:], strict=False):
        heal = next(e for e in previous["history"]["entries"] if e["type"] == "op" and e["op"] == "heal")
        separable = not previous["findings"] and heal["result"].get("settled")
        assert this["fresh"] != separable, (previous["findings"], heal["result"], this)
        topics = {e["result"]["kafka_topic"] for e in run["history"]["entries"]
                  if e["type"] == "op" and e["op"] == "create_topic"}
        assert topics == {"isrcheck" if this["fresh"] else f"isrcheck-r{this['run_on_cluster']}"}
    for run in runs:  # every replica's log read after the heal is of the run's own topic, on a kept cluster too
        [logs] = [e for e in run["history"]["entries"] if e["type"] == "replica_logs"]
        _, read = acked_and_read(run["history"]["entries"])
        assert set(read) <= {r[3] for log in logs["replicas"].values() for r in log}
    starts = len({o["cluster_id"] for o in openings})
    assert starts == sum(o["fresh"] for o in openings) and starts < len(runs)
    assert len(leftovers(base)) == sum(bool(run["findings"]) for run in runs)  # only a finding's logs are kept
    for kept in leftovers(base):  # a run with a finding keeps its cluster's logs (the record says where)
        shutil.rmtree(kept, ignore_errors=True)
