"""The JSON-lines metadata log `isrcheck serve-controller --metadata-log DIR` writes, and the tail
a wire target reads it with.

One line per record: ``{"offset": N, "type": ..., "version": V, "data": {...}}`` (the JSON form of
`isrcheck.adapters.kafka_wire.metadata_records`). The server appends and flushes a batch *before* it answers the
request that wrote it, so a client that has its answer finds the records in the file — the same
guarantee a KRaft controller gives by answering only after commit (controller.md §2.2 step 6,
§9.4 item 2). Records written by the wall clock (session expiry, §4.3) appear whenever they
happen.

Any source of metadata records offers `poll() -> list[MetadataEntry]` (new records since the
last call) and `reset_detected` (the log restarted, so the reader must start a new image).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Protocol

from isrcheck.adapters.kafka_wire.metadata_records import MetadataEntry

LOG_FILE_NAME = "__cluster_metadata.jsonl"


class MetadataSource(Protocol):
    reset_detected: bool

    def poll(self) -> list[MetadataEntry]:
        """Records appended since the previous call, in log order."""
        ...

    def close(self) -> None: ...


def log_path(directory: str | os.PathLike[str]) -> Path:
    return Path(directory) / LOG_FILE_NAME


class MetadataLogWriter:
    """Appends batches to ``DIR/__cluster_metadata.jsonl`` (truncated at start: a fresh controller)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        Path(directory).mkdir(parents=True, exist_ok=True)
        self.path = log_path(directory)
        self._file: IO[str] = self.path.open("w", encoding="utf-8")

    def write(self, entries: Iterable[MetadataEntry]) -> None:
        lines = [entry.to_json_line() + "\n" for entry in entries]
        if lines:
            self._file.write("".join(lines))
            self._file.flush()

    def close(self) -> None:
        self._file.close()


class MetadataLogTail:
    """Incremental reader of a JSON-lines metadata log (a partial last line waits for its end)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file: IO[bytes] | None = None
        self._inode: int | None = None
        self._pending = b""
        self.reset_detected = False

    def _open(self) -> IO[bytes] | None:
        if self._file is None:
            try:
                self._file = self.path.open("rb")
            except FileNotFoundError:
                return None
            self._inode = os.fstat(self._file.fileno()).st_ino
        return self._file

    def _check_reset(self, handle: IO[bytes]) -> IO[bytes] | None:
        """A restarted server truncates or recreates the file: start over from its beginning."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return handle
        if stat.st_ino != self._inode or stat.st_size < handle.tell():
            handle.close()
            self._file, self._pending = None, b""
            self.reset_detected = True
            return self._open()
        return handle

    def poll(self) -> list[MetadataEntry]:
        handle = self._open()
        if handle is None:
            return []
        handle = self._check_reset(handle)
        if handle is None:
            return []
        data = handle.read()
        if not data:
            return []
        data = self._pending + data
        complete, _, self._pending = data.rpartition(b"\n")
        lines = [line for line in complete.split(b"\n") if line.strip()]
        if not lines:
            return []
        documents = json.loads(b"[" + b",".join(lines) + b"]")  # one parse per poll, not per line
        return [MetadataEntry.from_json(int(d["offset"]), d) for d in documents]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
