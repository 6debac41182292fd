"""Where a wire target finds the controller it drives, and how it reads that controller's log.

An `EndpointProvider` answers "a controller with these settings, please" (`endpoint_for`):

* `FixedEndpoint` — one controller someone else started (`--bootstrap HOST:PORT`, e.g.
  `isrcheck serve-controller --metadata-log DIR`); runs whose settings it cannot serve are
  skipped with the difference as the reason (isrcheck.adapters.kafka_wire.controller_settings);
* `ServeControllerProcesses` — starts `isrcheck serve-controller` child processes on loopback,
  one per distinct settings, so every scenario `config` can run (the default of `kafka-wire`);
* the container and KAFKA_HOME launchers (isrcheck.adapters.real_kafka.kafka_docker,
isrcheck.adapters.real_kafka.kafka_local) start
  real KRaft controllers the same way.

Each endpoint carries a factory for its `MetadataSource` (isrcheck.adapters.kafka_wire.metadata_log), which is how
the target observes state without perturbing it (docs/wire.md).
"""

from __future__ import annotations

import atexit
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from isrcheck.adapters.base import TargetFailure
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.metadata_log import MetadataLogTail, MetadataSource, log_path

LISTENING = re.compile(r"listening on (\S+):(\d+)")
DEFAULT_SESSION_TIMEOUT_MS = 9000


@dataclass(frozen=True)
class ControllerEndpoint:
    host: str
    port: int
    open_source: Callable[[], MetadataSource]
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    settings: ControllerSettings | None = None
    """What the controller runs, when the provider knows; else the target reads the log's header."""
    cluster_id: str | None = None
    """None: ask the controller (DescribeCluster) or read it from the log header."""
    description: str = ""
    voters: Mapping[int, tuple[str, int]] = field(default_factory=dict)
    """Every controller of the quorum (node id → address), for following a new leader."""
    fail_over: Callable[[tuple[str, int]], tuple[str, int]] | None = None
    """Crash the active controller at this address and return the new one's (quorums of 3)."""


class EndpointProvider(Protocol):
    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        """A controller able to run `settings` (start one if need be); UnsupportedConfiguration if none."""
        ...

    def close(self) -> None:
        """Stop whatever the provider started."""
        ...


@dataclass
class FixedEndpoint:
    """A controller that is already running; the target checks its settings against each run.

    It answers every run with the same endpoint object: the target keeps its connection and its
    replayed metadata image only while the endpoint it is given equals the one it holds, and an
    endpoint built afresh never does (its `open_source` is a new function each time) — every run
    reconnected and replayed the whole log, so a campaign slowed down as the log grew."""

    host: str
    port: int
    metadata_log: str | None
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    cluster_id: str | None = None
    endpoint: ControllerEndpoint | None = field(default=None, init=False, repr=False, compare=False)

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        if self.metadata_log is None:
            raise TargetFailure("error", "kafka-wire needs metadata-log=DIR to observe the controller (docs/wire.md)")
        if self.endpoint is None:
            path = log_path(self.metadata_log) if Path(self.metadata_log).is_dir() else Path(self.metadata_log)
            self.endpoint = ControllerEndpoint(self.host, self.port, lambda: MetadataLogTail(path),
                                               self.session_timeout_ms, None, self.cluster_id,
                                               f"{self.host}:{self.port}")
        return self.endpoint

    def close(self) -> None:
        pass


class ServeControllerProcesses:
    """`isrcheck serve-controller` children on 127.0.0.1, one per settings, at most `keep` alive.

    No child may outlive its parent: `close` (the target's `shutdown`) and interpreter exit stop
    them, and for the ends that run no Python — SIGKILL, a multiprocessing or Spark worker ended
    by its pool — each child watches the pipe on its stdin, whose other end only this process
    holds, and stops at end of file (`serve-controller --stop-on-stdin-eof`)."""

    def __init__(self, session_timeout_ms: int, mutant: str | None = None, keep: int = 2,
                 startup_timeout_s: float = 30.0) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.mutant = mutant
        self.keep = max(1, keep)
        self.startup_timeout_s = startup_timeout_s
        self.children: OrderedDict[ControllerSettings, tuple[subprocess.Popen[bytes], ControllerEndpoint, str]] = (
            OrderedDict())
        atexit.register(self.close)

    def command(self, settings: ControllerSettings, log_dir: str) -> list[str]:
        command = [
            sys.executable, "-m", "isrcheck", "serve-controller", "--host", "127.0.0.1", "--port", "0",
            "--kafka", settings.release, "--metadata-version", settings.metadata_version,
            "--elr" if settings.eligible_leader_replicas else "--no-elr",
            "--min-insync-replicas", str(settings.min_insync_replicas),
            "--session-timeout-ms", str(self.session_timeout_ms), "--metadata-log", log_dir, "--stop-on-stdin-eof",
            "--remove-metadata-log-at-exit",  # its parent may be killed before it can remove the directory
        ]
        if settings.unclean_leader_election_enable:
            command.append("--unclean-leader-election")
        if self.mutant is not None:
            command += ["--mutant", self.mutant]
        return command

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        running = self.children.get(settings)
        if running is not None and running[0].poll() is None:
            self.children.move_to_end(settings)
            return running[1]
        if running is not None:
            self.stop(settings)
        while len(self.children) >= self.keep:
            self.stop(next(iter(self.children)))
        log_dir = tempfile.mkdtemp(prefix="isrcheck-serve-")
        process = subprocess.Popen(self.command(settings, log_dir), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        host, port = self.wait_listening(process)
        path = log_path(log_dir)
        endpoint = ControllerEndpoint(host, port, lambda: MetadataLogTail(path), self.session_timeout_ms,
                                      settings, None, f"serve-controller pid {process.pid} on {host}:{port}")
        self.children[settings] = (process, endpoint, log_dir)
        return endpoint

    def wait_listening(self, process: subprocess.Popen[bytes]) -> tuple[str, int]:
        assert process.stdout is not None
        deadline = time.monotonic() + self.startup_timeout_s
        buffered = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    break
                buffered += chunk
                match = LISTENING.search(buffered.decode(errors="replace"))
                if match:
                    return match.group(1), int(match.group(2))
            elif process.poll() is not None:
                break
        process.kill()
        process.wait(5)
        close_pipes(process)
        raise TargetFailure("crash", f"serve-controller did not start (exit {process.poll()}): {buffered[-500:]!r}")

    def stop(self, settings: ControllerSettings) -> None:
        process, _, log_dir = self.children.pop(settings)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        close_pipes(process)
        shutil.rmtree(log_dir, ignore_errors=True)

    def close(self) -> None:
        for settings in list(self.children):
            self.stop(settings)


def close_pipes(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()
