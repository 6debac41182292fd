"""Round-trips of every (API, version) in the codec table, requests and responses, plus golden
bytes pinning the hand-written AlterPartition v0/v1 layout (controller.md §2.1) and the header
versions (§9.1)."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from isrcheck.adapters.wire.apis import (
    ALTER_PARTITION,
    API_TABLE,
    API_VERSIONS,
    DESCRIBE_CLUSTER,
    ApiVersionClasses,
    lookup,
    nested_class,
)
from isrcheck.adapters.wire.codec import (
    NO_THROTTLE,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    unframe,
)
from isrcheck.adapters.wire.guard import read_entity, write_entity
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8, i32, i64

ENTRIES: list[ApiVersionClasses] = [entry for spec in API_TABLE.values() for entry in spec.versions.values()]
IDS = [f"{API_TABLE[e.api_key].name}-v{e.api_version}" for e in ENTRIES]

ROUND_TRIP_SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_table_covers_the_brief() -> None:
    """Every API of controller.md §9.1/§9.2 the suite drives, with the expected version ranges."""
    ranges = {
        spec.name: (spec.version_range.min_version, spec.version_range.max_version) for spec in API_TABLE.values()
    }
    assert ranges == {
        "api_versions": (0, 4),
        "create_topics": (2, 7),
        "delete_topics": (1, 6),
        "create_partitions": (0, 3),
        "elect_leaders": (0, 2),
        "alter_partition_reassignments": (0, 1),
        "alter_partition": (0, 3),
        "describe_cluster": (0, 2),
        "broker_registration": (0, 4),
        "broker_heartbeat": (0, 2),
        "unregister_broker": (0, 0),
    }


def check_request_round_trip(entry: ApiVersionClasses, data: st.DataObject) -> None:
    entity = data.draw(st.from_type(entry.request), label="request")
    correlation_id = data.draw(st.integers(-(2**31), 2**31 - 1), label="correlation_id")
    client_id = data.draw(st.none() | st.text(max_size=20), label="client_id")
    frame = encode_request(entity, correlation_id, client_id)
    decoded = decode_request(unframe(frame))
    assert (decoded.api_key, decoded.api_version) == (entry.api_key, entry.api_version)
    assert decoded.correlation_id == correlation_id
    assert decoded.client_id == client_id
    assert decoded.entity == entity


def check_response_round_trip(entry: ApiVersionClasses, data: st.DataObject) -> None:
    entity = data.draw(st.from_type(entry.response), label="response")
    if entry.api_key == API_VERSIONS and entity.error_code == ErrorCode.unsupported_version:
        # KIP-511: such a response is always read as v0; covered in test_wire_codec_errors.
        entity = dataclasses.replace(entity, error_code=ErrorCode.none)
    correlation_id = data.draw(st.integers(-(2**31), 2**31 - 1), label="correlation_id")
    frame = encode_response(entity, correlation_id)
    assert decode_response(unframe(frame), entry.api_key, entry.api_version) == (correlation_id, entity)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
@ROUND_TRIP_SETTINGS
@given(data=st.data())
def test_request_frame_round_trip(entry: ApiVersionClasses, data: st.DataObject) -> None:
    check_request_round_trip(entry, data)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
@ROUND_TRIP_SETTINGS
@given(data=st.data())
def test_response_frame_round_trip(entry: ApiVersionClasses, data: st.DataObject) -> None:
    check_response_round_trip(entry, data)


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
@settings(ROUND_TRIP_SETTINGS, max_examples=300)
@given(data=st.data())
def test_frame_round_trip_thorough(entry: ApiVersionClasses, data: st.DataObject) -> None:
    check_request_round_trip(entry, data)
    check_response_round_trip(entry, data)


def test_alter_partition_v0_request_golden_bytes() -> None:
    """v0: TopicName (compact string) and no LeaderRecoveryState; all flexible (§2.1)."""
    v0 = lookup(ALTER_PARTITION, 0).request
    topic_cls, partition_cls = nested_class(v0, "TopicData"), nested_class(v0, "PartitionData")
    request = v0(
        broker_id=i32(1),
        broker_epoch=i64(5),
        topics=(
            topic_cls(
                topic_name="t",
                partitions=(
                    partition_cls(
                        partition_index=i32(0),
                        leader_epoch=i32(3),
                        new_isr=(i32(1), i32(2)),
                        partition_epoch=i32(7),
                    ),
                ),
            ),
        ),
    )
    expected = bytes.fromhex(
        "00000001"  # BrokerId
        "0000000000000005"  # BrokerEpoch
        "02"  # Topics: compact array of 1
        "0274"  # TopicName "t"
        "02"  # Partitions: 1
        "00000000"  # PartitionIndex
        "00000003"  # LeaderEpoch
        "03 00000001 00000002"  # NewIsr [1, 2]
        "00000007"  # PartitionEpoch
        "00 00 00"  # tagged fields: partition, topic, request
    )
    assert write_entity(request) == expected
    assert read_entity(v0, expected) == (request, len(expected))


def test_alter_partition_v1_places_leader_recovery_state_before_partition_epoch() -> None:
    """Wire order follows the JSON field order: ... NewIsr, LeaderRecoveryState, PartitionEpoch."""
    v1 = lookup(ALTER_PARTITION, 1).response
    topic_cls, partition_cls = nested_class(v1, "TopicData"), nested_class(v1, "PartitionData")
    response = v1(
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        topics=(
            topic_cls(
                topic_name="t",
                partitions=(
                    partition_cls(
                        partition_index=i32(0),
                        error_code=ErrorCode.none,
                        leader_id=i32(1),
                        leader_epoch=i32(3),
                        isr=(i32(1),),
                        leader_recovery_state=i8(1),
                        partition_epoch=i32(7),
                    ),
                ),
            ),
        ),
    )
    expected = bytes.fromhex(
        "00000000 0000"  # ThrottleTimeMs, ErrorCode
        "02 0274 02"  # Topics[1], TopicName "t", Partitions[1]
        "00000000 0000 00000001 00000003"  # PartitionIndex, ErrorCode, LeaderId, LeaderEpoch
        "02 00000001"  # Isr [1]
        "01"  # LeaderRecoveryState
        "00000007"  # PartitionEpoch
        "00 00 00"  # tagged fields: partition, topic, response
    )
    assert write_entity(response) == expected
    assert read_entity(v1, expected) == (response, len(expected))


def test_alter_partition_v2_matches_v1_except_topic_id() -> None:
    """Cross-check the hand-written v1 against kio's generated v2 byte for byte."""
    v1, v2 = lookup(ALTER_PARTITION, 1).request, lookup(ALTER_PARTITION, 2).request
    topic_id = uuid.UUID(int=0x0123456789ABCDEF0123456789ABCDEF)

    def build(cls: Any, topic: dict[str, Any]) -> Any:
        partition = nested_class(cls, "PartitionData")(
            partition_index=i32(2),
            leader_epoch=i32(4),
            new_isr=(i32(3),),
            leader_recovery_state=i8(1),
            partition_epoch=i32(9),
        )
        return cls(
            broker_id=i32(3),
            broker_epoch=i64(-1),
            topics=(nested_class(cls, "TopicData")(**topic, partitions=(partition,)),),
        )

    bytes_v1 = write_entity(build(v1, {"topic_name": "abc"}))
    bytes_v2 = write_entity(build(v2, {"topic_id": topic_id}))
    name_field = bytes.fromhex("04") + b"abc"
    assert bytes_v1.replace(name_field, topic_id.bytes, 1) == bytes_v2


def test_header_versions() -> None:
    """Flexible APIs: request header v2 (tag byte) / response header v1 (tag byte); non-flexible
    ones v1/v0; ApiVersions responses always header v0 (controller.md §9.1, KIP-511)."""
    # ApiVersions v3 request: flexible -> header v2 ends with an empty tagged-field section.
    av3 = lookup(API_VERSIONS, 3)
    frame = encode_request(av3.request(client_software_name="a", client_software_version="1"), 7, "c")
    assert unframe(frame) == bytes.fromhex("0012 0003 00000007 0001 63 00 0261 0231 00")
    # ApiVersions v0 request: header v1, no tag byte, empty body.
    frame = encode_request(lookup(API_VERSIONS, 0).request(), 7, None)
    assert unframe(frame) == bytes.fromhex("0012 0000 00000007 ffff")
    # ApiVersions v3 response: header v0 (no tag byte) even though the body is flexible.
    response = av3.response(error_code=ErrorCode.none, api_keys=(), throttle_time=NO_THROTTLE)
    assert unframe(encode_response(response, 7)) == bytes.fromhex("00000007 0000 01 00000000 00")
    # DescribeCluster v0 response: flexible -> header v1 with a tag byte after the correlation id.
    dc0 = lookup(DESCRIBE_CLUSTER, 0).response(
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        cluster_id="x",
        brokers=(),
        cluster_authorized_operations=i32(0),
    )
    assert unframe(encode_response(dc0, 7))[:5] == bytes.fromhex("00000007 00")
