"""Observing a real KRaft controller by reading its committed metadata log over Raft Fetch.

A broker learns the metadata log as a Raft *observer*: Fetch requests on the controller listener
for `__cluster_metadata` partition 0 (topic id `Uuid.METADATA_TOPIC_ID`, 0...01), answered by the
quorum leader (`KafkaRaftClient.handleFetchRequest`). `RaftFetchSource` does the same with replica
id -1, which the leader treats as a non-replica reader (`LeaderState.updateReplicaState` ignores
negative ids), so observing changes nothing: no voter/observer state, no high-watermark effect.

* Only **committed** records are returned: the leader serves uncommitted data too, so batches at
  or beyond the response's high watermark are not consumed (they are fetched again next time).
  A controller answers a write RPC only after its records are committed (controller.md §2.2 step
  6), so a look after an answer sees them.
* Record batches are decoded with kio (`kio.records.readers.read_batch`, CRC checked); control
  batches (LeaderChange, snapshot header/footer, KRaft version/voters records) are skipped; each
  data record's value is decoded with the release's own schemas (`isrcheck.adapters.kafka_wire.metadata_schema`).
* `FENCED_LEADER_EPOCH` / `UNKNOWN_LEADER_EPOCH` carry the current leader epoch: the fetch is
  retried with it. `NOT_LEADER_OR_FOLLOWER` names the leader: the source moves to that voter when
  it knows its address (controller fail-over).
* Snapshots: a fetch below the leader's log start offset is answered with a `SnapshotId`. A short
  run never gets there (the metadata log is only truncated after a snapshot *and* the retention
  limits, 100 MB / 7 days by default), so this raises instead of fetching the snapshot.

It needs nothing but the controller's address (and the release's `kafka-metadata` jar for the
schemas), so the same code reads a local process, a container and a remote controller.
"""

from __future__ import annotations

import datetime
import socket
import time
import uuid
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.kafka_wire.metadata_records import MetadataEntry
from isrcheck.adapters.kafka_wire.metadata_schema import RecordDecoder
from isrcheck.adapters.wire.apis import API_VERSIONS, lookup
from isrcheck.adapters.wire.codec import frame, parse_frame_size
from isrcheck.adapters.wire.errors import ConnectionClosedError, WireError, WireTimeoutError
from isrcheck.adapters.wire.guard import read_entity, write_entity
from kio.records.readers import read_batch
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32, i32Timedelta

FETCH = 1
METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)
"""`Uuid.METADATA_TOPIC_ID` (Kafka's `new Uuid(0L, 1L)`)."""
CONTROL_FLAG = 0x20
"""RecordBatch attributes bit 5: a control batch."""
COMPRESSION_MASK = 0x07
BATCH_HEADER_BYTES = 12
"""baseOffset int64 + batchLength int32."""
MAX_FETCH_BYTES = 8 * 1024 * 1024
KIO_FETCH_VERSIONS = range(4, 19)


class MetadataFetchError(WireError):
    """The controller's metadata log cannot be read (error code, snapshot needed, bad data)."""


def fetch_classes(version: int) -> tuple[type[Any], type[Any], Any]:
    """kio's Fetch request/response classes and request module at `version`."""
    import importlib

    request_module = importlib.import_module(f"kio.schema.fetch.v{version}.request")
    response_module = importlib.import_module(f"kio.schema.fetch.v{version}.response")
    return request_module.FetchRequest, response_module.FetchResponse, request_module


class RaftFetchSource:
    """A `MetadataSource` (isrcheck.adapters.kafka_wire.metadata_log) reading committed records by Raft Fetch."""

    def __init__(self, host: str, port: int, decoder: RecordDecoder, *, timeout_s: float = 10.0,
                 voters: Mapping[int, tuple[str, int]] | None = None) -> None:
        self.address = (host, port)
        self.decoder = decoder
        self.timeout_s = timeout_s
        self.voters = dict(voters or {})
        self.reset_detected = False
        self.next_offset = 0
        self.last_fetched_epoch = 0
        self.leader_epoch = 0
        """Sent as CurrentLeaderEpoch; 0 at first (it may not be below LastFetchedEpoch), corrected by
        the leader's FENCED_LEADER_EPOCH answer."""
        self.high_watermark = 0
        self.sock: socket.socket | None = None
        self.version = 0
        self.correlation = 0

    # ------------------------------------------------------------------ connection

    def connect(self) -> socket.socket:
        if self.sock is not None:
            return self.sock
        try:
            sock = socket.create_connection(self.address, timeout=self.timeout_s)
        except OSError as error:
            raise ConnectionClosedError(f"cannot connect to {self.address[0]}:{self.address[1]}: {error}") from error
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        try:
            entry = lookup(API_VERSIONS, 3)
            versions = self.round_trip(entry.request(client_software_name="isrcheck",
                                                     client_software_version="0.1.0"), entry.response)
            advertised = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in versions.api_keys}
            if FETCH not in advertised:
                raise MetadataFetchError(f"{self.describe()} does not serve Fetch")
            low, high = advertised[FETCH]
            common = [v for v in KIO_FETCH_VERSIONS if low <= v <= high]
            if not common:
                raise MetadataFetchError(f"{self.describe()} serves Fetch v{low}-v{high}, kio has v4-v18")
            self.version = common[-1]
        except BaseException:
            self.close()
            raise
        return sock

    def describe(self) -> str:
        return f"controller {self.address[0]}:{self.address[1]}"

    def round_trip(self, request: Any, response_cls: type[Any]) -> Any:
        sock = self.sock
        assert sock is not None
        self.correlation = self.correlation % (2**31 - 1) + 1
        header = request.__header_schema__(request_api_key=request.__api_key__,
                                           request_api_version=request.__version__,
                                           correlation_id=i32(self.correlation), client_id="isrcheck-observer")
        try:
            sock.sendall(frame(write_entity(header) + write_entity(request)))
            size = parse_frame_size(self.receive(sock, 4), 1 << 30)
            payload = self.receive(sock, size)
        except TimeoutError as error:
            self.close()
            raise WireTimeoutError(f"{self.describe()}: fetch timed out") from error
        except OSError as error:
            self.close()
            raise ConnectionClosedError(f"{self.describe()}: {error}") from error
        received, offset = read_entity(response_cls.__header_schema__, payload, 0)
        if int(received.correlation_id) != self.correlation:
            self.close()
            raise WireError(f"{self.describe()}: correlation id mismatch")
        response, _ = read_entity(response_cls, payload, offset)
        return response

    @staticmethod
    def receive(sock: socket.socket, size: int) -> bytes:
        chunks, remaining = [], size
        while remaining:
            chunk = sock.recv(min(remaining, 1 << 20))
            if not chunk:
                raise ConnectionClosedError("connection closed by the controller")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()

    # ------------------------------------------------------------------ fetching

    def fetch_once(self) -> Any:
        """One Fetch at `next_offset`; returns the partition's response data."""
        self.connect()
        request_cls, response_cls, module = fetch_classes(self.version)
        partition = module.FetchPartition(
            partition=i32(0), current_leader_epoch=i32(self.leader_epoch), fetch_offset=self.next_offset,
            last_fetched_epoch=i32(self.last_fetched_epoch), partition_max_bytes=i32(MAX_FETCH_BYTES))
        topic_key = {"topic_id": METADATA_TOPIC_ID} if self.version >= 13 else {"topic": METADATA_TOPIC}
        topic = module.FetchTopic(partitions=(partition,), **topic_key)
        values: dict[str, Any] = {"max_wait": i32Timedelta.parse(_ZERO), "min_bytes": i32(0),
                                  "max_bytes": i32(MAX_FETCH_BYTES), "topics": (topic,)}
        if "forgotten_topics_data" in request_cls.__dataclass_fields__:
            values["forgotten_topics_data"] = ()
        if "rack_id" in request_cls.__dataclass_fields__:
            values["rack_id"] = ""
        response = self.round_trip(request_cls(**values), response_cls)
        if response.error_code != ErrorCode.none:
            raise MetadataFetchError(f"{self.describe()}: Fetch failed with {response.error_code.name}")
        return response.responses[0].partitions[0]

    def follow_leader(self, data: Any) -> None:
        leader = int(data.current_leader.leader_id)
        epoch = int(data.current_leader.leader_epoch)
        if epoch >= 0:
            self.leader_epoch = epoch
        address = self.voters.get(leader)
        if address is not None and address != self.address:
            self.close()
            self.address = address

    def poll(self) -> list[MetadataEntry]:
        entries: list[MetadataEntry] = []
        attempts = 0
        while True:
            try:
                data = self.fetch_once()
            except (ConnectionClosedError, WireTimeoutError):
                others = [a for a in self.voters.values() if a != self.address]
                attempts += 1
                if not others or attempts > 50:
                    raise
                self.close()  # the controller went away (fail-over): ask another voter who leads
                self.address = others[attempts % len(others)]
                time.sleep(0.1)
                continue
            code = data.error_code
            if code in (ErrorCode.fenced_leader_epoch, ErrorCode.unknown_leader_epoch,
                        ErrorCode.not_leader_or_follower):
                attempts += 1
                if attempts > 50:
                    raise MetadataFetchError(f"{self.describe()}: no quorum leader to fetch from ({code.name})")
                self.follow_leader(data)
                if code is not ErrorCode.fenced_leader_epoch and int(data.current_leader.leader_id) < 0:
                    time.sleep(0.1)
                continue
            if code != ErrorCode.none:
                raise MetadataFetchError(f"{self.describe()}: Fetch of {METADATA_TOPIC} failed with {code.name}")
            if int(data.snapshot_id.end_offset) >= 0:
                raise MetadataFetchError(
                    f"{self.describe()}: the metadata log before offset {data.snapshot_id.end_offset} is only in a "
                    "snapshot (FetchSnapshot is not implemented: a short run never needs it)")
            if int(data.diverging_epoch.end_offset) >= 0:
                raise MetadataFetchError(f"{self.describe()}: committed log diverged at epoch "
                                         f"{data.diverging_epoch.epoch} (it cannot: Raft bug or a new cluster)")
            self.high_watermark = int(data.high_watermark)
            consumed = self.consume(bytes(data.records or b""), entries)
            if not consumed or self.next_offset >= self.high_watermark:
                return entries

    def consume(self, records: bytes, entries: list[MetadataEntry]) -> bool:
        """Decode whole batches below the high watermark; False when none was consumed."""
        position, consumed = 0, False
        while len(records) - position >= BATCH_HEADER_BYTES:
            length = int.from_bytes(records[position + 8:position + 12], "big", signed=True)
            end = position + BATCH_HEADER_BYTES + length
            if end > len(records):
                break
            batch, _ = read_batch(records, position)
            position = end
            last = int(batch.base_offset) + int(batch.last_offset_delta)
            if last >= self.high_watermark:
                break
            if int(batch.attributes) & COMPRESSION_MASK:
                raise MetadataFetchError(f"{self.describe()}: compressed metadata batch at {batch.base_offset}")
            if not int(batch.attributes) & CONTROL_FLAG:
                for record in batch.records:
                    if record.value is None:
                        continue
                    entry = self.decoder.decode(int(record.offset), bytes(record.value))
                    if entry is not None:
                        entries.append(entry)
            self.next_offset = last + 1
            self.last_fetched_epoch = int(batch.partition_leader_epoch)
            consumed = True
        return consumed


_ZERO = datetime.timedelta(0)
