"""kafka-jvm against Kafka 3.9.0's own controller classes (`../shared/kafka/3.9`): hand-written
scenarios pass, a short generated campaign finds nothing but the known K1 divergence, the K1
scenarios hold on Kafka and not on the reference, and a missing JDK or jar is a one-line error."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from isrcheck.adapters.catalogue.registry import make_target
from isrcheck.adapters.kafka_jvm import launcher
from isrcheck.adapters.kafka_jvm.target import KafkaJvmTarget
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.scenario.load import load_file
from isrcheck.conformance.scenario.run import run_scenario
from isrcheck.contract.errors import UsageError

from tests.kafka_jvm.conftest import KNOWN_DIVERGENCE_PREFIXES, REPO, kafka_home

SCENARIOS = REPO / "conformance" / "scenarios"
FINDINGS = REPO / "docs" / "kafka-jvm-findings"


@pytest.fixture(scope="module")
def target(kafka_39: Path) -> Iterator[KafkaJvmTarget]:
    jvm = KafkaJvmTarget(kafka_home=str(kafka_39))
    yield jvm
    jvm.shutdown()


def test_the_jvm_reports_the_release_of_its_classes(target: KafkaJvmTarget) -> None:
    assert target.releases == frozenset({"3.9"})
    target.open("3.9", {})
    target.close()
    assert target.name == "kafka-jvm 3.9.0"


@pytest.mark.parametrize("name", ["alter_partition_eligibility.yaml", "broker_lifecycle.yaml", "kip_examples.yaml"])
def test_scenarios_pass_against_kafkas_own_controller(target: KafkaJvmTarget, name: str) -> None:
    results = [run_scenario(s, target, "3.9") for s in load_file(SCENARIOS / name)]
    failed = [r.reason for r in results if r.status == "failed"]
    assert not failed
    assert sum(r.status == "passed" for r in results) >= 5


@pytest.mark.parametrize("release", ["4.0", "4.1"])
def test_the_harness_runs_kafka_4s_controller_classes(release: str) -> None:
    """Kafka 4.x (../shared/kafka/4.0, 4.1): the harness compiles against its controller classes
    (4.x builders, BrokerShutdownHandler, per-epoch session tracker) and the scenarios of the
    sessions and ELR pass: a new incarnation is refused while the old epoch's session lives and
    accepted once fence_broker expired it; on 4.1 ELR is on by default, on 4.0 off."""
    target = KafkaJvmTarget(kafka_home=str(kafka_home(release)))
    try:
        results = [run_scenario(s, target, release) for name in ("broker_lifecycle.yaml", "elr.yaml")
                   for s in load_file(SCENARIOS / name)]
        assert not [r.reason for r in results if r.status == "failed"]
        assert sum(r.status == "passed" for r in results) >= 25
        target.open(release, {})
        target.execute("register_broker", {"broker": 1, "incarnation": "a"})
        duplicate = target.execute("register_broker", {"broker": 1, "incarnation": "b"})
        target.execute("fence_broker", {"broker": 1})
        after_expiry = target.execute("register_broker", {"broker": 1, "incarnation": "b"})
        assert (duplicate["error"], after_expiry["error"]) == ("DUPLICATE_BROKER_REGISTRATION", "NONE")
        for broker in (2, 3):
            target.execute("register_broker", {"broker": broker, "incarnation": "a"})
            target.execute("unfence_broker", {"broker": broker})
        target.execute("create_topic", {"topic": "t", "assignment": [[2, 3]]})
        target.execute("fence_broker", {"broker": 3})
        target.execute("fence_broker", {"broker": 2})
        partition = target.observe("partition", {"topic": "t", "partition": 0})
        # min ISR 1: with ELR the last ISR member moves to the ELR (KIP-966); without, it stays in the ISR
        assert (partition["isr"], partition["elr"]) == (([], [2]) if release == "4.1" else ([2], []))
        target.close()
    finally:
        target.shutdown()


def test_a_release_the_classes_are_not_is_skipped(target: KafkaJvmTarget) -> None:
    scenario = load_file(SCENARIOS / "kip_examples.yaml")[0]
    result = run_scenario(scenario, target, "3.7")
    assert result.status == "skipped"
    assert result.reason is not None and "Kafka 3.7" in result.reason and "it runs 3.9" in result.reason


def test_observation_reads_partition_epochs_after_alter_partition(target: KafkaJvmTarget) -> None:
    """controller.md §1.1 and §2.6 on 3.9 (MV 3.9-IV0): a leader's shrink bumps the partition epoch only."""
    target.open("3.9", {})
    for broker in (1, 2, 3):
        assert target.execute("register_broker", {"broker": broker, "incarnation": "a"})["error"] == "NONE"
        assert target.execute("unfence_broker", {"broker": broker})["error"] == "NONE"
    assert target.execute("create_topic", {"topic": "t", "assignment": [[1, 2, 3]]}) == {"error": "NONE"}
    epoch = target.observe("broker", {"broker": 1})["broker_epoch"]
    result = target.execute("alter_partition", {
        "version": 3, "broker": 1, "broker_epoch": epoch, "topic": "t", "partition": 0, "leader_epoch": 0,
        "partition_epoch": 0, "isr": [[1, -1], [2, -1]], "leader_recovery_state": "RECOVERED"})
    assert (result["error"], result["isr"], result["leader_epoch"], result["partition_epoch"]) == ("NONE", [1, 2], 0, 1)
    state = target.observe("partition", {"topic": "t", "partition": 0})
    assert (state["isr"], state["leader_epoch"], state["partition_epoch"]) == ([1, 2], 0, 1)
    assert target.observe("partition", {"topic": "nope", "partition": 0}) == {"exists": False}
    target.close()


def test_k1_scenarios_hold_on_kafka_and_on_the_fixed_reference(target: KafkaJvmTarget) -> None:
    """K1 was a reference divergence found here; the reference now models it (docs/known-divergences.md),
    so Kafka's own classes and the reference agree on what the scenarios pin."""
    scenarios = load_file(FINDINGS / "K1_reassign_retarget.yaml")
    on_kafka = [run_scenario(s, target, "3.9") for s in scenarios]
    on_reference = [run_scenario(s, ReferenceTarget(), "3.9") for s in scenarios]
    assert [r.status for r in on_kafka] == ["passed", "skipped", "passed"]
    assert [r.status for r in on_reference] == ["passed", "skipped", "passed"]


def test_a_short_campaign_finds_only_the_known_divergence(kafka_39: Path) -> None:
    config = CampaignConfig(adapter=f"kafka-jvm,kafka-home={kafka_39}", release="3.9", examples=20, steps=30,
                            seed=5, stop_at_first=False, batch_size=20)
    result = run_campaign(config)
    assert result.runs >= 20 and result.steps >= 20 * 10
    assert set(result.outcomes) <= {"pass", "finding", "known"}, result.outcomes
    unknown = [s for s in result.signatures if not s.startswith(KNOWN_DIVERGENCE_PREFIXES)]
    assert not unknown, result.examples


def test_the_adapter_spec_reaches_the_target(kafka_39: Path) -> None:
    target = make_target(f"kafka-jvm,kafka-home={kafka_39},without=reassign+fail_over_controller")
    try:
        assert isinstance(target, KafkaJvmTarget) and target.releases == frozenset({"3.9"})
        assert target.unsupported_operations == frozenset({"reassign", "fail_over_controller"})
        assert target.current is None  # no JVM until the first open
    finally:
        target.shutdown()


# ------------------------------------------------------------------ one-line errors


def one_line_cli_error(env: dict[str, str], *spec: str) -> str:
    done = subprocess.run([sys.executable, "-m", "isrcheck", "scenario", str(SCENARIOS / "kip_examples.yaml"),
                           "--adapter", *spec, "--kafka", "3.9"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_a_missing_jdk_is_a_one_line_error(tmp_path: Path, kafka_39: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "KAFKA_HOME")}
    env["PATH"] = str(tmp_path)  # no java, no javac
    env["PYTHONPATH"] = str(REPO)
    line = one_line_cli_error(env, f"kafka-jvm,kafka-home={kafka_39}")
    assert "JDK" in line and "javac" in line


def test_a_missing_jar_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "libs").mkdir()
    with zipfile.ZipFile(tmp_path / "libs" / "kafka-clients-9.9.jar", "w") as jar:
        jar.writestr("x.txt", "not kafka")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    line = one_line_cli_error(env, f"kafka-jvm,kafka-home={tmp_path}")
    assert "kafka-metadata-*.jar" in line and "kafka-server-common-*.jar" in line


def test_a_harness_that_does_not_compile_is_could_not_test_not_a_finding(tmp_path: Path) -> None:
    """Jars with the right names but no Kafka classes in them: javac fails. `scenario` and a
    campaign (`run`, where the failure happens at a run's `open`) both exit 2 with one line naming
    the compile error; the campaign counts no run and reports no crash."""
    (tmp_path / "libs").mkdir()
    for name in ("kafka-clients", "kafka-metadata", "kafka-server-common"):
        with zipfile.ZipFile(tmp_path / "libs" / f"{name}-3.9.0.jar", "w") as jar:
            jar.writestr("x.txt", "not kafka")
    env = dict(os.environ, PYTHONPATH=str(REPO), ISRCHECK_CACHE_DIR=str(tmp_path / "cache"))
    line = one_line_cli_error(env, f"kafka-jvm,kafka-home={tmp_path}")
    assert "does not compile" in line
    done = subprocess.run([sys.executable, "-m", "isrcheck", "run", "--adapter", f"kafka-jvm,kafka-home={tmp_path}",
                           "--kafka", "3.9", "--level", "controller", "--examples", "3", "--steps", "5"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("campaign ")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("isrcheck run: error:") and "does not compile" in lines[0]
    assert "Traceback" not in done.stderr and "CRASH" not in done.stdout


def test_a_missing_classpath_entry_and_a_non_kafka_home_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        launcher.explicit_classpath(str(tmp_path / "nope.jar"))
    with pytest.raises(UsageError, match="not a Kafka home"):
        launcher.kafka_home_classpath(tmp_path)
    with pytest.raises(UsageError, match="unknown option"):
        make_target("kafka-jvm,home=/x")


def test_the_compile_cache_key_follows_the_jars(tmp_path: Path) -> None:
    jar = tmp_path / "a.jar"
    jar.write_bytes(b"one")
    first = launcher.classpath_hash([jar])
    assert launcher.classpath_hash([jar]) == first
    jar.write_bytes(b"two")
    assert launcher.classpath_hash([jar]) != first


def test_a_release_class_path_starts_from_its_class_data_archive(kafka_39: Path, tmp_path: Path) -> None:
    """All jars: the JVM maps the class path's CDS archive (-Xshare:on refuses to start when it
    cannot) and answers; a class directory on the class path (a build's output) rules CDS out."""
    command = launcher.harness_command(launcher.kafka_home_classpath(kafka_39))
    sharing = [a for a in command if a.startswith("-XX:SharedArchiveFile=")]
    assert len(sharing) == 1 and Path(sharing[0].split("=", 1)[1]).is_file()
    done = subprocess.run([command[0], "-Xshare:on", "-Disrcheck.warmup=0", *command[1:]], capture_output=True,
                          text=True, timeout=120, input='{"id":1,"method":"describe","params":{}}\n')
    assert '"protocol":"isrcheck.exec/1"' in done.stdout, done.stderr[-500:]
    assert '"capabilities":["snapshot"]' in done.stdout
    (tmp_path / "classes").mkdir()
    with_directory = launcher.harness_command([*launcher.kafka_home_classpath(kafka_39), tmp_path / "classes"])
    assert not [a for a in with_directory if a.startswith("-XX:SharedArchiveFile")]


def test_the_same_release_moved_or_unpacked_again_gets_an_archive_the_jvm_can_map(
        kafka_39: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same jars (same content, same compiled harness) at another path or with new mtimes: the
    JVM refuses the first archive for them, so they get their own; and an archive the JVM cannot
    map, whatever the reason, only slows the start: the JVM's complaint goes to stderr, never into
    the protocol's stdout (where it once took the place of `describe`'s reply)."""
    monkeypatch.setenv("ISRCHECK_CACHE_DIR", str(tmp_path / "cache"))
    home = tmp_path / "kafka"
    (home / "libs").mkdir(parents=True)
    for jar in (kafka_39 / "libs").glob("*.jar"):
        (home / "libs" / jar.name).write_bytes(jar.read_bytes())
    first = launcher.harness_command(launcher.kafka_home_classpath(home))
    archive = Path(next(a for a in first if a.startswith("-XX:SharedArchiveFile=")).split("=", 1)[1])
    clients = next((home / "libs").glob("kafka-clients-*.jar"))
    os.utime(clients, ns=(clients.stat().st_atime_ns, clients.stat().st_mtime_ns + 10**9))
    again = launcher.harness_command(launcher.kafka_home_classpath(home))
    remade = Path(next(a for a in again if a.startswith("-XX:SharedArchiveFile=")).split("=", 1)[1])
    assert remade != archive and remade.is_file()
    mapped = subprocess.run([again[0], "-Xshare:on", "-Disrcheck.warmup=0", *again[1:]], capture_output=True,
                            text=True, timeout=120, input='{"id":1,"method":"describe","params":{}}\n')
    assert '"protocol":"isrcheck.exec/1"' in mapped.stdout, mapped.stderr[-500:]
    stale = [f"-XX:SharedArchiveFile={archive}" if a == f"-XX:SharedArchiveFile={remade}" else a for a in again]
    answered = subprocess.run([stale[0], "-Disrcheck.warmup=0", *stale[1:]], capture_output=True, text=True,
                              timeout=120, input='{"id":1,"method":"describe","params":{}}\n')
    assert answered.stdout.startswith('{"id":1'), answered.stdout[:300]
    assert "archive" in answered.stderr.lower(), answered.stderr[-500:]


def test_the_reference_grows_a_topic_as_kafkas_own_controller_does(target: KafkaJvmTarget) -> None:
    """The shrunk case of the campaigns (docs/known-divergences.md KD1), stepped on the reference
    and on Kafka 3.9.0's own ReplicationControlManager: both refuse the growth (the factor is
    partition 2's, reference_impl/timeline_order.py), with or without the reassignment that makes
    the factors differ. The KD1 scenario file holds on both."""
    from isrcheck.conformance.engine.run import controller_run
    from isrcheck.contract.operations.step import Step

    def step(op: str, **args: object) -> Step:
        return Step(0, op, dict(args), None, {}, None)

    shrunk = [step("create_topic", topic="t0", assignment=[[1, 2, 3]]),
              step("create_partitions", topic="t0", count=3, assignment=[[2, 3, 1], [3, 1, 2]]),
              step("reassign", topic="t0", partition=2, replicas=[1]),
              step("controlled_shutdown", broker=1),
              step("create_partitions", topic="t0", count=4, assignment=[[1, 3, 2]])]
    for steps in (shrunk, [s for s in shrunk if s.op != "reassign"]):
        reference = ReferenceTarget()
        reference.open("3.9", {})
        target.open("3.9", {})
        run = controller_run(reference, target, "3.9", brokers=[1, 2, 3], partitions=[("t0", p) for p in range(4)])
        setup = [step(op, broker=b) for b in (1, 2, 3) for op in ("register_broker", "unfence_broker")]
        for s in [*setup, *steps]:
            run.step(s)
        target.close()
        assert len(run.trace) == 6 + len(steps) and run.findings == []
    kd1 = load_file(REPO / "docs" / "known-divergences" / "create_partitions_replication_factor.yaml")
    assert [run_scenario(s, target, "3.9").status for s in kd1] == ["passed", "passed"]
    assert [run_scenario(s, ReferenceTarget(), "3.9").status for s in kd1] == ["passed", "passed"]
