"""One replica's log of one partition, read from the segment files in its broker's log directory
(``<log.dirs>/<topic>-<partition>/<base offset>.log``) — what P-LOG's black-box form is judged on
(`isrcheck.conformance.properties.p_log.views`).

Why the files, and read this way:

* A segment file holds the record batches exactly as the broker appended them, the same bytes a
  Fetch response carries (`FileRecords`, sent zero-copy), in the record-batch format v2 of every
  release from 3.3 to 4.1 (`DefaultRecordBatch`). Its batch header carries the base offset and
  the partition leader epoch, its records the key and value: all P-LOG compares.
* Reading them needs neither the broker's cooperation nor a stop: the broker appends through
  `FileChannel.write`, so the bytes are in the page cache every reader of the file sees, fsynced
  or not. A batch not yet whole (a read racing an append) is left out, as Kafka's own recovery
  leaves out an incomplete tail (`LogSegment.recover`); after the heal nothing is appended.
* The alternatives cost more and show less: a consumer's Fetch to a follower (KIP-392: served
  from Fetch v11 on, `FetchParams.fetchOnlyLeader`) reads only to that replica's high watermark,
  and kafka-python sends its fetches to the leader, so it would need a hand-built request per
  replica; `kafka-dump-log.sh --print-data-log` costs a JVM start per call and a text format to
  parse. Here the header is unpacked as the format defines it and the records decoded with
  kafka-python's own record decoder (what it decodes every Fetch response with), in
  milliseconds. `tests/real_cluster/test_replica_logs.py` checks this reader against
  `kafka-dump-log.sh` on a real broker's segments.

A record is ``[offset, leader_epoch, key, value]`` (key and value decoded as UTF-8 with
replacement, None when absent). Control batches (transaction markers, none in isrcheck's
workload) are left out: a consumer never sees them.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from kafka.record.default_records import DefaultRecordBatch

BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
"""`DefaultRecordBatch`'s header (Kafka's record-batch format v2): base offset, batch length,
partition leader epoch, magic, CRC, attributes, last offset delta, base timestamp, max timestamp,
producer id, producer epoch, base sequence, record count."""
LOG_OVERHEAD = 12
"""Base offset (8 bytes) and batch length (4): the length counts the bytes after these."""
CONTROL_FLAG = 0x20
"""`attributes` bit of a control batch (`DefaultRecordBatch.CONTROL_FLAG_MASK`)."""

Record = list[Any]


def text(raw: bytes | None) -> str | None:
    return None if raw is None else bytes(raw).decode("utf-8", errors="replace")


def read_segment(path: Path) -> list[Record]:
    """The records of one segment file, in file order, up to its first incomplete or invalid batch."""
    data = path.read_bytes()
    records: list[Record] = []
    position = 0
    while position + BATCH_HEADER.size <= len(data):
        _base_offset, length, leader_epoch, magic, _crc, attributes, *_rest = BATCH_HEADER.unpack_from(data, position)
        end = position + LOG_OVERHEAD + length
        if length <= 0 or end > len(data) or magic != 2:
            break  # the tail of a segment being appended to, or preallocated zeros
        batch = DefaultRecordBatch(data[position:end])
        if not batch.validate_crc():
            break
        if not attributes & CONTROL_FLAG:
            records += [[record.offset, leader_epoch, text(record.key), text(record.value)] for record in batch]
        position = end
    return records


def read_partition(directory: Path) -> list[Record]:
    """A replica's whole log: every segment of its partition directory in base-offset order (the
    file name is the base offset, zero-padded). No directory: the replica holds nothing."""
    if not directory.is_dir():
        return []
    records: list[Record] = []
    for segment in sorted(directory.glob("*.log")):
        records += read_segment(segment)
    return records
