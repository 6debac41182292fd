"""Malformed input at the codec level: every failure is a WireError, never a stray IndexError,
struct.error, kio exception - or a process abort from kio's native reader (see guard.py)."""

from __future__ import annotations

import io
import random

import pytest
from isrcheck.adapters.wire.apis import (
    ALTER_PARTITION,
    API_TABLE,
    API_VERSIONS,
    BROKER_HEARTBEAT,
    VersionRange,
    classes_of,
    lookup,
    nested_class,
)
from isrcheck.adapters.wire.codec import (
    NO_THROTTLE,
    decode_request,
    decode_request_header,
    decode_response,
    encode_request,
    encode_response,
    frame,
    parse_frame_size,
    unframe,
    unsupported_api_versions_response,
)
from isrcheck.adapters.wire.errors import FrameSizeError, UnsupportedApiError, WireError
from isrcheck.adapters.wire.guard import read_entity, write_entity
from kio.schema.errors import ErrorCode
from kio.serial.writers import write_unsigned_varint
from kio.static.primitive import i16, i32, uvarint

from .samples import minimal, mutate, valid_payloads


def heartbeat_request(version: int = 1) -> object:
    return lookup(BROKER_HEARTBEAT, version).request(
        broker_id=i32(1), broker_epoch=10, current_metadata_offset=2**62, want_fence=False, want_shut_down=False
    )


def uvarint_bytes(value: int) -> bytes:
    buffer = io.BytesIO()
    write_unsigned_varint(buffer, uvarint(value))
    return buffer.getvalue()


def test_unknown_api_key_is_unsupported_with_correlation_id() -> None:
    payload = bytes.fromhex("0003 0000 0000002a ffff")  # Metadata: not in the table
    with pytest.raises(UnsupportedApiError, match="unknown API key 3") as info:
        decode_request(payload)
    assert (info.value.api_key, info.value.correlation_id) == (3, 42)


def test_unsupported_version_of_known_key() -> None:
    payload = bytes.fromhex("0038 0009 00000001 ffff 00")  # AlterPartition v9
    with pytest.raises(UnsupportedApiError, match="version 9") as info:
        decode_request(payload)
    assert (info.value.api_key, info.value.api_version, info.value.correlation_id) == (56, 9, 1)


def test_unsupported_api_versions_header_must_still_parse() -> None:
    """A garbage ApiVersions v99 header is closed on, not answered (Kafka parses the header)."""
    with pytest.raises(WireError) as info:
        decode_request(bytes.fromhex("0012 0063 00000001 7fff"))  # client_id runs off the end
    assert not isinstance(info.value, UnsupportedApiError)
    with pytest.raises(UnsupportedApiError):
        decode_request(bytes.fromhex("0012 0063 00000001 ffff 00") + b"anything")


@pytest.mark.parametrize("size", [0, 1, 7])
def test_short_header(size: int) -> None:
    with pytest.raises(WireError, match="truncated request header"):
        decode_request_header(bytes(size))


def test_every_truncation_of_every_request_is_a_wire_error() -> None:
    for spec in API_TABLE.values():
        for entry in spec.versions.values():
            payload = unframe(encode_request(minimal(entry.request), 5, "client"))
            decode_request(payload)
            for cut in range(len(payload)):
                with pytest.raises(WireError):
                    decode_request(payload[:cut])


def test_trailing_bytes_are_rejected() -> None:
    payload = unframe(encode_request(heartbeat_request(), 1))
    with pytest.raises(WireError, match="1 trailing bytes"):
        decode_request(payload + b"\x00")
    response = unframe(
        encode_response(
            lookup(BROKER_HEARTBEAT, 1).response(
                throttle_time=NO_THROTTLE, error_code=ErrorCode.none, should_shut_down=False
            ),
            1,
        )
    )
    with pytest.raises(WireError, match="trailing"):
        decode_response(response + b"\x00\x00", BROKER_HEARTBEAT, 1)


def test_huge_compact_array_count_is_rejected_not_allocated() -> None:
    """Without guard.py this frame makes kio's Rust reader abort the process (~34 GB request)."""
    body = bytes.fromhex("00000001 0000000000000005") + uvarint_bytes(2**32 - 1)
    header = bytes.fromhex("0038 0002 00000001 ffff 00")
    with pytest.raises(WireError, match="array declares 4294967294 elements"):
        decode_request(header + body)


def test_huge_legacy_array_count_is_rejected() -> None:
    """Non-flexible arrays (CreateTopics v2) carry an int32 count."""
    header = bytes.fromhex("0013 0002 00000001 ffff")
    with pytest.raises(WireError, match="array declares 2147483647 elements"):
        decode_request(header + bytes.fromhex("7fffffff"))
    with pytest.raises(WireError, match="negative array length"):
        decode_request(header + bytes.fromhex("fffffff0"))


def test_huge_nested_array_count_is_rejected() -> None:
    """A count deep inside an otherwise valid AlterPartition v3 (NewIsrWithEpochs)."""
    body = (
        bytes.fromhex("00000001 ffffffffffffffff 02")  # broker, epoch, 1 topic
        + bytes(16)  # topic id
        + bytes.fromhex("02 00000000 00000001")  # 1 partition, index, leader epoch
        + uvarint_bytes(2**31)  # NewIsrWithEpochs count
    )
    with pytest.raises(WireError, match="array declares"):
        decode_request(bytes.fromhex("0038 0003 00000001 ffff 00") + body)


def test_unknown_tagged_fields_are_skipped_like_kafka_does() -> None:
    """kio alone raises KeyError on an unknown tag; Kafka ignores it (forward compatibility)."""
    request = heartbeat_request(1)
    body = write_entity(request)
    assert body[-1] == 0  # empty top-level tagged-field section
    extra = uvarint_bytes(1) + uvarint_bytes(77) + uvarint_bytes(3) + b"xyz"
    entity, end = read_entity(type(request), body[:-1] + extra)
    assert entity == request
    assert end == len(body) - 1 + len(extra)


def test_known_tagged_field_with_wrong_size_is_rejected() -> None:
    """Tag 1 of ApiVersionsResponse v3 is an int64.  kio ignores the declared size of a known tag
    and reads 8 bytes; a size that disagrees would desynchronise the offsets, so it is refused."""
    response_cls = lookup(API_VERSIONS, 3).response
    prefix = bytes.fromhex("0000 01 00000000") + uvarint_bytes(1)
    with pytest.raises(WireError, match="declares 10 bytes, value uses 8"):
        read_entity(response_cls, prefix + bytes.fromhex("01 0a") + bytes(10))
    with pytest.raises(WireError, match="BufferUnderflow"):  # value cut at the declared 3 bytes
        read_entity(response_cls, prefix + bytes.fromhex("01 03") + bytes(8))


def test_duplicate_tag_is_rejected() -> None:
    response_cls = lookup(API_VERSIONS, 3).response
    tag = bytes.fromhex("01 08") + bytes(8)
    body = bytes.fromhex("0000 01 00000000") + uvarint_bytes(2) + tag + tag
    with pytest.raises(WireError, match="appears twice"):
        read_entity(response_cls, body)


def test_bad_values_are_wire_errors() -> None:
    payload = bytearray(unframe(encode_request(heartbeat_request(0), 1)))
    payload[-3] = 7  # want_fence: not a boolean
    with pytest.raises(WireError, match="cannot decode"):
        decode_request(bytes(payload))
    response = bytes.fromhex("00000001 00 00000000 270f 00 01 00")  # error code 9999
    with pytest.raises(WireError, match="ErrorCode"):
        decode_response(response, BROKER_HEARTBEAT, 0)


def test_frame_size_limits() -> None:
    assert parse_frame_size(bytes.fromhex("00000010")) == 16
    with pytest.raises(FrameSizeError, match="negative"):
        parse_frame_size(bytes.fromhex("ffffffff"))
    with pytest.raises(FrameSizeError, match="exceeds"):
        parse_frame_size((100 * 1024 * 1024 + 1).to_bytes(4, "big"))
    with pytest.raises(WireError, match="announces"):
        unframe(frame(b"abc")[:-1])


def test_encode_rejects_wrong_classes_and_values() -> None:
    with pytest.raises(UnsupportedApiError, match="not a kio payload"):
        encode_request(object(), 1)
    response = lookup(BROKER_HEARTBEAT, 0).response(
        throttle_time=NO_THROTTLE, error_code=ErrorCode.none, should_shut_down=False
    )
    with pytest.raises(UnsupportedApiError, match="is a response"):
        encode_request(response, 1)
    with pytest.raises(UnsupportedApiError, match="is a request"):
        encode_response(heartbeat_request(), 1)
    with pytest.raises(WireError):
        encode_request(heartbeat_request(), 2**31)
    bad = lookup(BROKER_HEARTBEAT, 0).request(
        broker_id=2**40, broker_epoch=1, current_metadata_offset=1, want_fence=False, want_shut_down=False
    )
    with pytest.raises(WireError, match="cannot encode"):
        encode_request(bad, 1)


def test_kio_lookalike_class_is_rejected() -> None:
    """kio's own AlterPartition v2 is the table's class; our v0 class must not pass as another."""
    v0 = lookup(ALTER_PARTITION, 0).request
    assert classes_of(v0).api_version == 0

    class Impostor:
        __api_key__ = i16(56)
        __version__ = i16(2)

    with pytest.raises(UnsupportedApiError, match="not the table's class"):
        classes_of(Impostor)


def test_api_versions_unsupported_response_is_read_as_v0() -> None:
    """KIP-511: whatever version the client asked for, the error body is v0."""
    response = unsupported_api_versions_response(VersionRange(0, 3))
    payload = unframe(encode_response(response, 9))
    for asked in range(5):
        correlation_id, decoded = decode_response(payload, API_VERSIONS, asked)
        assert correlation_id == 9
        assert decoded.error_code == ErrorCode.unsupported_version
        assert [(k.api_key, k.min_version, k.max_version) for k in decoded.api_keys] == [(18, 0, 3)]


def test_random_mutations_raise_only_wire_errors() -> None:
    """20 000 bit flips, splices, truncations and hostile counts in valid payloads, both directions."""
    rng = random.Random(20260511)
    samples = valid_payloads()
    for _ in range(20_000):
        is_request, key, version, payload = rng.choice(samples)
        mutated = mutate(rng, payload)
        try:
            if is_request:
                decode_request(mutated)
            else:
                decode_response(mutated, key, version)
        except WireError:
            pass


def test_minimal_helper_round_trips() -> None:
    for spec in API_TABLE.values():
        for entry in spec.versions.values():
            for cls in (entry.request, entry.response):
                entity = minimal(cls)
                assert read_entity(cls, write_entity(entity))[0] == entity, cls
    assert nested_class(lookup(ALTER_PARTITION, 0).request, "TopicData").__module__.startswith("isrcheck.adapters")
