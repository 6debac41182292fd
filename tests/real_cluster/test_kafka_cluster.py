"""kafka-cluster against real brokers from ../shared/kafka/<release> (a KAFKA_HOME per release,
/work/shared/kafka/README.md). These run in the default test run when the release is there and
skip only when it is not; the KIP-903 proof on three releases is `slow` (~100 s per release)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from isrcheck.adapters.real_kafka.cluster_processes import resolve_kafka_home
from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
from isrcheck.conformance.engine.cluster_history import kip903_steps, run_history
from isrcheck.conformance.properties.black_box_history import HistoryConfig

from tests.docker_images import IMAGES, require

REPO = Path(__file__).resolve().parents[2]


def home(release: str) -> Path | None:
    candidate = REPO.parent / "shared" / "kafka" / release
    return candidate if (candidate / "bin" / "kafka-server-start.sh").exists() else None


def leftovers() -> set[str]:
    return {p.name for p in Path("/tmp").glob("isrcheck-cluster-*")}


def isrcheck(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("KAFKA_HOME", None)  # the default: ../shared/kafka/<release> next to the checkout
    return subprocess.run([sys.executable, "-m", "isrcheck", *args], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=timeout)


@pytest.mark.skipif(home("3.9") is None, reason="no ../shared/kafka/3.9 next to the checkout")
def test_run_check_and_replay_a_real_3_9_cluster(tmp_path: Path) -> None:
    """`isrcheck run --adapter kafka-cluster --kafka 3.9 --level cluster` starts a 1+3 cluster from
    ../shared/kafka/3.9, runs a drawn workload and nemesis, writes a record with its history; `isrcheck
    check` re-judges that history offline to the same verdict; nothing is left running."""
    assert resolve_kafka_home("3.9") == home("3.9")
    before = leftovers()
    result = isrcheck("run", "--adapter", "kafka-cluster", "--kafka", "3.9", "--level", "cluster", "--examples", "1",
                      "--steps", "5", "--seed", "11", "--records", str(tmp_path), "--json")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["runs"] == 1 and summary["outcomes"] == {"pass": 1}
    [records] = list(tmp_path.glob("*.jsonl"))
    [record] = [json.loads(line) for line in records.read_text().splitlines()]
    entries = record["history"]["entries"]
    ops = [e["op"] for e in entries if e["type"] == "op"]
    assert ops[0] == "create_topic" and ops[-2:] == ["heal", "consume"] and len(ops) >= 4 + 3
    assert any(e["type"] == "observe" and e["view"].get("leader", -1) > 100 for e in entries)
    acked = [v for e in entries if e["type"] == "op" and e["op"] == "produce" and e["args"]["acks"] == "all"
             for v in e["result"].get("values", [])]
    consumed = [e for e in entries if e["type"] == "op"][-1]
    assert set(acked) <= set(consumed["result"]["records"]["0"].values())
    [logs] = [e for e in entries if e["type"] == "replica_logs"]  # every replica's log, read after the heal
    assert set(logs["replicas"]) == {"101", "102", "103"} and "P-LOG" not in record["unknown"]

    checked = isrcheck("check", str(records))
    assert checked.returncode == 0 and "holds" in checked.stdout and "1 runs judged" in checked.stdout, checked.stdout
    assert leftovers() <= before
    assert str(records.parent) not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


@pytest.mark.skipif(home("3.9") is None, reason="no ../shared/kafka/3.9 next to the checkout")
def test_a_fixed_nemesis_on_3_9_loses_nothing_and_takes_effect() -> None:
    """Every kind of fault once on a real 3.9 cluster (SIGKILL, disk loss, SIGSTOP/SIGCONT, a cut
    replication listener, a controller restart, a clean restart): the properties hold, every
    acks=all record reads back, and the faults were real (the ISR shrank, the wiped broker came
    back in sync). It once flagged P-ELIG under load (leader 103 paused, "down 11.5 s, still in
    the ISR [103, 101]"): the observation was stamped when it returned, after a Metadata request
    to the paused broker timed out (5 s) and ListOffsets to the paused leader waited 6 s, while the
    ISR was from a Metadata answer 6 s older — a harness bug, fixed (observations are stamped at
    their Metadata answer; P-ELIG reads fencing from the answer's broker list). The tick after
    `wait_isr` outlasts the 6 s session: the leader's own shrink (replica.lag.time.max.ms 3 s)
    usually ends the wait first, and without it broker 2 restarted before its fencing reached
    an observation (seen failing in full-suite runs under load)."""
    steps = [
        ("create_topic", {"topic": "t"}),
        ("produce", {"topic": "t", "records": 3, "acks": "all"}),
        ("crash", {"broker": 2}),
        ("produce", {"topic": "t", "records": 2, "acks": "1"}),
        ("wait_isr", {"topic": "t", "isr": [1, 3], "timeout_ms": 20000}),
        ("tick", {"ms": 6000}),
        ("produce", {"topic": "t", "records": 2, "acks": "all"}),
        ("restart", {"broker": 2, "lose": "disk"}),
        ("pause", {"broker": 3}),
        ("net", {"broker": 1, "link": "replication", "mode": "cut"}),
        ("tick", {"ms": 1000}),
        ("net", {"broker": 1, "link": "replication", "mode": "pass"}),
        ("resume", {"broker": 3}),
        ("fail_over_controller", {}),
        ("clean_restart", {"broker": 1}),
    ]
    target = KafkaClusterTarget({"kafka-home": str(home("3.9"))})
    history, violations = run_history(target, "3.9", steps, HistoryConfig())
    assert violations == [], [v.to_json() for v in violations]
    ops = {e["op"]: e for e in history if e["type"] == "op"}
    assert ops["wait_isr"]["result"]["reached"]  # the crash was seen by the controller
    acked = [v for e in history if e["type"] == "op" and e["op"] == "produce" and e["args"]["acks"] == "all"
             for v in e["result"]["values"]]
    assert len(acked) == 5 and set(acked) <= set(ops["consume"]["result"]["records"]["0"].values())
    final = [e["view"] for e in history if e["type"] == "observe"][-1]
    assert sorted(final["isr"]) == [101, 102, 103]  # the wiped broker caught up again
    views = [e["view"] for e in history if e["type"] == "observe" and e["view"].get("exists")]
    assert all("brokers" in v and "metadata_after_s" in v for v in views)
    assert any(len(v["brokers"]) < 3 for v in views)  # the controller's fencing was seen in a Metadata answer


def options_for(release: str, where: str) -> dict[str, str]:
    """Processes of ../shared/kafka/<release>, or containers of its image: the same test either way."""
    if where == "container":
        require(IMAGES[release])
        return {"containers": "1", "image": IMAGES[release]}
    if home(release) is None:
        pytest.skip(f"no ../shared/kafka/{release}")
    return {"kafka-home": str(home(release))}


def kip903(release: str, where: str = "process") -> tuple[list[str], list[dict[str, object]]]:
    target = KafkaClusterTarget(options_for(release, where))
    history, violations = run_history(target, release, kip903_steps(), HistoryConfig())
    return [v.property for v in violations], history


@pytest.mark.slow
@pytest.mark.skipif(home("3.3") is None, reason="no ../shared/kafka/3.3")
def test_kafka_14139_loses_acknowledged_records_on_3_3() -> None:
    """KIP-903's interleaving on 3.3.2: the held AlterPartition adding the disk-less follower is
    accepted, the leader fails, the empty replica is elected — every acknowledged record is lost."""
    properties, history = kip903("3.3")
    assert "P-ACK" in properties and "P-HWC" in properties, properties
    elected = [e["view"] for e in history if e["type"] == "observe" and e["view"].get("leader") == 102]
    assert elected and elected[0]["isr"] == [102]


@pytest.mark.slow
@pytest.mark.parametrize(("release", "where"), [("3.5", "process"), ("3.9", "process"), ("4.0", "process"),
                                                ("4.1", "process"), ("3.9", "container")])
def test_kafka_14139_interleaving_is_refused_from_3_5(release: str, where: str) -> None:
    """The same interleaving from 3.5.2 on: the stale AlterPartition is refused (3.5: ineligible
    replica, broker epoch mismatch — KIP-903; 3.9: already refused as a stale partition epoch),
    the ISR stays {1}, the partition waits offline for broker 1 and nothing is lost. 4.0.1 and
    4.1.1 refuse it too (no property violated, 102 never elected) — on processes and in
    apache/kafka containers alike."""
    properties, history = kip903(release, where)
    assert properties == []
    assert not any(e["type"] == "observe" and e["view"].get("leader") == 102 for e in history)


@pytest.mark.slow
@pytest.mark.parametrize(("release", "where"), [("3.3", "process"), ("3.5", "process"), ("3.7", "process"),
                                                ("3.9", "process"), ("4.1", "process"), ("3.7", "container"),
                                                ("3.9", "container")])
def test_equal_epoch_metadata_lets_a_held_expansion_admit_a_member_below_the_hw(release: str, where: str) -> None:
    """conformance/scenarios/cluster/equal_epoch_metadata_replaces_pending_expansion.yaml on every
    release: records are acknowledged (acks=all) while broker 3 is stopped, and afterwards the held
    expansion puts broker 3 into the ISR. (That the records may then be lost is in docs/evidence.)"""
    from isrcheck.conformance.engine.cluster_history import equal_epoch_steps

    target = KafkaClusterTarget({**options_for(release, where), "session-timeout-ms": "60000"})
    history, _ = run_history(target, release, equal_epoch_steps(), HistoryConfig(session_timeout_ms=60000))
    ops = [e for e in history if e["type"] == "op"]
    index = {e["i"]: n for n, e in enumerate(ops)}
    last_pause_3 = max(e["i"] for e in ops if e["op"] == "pause" and e["args"]["broker"] == 3)
    acked = [e for e in ops if e["op"] == "produce" and e["args"]["acks"] == "all" and e["i"] > last_pause_3]
    assert acked and acked[0]["result"]["status"] == "acked"
    admitted = [e for e in ops if e["op"] == "wait_isr" and e["args"]["isr"] == [1, 2, 3]]
    assert admitted and admitted[0]["result"]["reached"] and index[admitted[0]["i"]] > index[acked[0]["i"]]
    resumes = [e["i"] for e in ops if e["op"] == "resume" and e["args"]["broker"] == 3]
    assert not any(last_pause_3 < i < admitted[0]["i"] for i in resumes)  # stopped all along


PATCH = REPO / "docs" / "upstream" / "equal-epoch-keep-pending-isr.patch"
BUILD = REPO / "docs" / "upstream" / "build-patched-partition.sh"


class LeaderLogTarget(KafkaClusterTarget):
    """Keeps broker 1's state-change.log before the cluster removes its logs — always: the test
    has read what it needs, so a run that lost records leaves no directory behind either."""

    leader_state_changes = ""

    def close(self) -> None:
        logs = self.cluster.log_dirs() if self.cluster is not None else {}
        path = Path(logs.get("broker-1", "/nonexistent")) / "state-change.log"
        self.leader_state_changes = path.read_text(errors="replace") if path.exists() else ""
        self.keep_logs = False
        super().close()


FIRST_CHANGE = {"3.3": "expansion", "3.5": "expansion"}
"""Their controller bumps the leader epoch on every ISR shrink, so the leader ignores a shrink's
answer: the change it learns from its answer must be an admission (`equal_epoch_default_steps`)."""
EQUAL_EPOCH_RECORD = {"shrink": "isr=[101, 103], partitionEpoch=1", "expansion": "isr=[101, 103], partitionEpoch=2"}


def equal_epoch_with_defaults(release: str, classpath: str | None = None
                              ) -> tuple[list[str], list[dict[str, object]], str]:
    from isrcheck.conformance.engine.cluster_history import equal_epoch_default_steps

    options = {"kafka-home": str(home(release)), "kafka-defaults": "1"}
    if classpath:
        options["classpath"] = classpath
    target = LeaderLogTarget(options)
    steps = equal_epoch_default_steps("shutdown", FIRST_CHANGE.get(release, "shrink"))
    history, violations = run_history(target, release, steps, HistoryConfig(session_timeout_ms=9000))
    return [v.property for v in violations], history, target.leader_state_changes


def acknowledged_then_read(history: list[dict[str, object]]) -> tuple[dict[int, str], dict[str, str]]:
    ops = [e for e in history if e["type"] == "op"]
    acked = {int(o): str(v) for e in ops if e["op"] == "produce" and e["args"]["acks"] == "all"  # type: ignore[index]
             and e["result"]["status"] == "acked"  # type: ignore[index]
             for o, v in zip(e["result"]["offsets"], e["result"]["values"], strict=True)}  # type: ignore[index]
    read = ops[-1]["result"]["records"]["0"]  # type: ignore[index]
    return acked, read


@pytest.mark.slow
@pytest.mark.parametrize("release", ["3.3", "3.5", "3.7", "3.9", "4.1"])
def test_equal_epoch_loses_acknowledged_records_with_kafka_defaults(release: str) -> None:
    """Kafka's default timings (session 9 s, replica.lag.time.max.ms 30 s, controller socket
    timeout 30 s), no broker stopped or crashed: only broker 2's replication fetches, leader 1's
    metadata log and one AlterPartition of 1 are held at the proxies, and 1 shuts down cleanly.
    The records acknowledged with acks=all (min.insync.replicas 2) while the stale expansion was
    in flight are missing after the heal — the loss itself, read back by a consumer."""
    if home(release) is None:
        pytest.skip(f"no ../shared/kafka/{release}")
    properties, history, leader_log = equal_epoch_with_defaults(release)
    ops = [e for e in history if e["type"] == "op"]
    assert not {"pause", "crash", "restart"} & {e["op"] for e in ops}  # the only failure is the clean shutdown
    acked, read = acknowledged_then_read(history)
    late = [o for o in acked if o >= 3]
    assert late == [3, 4, 5], acked  # acknowledged after 2 stopped fetching at offset 3
    assert [o for o in late if read.get(str(o)) != acked[o]] == [3, 4, 5], read  # and gone after the heal
    assert properties.count("P-ACK") == 3, properties
    after = [e["view"] for e in history if e["type"] == "observe" and e["i"] > next(
        x["i"] for x in ops if x["op"] == "shutdown")]
    assert after[0]["leader"] == 102  # type: ignore[index]
    record = EQUAL_EPOCH_RECORD[FIRST_CHANGE.get(release, "shrink")]
    assert any("Skipped the become-leader" in line and record in line for line in leader_log.splitlines()), record


@pytest.fixture(scope="module")
def patched_partition_jar(tmp_path_factory: pytest.TempPathFactory) -> str:
    """docs/upstream/equal-epoch-keep-pending-isr.patch compiled into kafka.cluster.Partition of
    ../shared/kafka/3.9 by docs/upstream/build-patched-partition.sh. Needs apache/kafka's history
    ($KAFKA_GIT_DIR, a clone holding tag 3.9.0-rc3) and a Scala 2.13 compiler (pyspark's)."""
    git_dir = os.environ.get("KAFKA_GIT_DIR")
    if home("3.9") is None:
        pytest.skip("no ../shared/kafka/3.9")
    if not git_dir:
        pytest.skip("KAFKA_GIT_DIR (a clone of apache/kafka holding 3.9.0) is not set: the patch cannot be built")
    jar = tmp_path_factory.mktemp("patch") / "partition-patched.jar"
    built = subprocess.run(["sh", str(BUILD), str(home("3.9")), str(PATCH), str(jar), git_dir],
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr[-2000:]
    return str(jar)


@pytest.mark.slow
def test_the_partition_patch_keeps_the_expansion_pending_and_loses_nothing(patched_partition_jar: str) -> None:
    """The same steps with the patch first on the brokers' class path: the equal-epoch record
    leaves the pending expansion in place (the leader logs it), the high watermark waits for
    broker 2, the three records are not acknowledged, and nothing acknowledged is lost."""
    properties, history, leader_log = equal_epoch_with_defaults("3.9", patched_partition_jar)
    assert properties == [], properties
    assert "Kept the pending ISR change PendingExpandIsr(newInSyncReplicaId=102" in leader_log
    acked, read = acknowledged_then_read(history)
    assert acked and all(read.get(str(o)) == v for o, v in acked.items())
    late = [e for e in history if e["type"] == "op" and e["op"] == "produce" and e["i"] > next(
        x["i"] for x in history if x["type"] == "op" and x["op"] == "hold_follower" and x["args"].get("mark"))]
    assert late and late[0]["result"]["status"] == "failed"  # type: ignore[index]  # the HW waited for broker 2


@pytest.mark.slow
def test_kafka_14139_is_still_refused_with_the_partition_patch(patched_partition_jar: str) -> None:
    """No regression on KIP-903's interleaving: with the patched Partition the stale expansion of
    the disk-less follower is still refused on 3.9 and nothing is lost."""
    target = KafkaClusterTarget({"kafka-home": str(home("3.9")), "classpath": patched_partition_jar})
    history, violations = run_history(target, "3.9", kip903_steps(), HistoryConfig())
    assert [v.property for v in violations] == []
    assert not any(e["type"] == "observe" and e["view"].get("leader") == 102 for e in history)
    acked, read = acknowledged_then_read(history)
    assert len(acked) == 8 and all(read.get(str(o)) == v for o, v in acked.items())
