"""Real Kafka: everything that can be checked without Docker runs here (rendered properties and
command lines, dump-log parsing, the black-box checkers on recorded observations); the tests
that need a Docker engine or KAFKA_HOME are marked `docker` and skip with a one-line reason."""

from __future__ import annotations

import pytest

from adapters.cluster_checks import Acked, PartitionView, fenced_in_isr, leader_not_in_isr, lost_acknowledged
from adapters.controller_settings import ControllerSettings
from adapters.kafka_containers import docker_unavailable
from adapters.kafka_dump_log import DumpLogSource, parse_dump
from adapters.kafka_properties import (
    cluster_nodes,
    controller_node,
    dump_log_command,
    format_command,
    image_for,
    start_script,
)
from adapters.metadata_image import MetadataImage

DUMP = """Log starting offset: 0
baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 \
partitionLeaderEpoch: 1 isTransactional: false isControl: true deleteHorizonMs: OptionalLong.empty position: 0 \
CreateTime: 1 size: 80 magic: 2 compresscodec: none crc: 1 isvalid: true
| offset: 0 CreateTime: 1 keySize: 4 valueSize: 11 sequence: -1 headerKeys: [] controlType: LEADER_CHANGE(2)
| offset: 1 CreateTime: 1 keySize: -1 valueSize: 24 sequence: -1 headerKeys: [] payload: \
{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":21}}
| offset: 5 CreateTime: 1 keySize: -1 valueSize: 90 sequence: -1 headerKeys: [] payload: \
{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":7,"isMigratingZkBroker":false,\
"incarnationId":"AAAAAAAAAAAAAAAAAAAAAQ","brokerEpoch":5,"endPoints":[],"features":[],"rack":null,"fenced":true,\
"inControlledShutdown":false,"logDirs":["AAAAAAAAAAAAAAAAAAAAAg"]}}
| offset: 6 CreateTime: 1 keySize: -1 valueSize: 20 sequence: -1 headerKeys: [] payload: \
{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":2,"data":{"brokerId":7,"brokerEpoch":5,"fenced":-1}}
| offset: 7 CreateTime: 1 keySize: -1 valueSize: 20 sequence: -1 headerKeys: [] payload: Error at 7, skipping. x
"""


def test_dump_log_output_replays_into_state() -> None:
    entries = parse_dump(DUMP)
    assert [e.offset for e in entries] == [1, 5, 6]
    image = MetadataImage()
    image.apply_all(entries)
    broker = image.broker(7)
    assert broker is not None and broker.epoch == 5 and not broker.fenced and broker.register_offset == 5
    assert image.features["metadata.version"] == 21


def test_dump_log_source_returns_only_new_offsets() -> None:
    outputs = iter([DUMP, DUMP, DUMP.split("| offset: 6")[0]])
    source = DumpLogSource(lambda: next(outputs))
    assert len(source.poll()) == 3
    assert source.poll() == []
    source.poll()
    assert source.reset_detected  # a shorter log: the controller was re-created


def test_controller_node_follows_the_setup_that_avoids_surprises() -> None:
    """controller.md §9.3: controller-only, static voter, no auto rebalance, harness timeouts."""
    settings = ControllerSettings.for_run("4.1", {"eligible_leader_replicas": False})
    props = controller_node(settings, 2000).properties()
    assert props["process.roles"] == "controller" and props["controller.listener.names"] == "CONTROLLER"
    assert props["controller.quorum.voters"] == "1@localhost:9093"
    assert props["auto.leader.rebalance.enable"] == "false"
    assert props["broker.session.timeout.ms"] == "2000"
    command = format_command(settings, "CID", "/p")
    assert command[-2:] == ["--feature", "eligible.leader.replicas.version=0"]
    assert "--release-version" in command and settings.metadata_version in command
    three = format_command(ControllerSettings.for_run("3.9", {}), "CID", "/p")
    assert "--feature" not in three
    script = start_script(controller_node(settings, 2000), "CID", settings)
    assert script.index("kafka-storage.sh format") < script.index("exec /opt/kafka/bin/kafka-server-start.sh")
    assert ".isrcheck-wipe" in script
    assert "--cluster-metadata-decoder" in dump_log_command()


def test_cluster_nodes_give_brokers_internal_and_host_listeners() -> None:
    nodes = cluster_nodes(1, 3, 6000, [29092, 29093, 29094])
    assert [n.roles for n in nodes] == ["controller", "broker", "broker", "broker"]
    broker = nodes[2].properties()
    assert broker["node.id"] == "102"
    assert broker["advertised.listeners"] == "PLAINTEXT://broker-2:19092,EXTERNAL://localhost:29093"
    assert broker["inter.broker.listener.name"] == "PLAINTEXT"
    assert broker["controller.quorum.voters"] == "1@controller-1:9093"


def test_images_by_release() -> None:
    assert image_for("3.9", {}) == "apache/kafka:3.9.1"
    assert image_for("3.9", {"version": "3.9.0"}) == "apache/kafka:3.9.0"
    assert image_for("4.1", {"image": "apache/kafka-native:4.1.0"}) == "apache/kafka-native:4.1.0"
    with pytest.raises(ValueError, match=r"3\.7"):
        image_for("3.5", {})


def test_black_box_checkers_on_recorded_observations() -> None:
    acked = [Acked("t", 0, 0, b"a"), Acked("t", 0, 1, b"b"), Acked("t", 0, 2, b"c")]
    assert lost_acknowledged(acked, {("t", 0): {0: b"a", 1: b"b", 2: b"c"}}) == []
    lost = lost_acknowledged(acked, {("t", 0): {0: b"a", 1: b"x"}})
    assert [v.property for v in lost] == ["P-ACK", "P-ACK"] and "another record" in lost[0].message
    views = {("t", 0): PartitionView(101, (102, 103), (101, 102, 103)), ("t", 1): PartitionView(-1, (101,), (101,))}
    assert [v.property for v in leader_not_in_isr(views)] == ["LeaderInIsr"]
    down = {102: 100.0}
    assert fenced_in_isr(views, down, now=103.0, session_timeout_s=6) == []  # not settled yet
    assert [v.evidence["broker"] for v in fenced_in_isr(views, down, now=120.0, session_timeout_s=6)] == [102]
    last_member = {("t", 0): PartitionView(-1, (102,), (101, 102))}
    assert fenced_in_isr(last_member, down, now=120.0, session_timeout_s=6) == []  # §4.4: the last member stays


def test_cluster_target_surface() -> None:
    from adapters.registry import make_target

    target = make_target("kafka-cluster")
    assert target.levels == frozenset({"cluster"})
    assert "deliver" in target.unsupported_operations
    assert target.observable_fields == frozenset({"leader", "isr", "replicas"})  # type: ignore[attr-defined]


docker_reason = docker_unavailable()


@pytest.mark.docker
@pytest.mark.skipif(docker_reason is not None, reason=str(docker_reason))
@pytest.mark.parametrize("release", ["3.9", "4.1"])
def test_scenarios_against_a_real_controller_in_docker(release: str) -> None:
    from .conftest import isrcheck

    result = isrcheck("scenario", "conformance/scenarios/alter_partition_validation.yaml",
                      "conformance/scenarios/broker_lifecycle.yaml", "--adapter", "kafka-docker", "--kafka", release,
                      timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


@pytest.mark.docker
@pytest.mark.skipif(docker_reason is not None, reason=str(docker_reason))
def test_engine_against_a_real_controller_in_docker() -> None:
    from conformance.engine.campaign import CampaignConfig, run_campaign

    result = run_campaign(CampaignConfig(adapter="kafka-docker", release="3.9", examples=3, steps=15, seed=1,
                                         batch_size=3))
    assert not result.found, result.examples


@pytest.mark.docker
@pytest.mark.skipif(docker_reason is not None, reason=str(docker_reason))
def test_real_cluster_keeps_acknowledged_records() -> None:
    from adapters.kafka_cluster import KafkaClusterTarget, run_cluster_campaign

    violations = run_cluster_campaign(KafkaClusterTarget({}), "3.9", rounds=10, seed=1)
    assert violations == [], [v.to_json() for v in violations]


# Real controllers from KAFKA_HOME: tests/wire_e2e/test_kafka_home.py (runs wherever ../shared/kafka exists).
