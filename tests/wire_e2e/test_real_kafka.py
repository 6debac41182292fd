"""Real Kafka: everything that can be checked without Docker runs here (rendered properties and
command lines, dump-log parsing); real
controllers are in tests/wire_e2e/test_kafka_home.py, containers in tests/containers."""

from __future__ import annotations

import pytest
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.kafka_dump_log import DumpLogSource, parse_dump
from isrcheck.adapters.kafka_wire.metadata_image import MetadataImage
from isrcheck.adapters.real_kafka.kafka_properties import (
    controller_node,
    format_command,
    image_for,
    start_script,
)

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


def test_images_by_release() -> None:
    assert image_for("3.9", {}) == "apache/kafka:3.9.1"
    assert image_for("3.9", {"version": "3.9.0"}) == "apache/kafka:3.9.0"
    assert image_for("4.1", {"image": "apache/kafka-native:4.1.0"}) == "apache/kafka-native:4.1.0"
    with pytest.raises(ValueError, match=r"3\.7"):
        image_for("3.5", {})


def test_cluster_target_surface() -> None:
    from isrcheck.adapters.catalogue.registry import make_target

    target = make_target("kafka-cluster")
    assert target.levels == frozenset({"cluster"})
    assert "deliver" in target.unsupported_operations
    assert target.observable_fields == frozenset({"leader", "isr", "replicas", "leader_epoch"})
    assert getattr(target, "black_box_history", False)  # judged on its history (tests/cluster_history)


# Containers: tests/containers (docker-marked; CI builds the images and requires them).
# Real controllers from KAFKA_HOME: tests/wire_e2e/test_kafka_home.py (runs wherever ../shared/kafka exists).
