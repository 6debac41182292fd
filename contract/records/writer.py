"""Writes run records (docs/records.md; the contract is `isrcheck.contract.records.schema`): one JSON line
at a time, flushed per record, so a killed campaign loses at most one run. A record whose keys
are not the schema's is refused here, so the writer cannot drift from what the readers accept."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

from isrcheck.contract.records.schema import RUN

_FIELDS = frozenset(rule.name for rule in RUN.fields)
_REQUIRED = frozenset(rule.name for rule in RUN.fields if not rule.optional)


def utc_timestamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 1000):03d}Z"


class RecordWriter:
    """Appends to `<dir>/<campaign>-w<worker>.jsonl`; one file per worker process, never shared."""

    def __init__(self, directory: Path | None, campaign_id: str, worker: int) -> None:
        self.path: Path | None = None
        self.file: IO[str] | None = None
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            self.path = directory / f"{campaign_id}-w{worker}.jsonl"
            self.file = self.path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> int | None:
        """Append one record; returns the offset it starts at (for `replace_from`), None without a file."""
        line = self.line(record)
        if self.file is None:
            return None
        offset = self.file.tell()
        self.file.write(line)
        self.file.flush()
        return offset

    @staticmethod
    def line(record: dict[str, Any]) -> str:
        unknown, absent = set(record) - _FIELDS, _REQUIRED - set(record)
        if unknown or absent:
            raise ValueError(f"run record off the schema: unknown {sorted(unknown)}, missing {sorted(absent)}")
        return json.dumps(record, separators=(",", ":"), default=str) + "\n"

    def replace_from(self, offset: int | None, record: dict[str, Any]) -> None:
        """Replace everything from `offset` (the last record written) with `record`, atomically:
        the file is rebuilt beside itself and renamed over, so a kill at any moment leaves either
        the old record or the new one on disk, never neither (a finding written before shrinking,
        then improved by it)."""
        line = self.line(record)
        if self.file is None or self.path is None or offset is None:
            return
        self.file.close()
        partial = self.path.with_name(self.path.name + ".partial")
        with self.path.open("rb") as old, partial.open("wb") as new:
            remaining = offset
            while remaining > 0:
                chunk = old.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                new.write(chunk)
                remaining -= len(chunk)
            new.write(line.encode("utf-8"))
            new.flush()
            os.fsync(new.fileno())
        os.replace(partial, self.path)
        self.file = self.path.open("a", encoding="utf-8")

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
