"""Observation by replay is exact: the reference's own records, written in Kafka's JSON form
(isrcheck.adapters.kafka_wire.metadata_records) and replayed with the §1.1 merge rule
(isrcheck.adapters.kafka_wire.metadata_image),
give back every partition and broker exactly — for every bundled scenario on every release."""

from __future__ import annotations

import pytest
from isrcheck.adapters.kafka_wire.metadata_image import LRS_NAMES, MetadataImage, merge
from isrcheck.adapters.kafka_wire.metadata_log import MetadataLogTail, MetadataLogWriter, log_path
from isrcheck.adapters.kafka_wire.metadata_records import MetadataEntry, kafka_uuid, parse_kafka_uuid, reference_entries
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.scenario.load import load_all
from isrcheck.conformance.scenario.run import run_scenario
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.release import PROFILES

SCENARIOS = [s for s in load_all(["conformance/scenarios"]) if s.level == "controller"]


class RecordingTarget(ReferenceTarget):
    """Keeps the controller of the last run (the runner closes it before we look)."""

    def open(self, release: str, config: dict[str, object]) -> None:  # type: ignore[override]
        super().open(release, config)
        self.last: Controller = self.controller


def replayed(controller: Controller) -> MetadataImage:
    image = MetadataImage()
    for offset, record in controller.log:
        image.apply_all(reference_entries(offset, record, controller.topic_ids))
    return image


def assert_same_state(controller: Controller, image: MetadataImage) -> None:
    for (topic, index), state in controller.partitions.items():
        seen = image.partition(topic, index)
        assert seen is not None, (topic, index)
        assert (seen.replicas, seen.isr, seen.leader, seen.leader_epoch, seen.partition_epoch) == (
            state.replicas, state.isr, state.leader, state.leader_epoch, state.partition_epoch)
        assert LRS_NAMES[seen.leader_recovery_state] == state.leader_recovery_state.name
        assert (seen.adding, seen.removing, seen.elr, seen.last_known_elr) == (
            state.adding, state.removing, state.elr, state.last_known_elr)
    assert set(image.brokers) == set(controller.brokers)
    for broker, registration in controller.brokers.items():
        seen_broker = image.broker(broker)
        assert seen_broker is not None
        assert (seen_broker.epoch, seen_broker.fenced, seen_broker.in_controlled_shutdown) == (
            registration.epoch, registration.fenced, registration.in_controlled_shutdown)
        assert seen_broker.register_offset == controller.register_offsets[broker]


@pytest.mark.parametrize("release", sorted(PROFILES))
def test_replay_reproduces_the_reference_state_after_every_scenario(release: str) -> None:
    target = RecordingTarget()
    checked = 0
    for scenario in SCENARIOS:
        result = run_scenario(scenario, target, release)
        if result.status == "skipped":
            continue
        assert_same_state(target.last, replayed(target.last))
        checked += 1
    assert checked > 100


def test_merge_follows_the_epoch_rule() -> None:
    """§1.1: partition epoch +1 always; leader epoch +1 iff the record names a leader (even -1)."""
    image = MetadataImage()
    image.apply(MetadataEntry(1, "TOPIC_RECORD", 0, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}))
    image.apply(MetadataEntry(2, "PARTITION_RECORD", 0, {"partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ",
                                                          "replicas": [1, 2], "isr": [1, 2], "leader": 1,
                                                          "leaderEpoch": 0, "partitionEpoch": 0}))
    state = image.partition("t", 0)
    assert state is not None
    assert merge(state, {"isr": [1]}).leader_epoch == 0
    assert merge(state, {"isr": [1]}).partition_epoch == 1
    assert merge(state, {"leader": 1}).leader_epoch == 1
    assert merge(state, {"leader": -1}).leader == -1
    assert merge(state, {"leader": -2}).leader_epoch == 0
    assert merge(state, {"leaderRecoveryState": 1}).leader_recovery_state == 1
    assert merge(state, {"leaderRecoveryState": -1}).leader_recovery_state == 0


def test_uuid_round_trip_in_kafka_form() -> None:
    import uuid

    value = uuid.uuid4()
    assert parse_kafka_uuid(kafka_uuid(value)) == value
    assert len(kafka_uuid(value)) == 22
    assert kafka_uuid(uuid.UUID(int=1)) == "AAAAAAAAAAAAAAAAAAAAAQ"


def test_log_tail_reads_only_complete_lines_and_notices_a_restart(tmp_path: object) -> None:
    from pathlib import Path

    directory = Path(str(tmp_path))
    writer = MetadataLogWriter(directory)
    tail = MetadataLogTail(log_path(directory))
    writer.write([MetadataEntry(1, "NO_OP_RECORD")])
    with log_path(directory).open("a") as handle:
        handle.write('{"offset": 2, "type": "NO_OP')
    assert [e.offset for e in tail.poll()] == [1]
    with log_path(directory).open("a") as handle:
        handle.write('_RECORD"}\n')
    assert [e.offset for e in tail.poll()] == [2]
    writer.close()
    MetadataLogWriter(directory).write([MetadataEntry(7, "NO_OP_RECORD")])  # a restarted server truncates
    entries = tail.poll()
    assert tail.reset_detected and [e.offset for e in entries] == [7]
