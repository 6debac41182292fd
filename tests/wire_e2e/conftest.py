"""serve-controller processes on 127.0.0.1 for the end-to-end tests of the kafka-wire adapter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from isrcheck.adapters.kafka_wire.controller_endpoints import LISTENING

REPO = Path(__file__).resolve().parents[2]


@dataclass
class RunningServer:
    process: subprocess.Popen[str]
    host: str
    port: int
    log_dir: Path

    @property
    def adapter(self) -> str:
        return f"kafka-wire,bootstrap={self.host}:{self.port},metadata-log={self.log_dir}"


def isrcheck(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "isrcheck", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture
def serve_controller(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Start `isrcheck serve-controller --port 0 ...`; every server is stopped at teardown."""
    started: list[RunningServer] = []

    def start(*options: str, release: str = "3.9", session_timeout_ms: int = 1000) -> RunningServer:
        log_dir = tmp_path / f"log{len(started)}"
        process = subprocess.Popen(
            [sys.executable, "-m", "isrcheck", "serve-controller", "--port", "0", "--kafka", release,
             "--session-timeout-ms", str(session_timeout_ms), "--metadata-log", str(log_dir), *options],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        match = LISTENING.search(line)
        if match is None:
            process.kill()
            errors = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"serve-controller did not start: {line!r} {errors}")
        server = RunningServer(process, match.group(1), int(match.group(2)), log_dir)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process.poll() is None:
            os.kill(server.process.pid, signal.SIGTERM)
            try:
                server.process.wait(10)
            except subprocess.TimeoutExpired:
                server.process.kill()
