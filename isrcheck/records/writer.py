"""Writes run records (docs/records.md; the contract is `isrcheck.records.schema`): one JSON line
at a time, flushed per record, so a killed campaign loses at most one run. A record whose keys
are not the schema's is refused here, so the writer cannot drift from what the readers accept."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any

from isrcheck.records.schema import RUN

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

    def write(self, record: dict[str, Any]) -> None:
        unknown, absent = set(record) - _FIELDS, _REQUIRED - set(record)
        if unknown or absent:
            raise ValueError(f"run record off the schema: unknown {sorted(unknown)}, missing {sorted(absent)}")
        if self.file is not None:
            self.file.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
