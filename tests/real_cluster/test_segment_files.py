"""The segment-file reader behind `observe("replica_logs")` on segments built byte by byte in
Kafka's record-batch format v2 (kafka-python's batch builder, with the base offset and partition
leader epoch the broker would stamp): offsets, epochs, keys and values come back as written, in
base-offset order across segments; a control batch, an incomplete tail and a batch whose CRC fails
end nothing they should not. `test_replica_logs.py` checks it against `kafka-dump-log.sh` on a
real broker's segments."""

from __future__ import annotations

import struct
from pathlib import Path

from isrcheck.adapters.real_kafka.segment_files import read_partition, read_segment
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

CRC_AT, ATTRIBUTES_AT = 17, 21
"""Byte positions of the CRC and the attributes in a batch header (the CRC covers the attributes on)."""


def batch(base_offset: int, epoch: int, records: list[tuple[bytes | None, bytes]], control: bool = False) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for delta, (key, value) in enumerate(records):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=key, value=value, headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base_offset)  # stamped by the broker; outside the CRC
    struct.pack_into(">i", data, 12, epoch)
    if control:
        attributes = struct.unpack_from(">h", data, ATTRIBUTES_AT)[0] | 0x20
        struct.pack_into(">h", data, ATTRIBUTES_AT, attributes)
        struct.pack_into(">I", data, CRC_AT, calc_crc32c(bytes(data[ATTRIBUTES_AT:])))
    return bytes(data)


def test_offsets_epochs_keys_and_values_come_back_in_base_offset_order(tmp_path: Path) -> None:
    partition = tmp_path / "t-0"
    partition.mkdir()
    (partition / "00000000000000000000.log").write_bytes(
        batch(0, 0, [(None, b"v0"), (b"k1", b"v1")]) + batch(2, 0, [(None, b"commit")], control=True)
        + batch(3, 2, [(None, b"v3")]))
    (partition / "00000000000000000004.log").write_bytes(batch(4, 4, [(None, b"v4"), (None, b"v5")]))
    (partition / "00000000000000000000.index").write_bytes(b"\0" * 64)
    assert read_partition(partition) == [[0, 0, None, "v0"], [1, 0, "k1", "v1"], [3, 2, None, "v3"],
                                         [4, 4, None, "v4"], [5, 4, None, "v5"]]


def test_an_incomplete_tail_or_a_bad_crc_ends_the_segment(tmp_path: Path) -> None:
    whole, next_batch = batch(0, 1, [(None, b"a")]), batch(1, 1, [(None, b"b"), (None, b"c")])
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(whole + next_batch[:-3])
    assert read_segment(segment) == [[0, 1, None, "a"]]
    corrupt = bytearray(next_batch)
    corrupt[-1] ^= 0xFF
    segment.write_bytes(whole + bytes(corrupt) + batch(3, 1, [(None, b"d")]))
    assert read_segment(segment) == [[0, 1, None, "a"]]
    segment.write_bytes(whole + next_batch + b"\0" * 100)  # preallocated space
    assert read_segment(segment) == [[0, 1, None, "a"], [1, 1, None, "b"], [2, 1, None, "c"]]


def test_a_replica_without_a_directory_holds_nothing(tmp_path: Path) -> None:
    assert read_partition(tmp_path / "t-0") == []
