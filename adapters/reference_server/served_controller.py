"""The reference controller as a long-running process: one lock, a wall clock, a metadata log.

The reference (`isrcheck.reference_impl.controller.Controller`) is a logical-time value: nothing expires
unless the caller moves `now_ms`. Served over the wire it must behave like a KRaft controller in
real time, so session expiry happens for real (controller.md §4.3): every request first brings
the logical clock up to the wall clock, and a background ticker does the same every
`tick_ms` (at most `broker.session.timeout.ms / 8`, the 4.x check period) so a broker that
stops heartbeating is fenced even when nobody else talks to the controller.

Every controller event — a request or a tick — runs under one lock (the KRaft controller's
single event queue, §2.2) and ends by appending the records it produced to the JSON-lines
metadata log (`isrcheck.adapters.kafka_wire.metadata_log`) *before* the answer is sent.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.metadata_log import MetadataLogWriter
from isrcheck.adapters.kafka_wire.metadata_records import (
    SERVER_HEADER,
    MetadataEntry,
    cluster_config_entry,
    feature_entry,
    reference_entries,
)
from isrcheck.adapters.kafka_wire.metadata_versions import ELR_FEATURE, METADATA_VERSION_FEATURE, level_of
from isrcheck.reference_impl.controller import Controller


class ServedController:
    """A reference controller plus the lock, clock and log that make it a server's state."""

    def __init__(
        self,
        controller: Controller,
        settings: ControllerSettings,
        *,
        session_timeout_ms: int,
        metadata_log_dir: str | os.PathLike[str] | None = None,
        mutant: str | None = None,
        cluster_id: str = "",
        tick_ms: float | None = None,
    ) -> None:
        self.controller = controller
        self.settings = settings
        self.session_timeout_ms = session_timeout_ms
        self.lock = threading.RLock()
        self.started = time.monotonic()
        self.tick_s = (tick_ms if tick_ms is not None else min(100.0, max(5.0, session_timeout_ms / 8))) / 1000
        self._writer = MetadataLogWriter(metadata_log_dir) if metadata_log_dir is not None else None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self._writer is not None:
            self._writer.write(self.header_entries(mutant, cluster_id))

    def header_entries(self, mutant: str | None, cluster_id: str) -> list[MetadataEntry]:
        """Offset -1: what a formatted KRaft log starts with (metadata.version, ELR feature,
        cluster-wide config defaults), plus serve-controller's own description."""
        config = self.controller.config
        entries = [
            MetadataEntry(-1, SERVER_HEADER, 0, {
                **self.settings.to_json(), "session_timeout_ms": self.session_timeout_ms,
                "mutant": mutant, "cluster_id": cluster_id,
            }),
            feature_entry(-1, METADATA_VERSION_FEATURE, level_of(config.metadata_version)),
        ]
        if config.eligible_leader_replicas:
            entries.append(feature_entry(-1, ELR_FEATURE, 1))
        if config.unclean_leader_election_enable:
            entries.append(cluster_config_entry(-1, "unclean.leader.election.enable", "true"))
        if config.min_insync_replicas != 1:
            entries.append(cluster_config_entry(-1, "min.insync.replicas", str(config.min_insync_replicas)))
        return entries

    # ------------------------------------------------------------------ events

    def now_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def catch_up(self) -> list[int]:
        """Move the logical clock to the wall clock; fences expired sessions (§4.3)."""
        elapsed = self.now_ms() - self.controller.now_ms
        return self.controller.advance_clock(elapsed) if elapsed > 0 else []

    @contextlib.contextmanager
    def event(self) -> Iterator[Controller]:
        """One controller event: clock first, then the caller's work, then the log."""
        with self.lock:
            self.catch_up()
            try:
                yield self.controller
            finally:
                self.flush()

    def flush(self) -> None:
        """Write the event's records and drop them from memory: the file is the log now (a
        long-running server would otherwise keep every record of every run)."""
        log = self.controller.log
        if not log:
            return
        if self._writer is not None:
            topic_ids = self.controller.topic_ids
            self._writer.write([e for offset, record in log for e in reference_entries(offset, record, topic_ids)])
        log.clear()

    # ------------------------------------------------------------------ background ticks

    def start_clock(self) -> None:
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick_loop, name="controller-clock", daemon=True)
            self._ticker.start()

    def _tick_loop(self) -> None:
        while not self._stop.wait(self.tick_s):
            with self.event():
                pass

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(2)
        if self._writer is not None:
            with self.lock:
                self._writer.close()

    def describe(self) -> dict[str, Any]:
        return {**self.settings.to_json(), "session_timeout_ms": self.session_timeout_ms}
