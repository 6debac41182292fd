"""Reading a real controller's metadata log through `kafka-dump-log.sh --cluster-metadata-decoder`.

The tool prints one line per record (DumpLogSegments.dumpLog):
``| offset: 42 CreateTime: ... keySize: -1 valueSize: 31 sequence: -1 headerKeys: [] payload: {JSON}``
where the JSON is ``{"type": ..., "version": ..., "data": ...}`` (controller.md §9.4 item 2) —
exactly `isrcheck.adapters.kafka_wire.metadata_records.MetadataEntry`. Control records (leader change, snapshot
markers) carry no payload and are skipped; so are "Error at N, skipping" payloads.

`DumpLogSource` runs the tool (inside a container or from KAFKA_HOME) each time new records may
exist and returns only the offsets not seen before. It costs one JVM start per call (about a
second), which is the price of observing a real controller exactly without touching it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from isrcheck.adapters.kafka_wire.metadata_records import MetadataEntry

RECORD_LINE = re.compile(r"^\|?\s*offset: (\d+) .*? payload: (\{.*\})\s*$")


def parse_dump(text: str) -> list[MetadataEntry]:
    entries = []
    for line in text.splitlines():
        match = RECORD_LINE.match(line.strip())
        if match is None:
            continue
        try:
            document = json.loads(match.group(2))
        except json.JSONDecodeError:
            continue
        if isinstance(document, dict) and "type" in document:
            entries.append(MetadataEntry.from_json(int(match.group(1)), document))
    return entries


class DumpLogSource:
    """A `MetadataSource` over `kafka-dump-log.sh`: `run()` returns the tool's whole output."""

    def __init__(self, run: Callable[[], str]) -> None:
        self.run = run
        self.seen = -1
        self.reset_detected = False

    def poll(self) -> list[MetadataEntry]:
        entries = parse_dump(self.run())
        if entries and entries[-1].offset < self.seen:
            self.reset_detected, self.seen = True, -1
        fresh = [e for e in entries if e.offset > self.seen]
        if fresh:
            self.seen = fresh[-1].offset
        return fresh

    def close(self) -> None:
        pass
