"""Helpers for the tests that kill isrcheck: start it in a subprocess whose environment carries a
unique mark (every descendant inherits it, reparented or not), with its own TMPDIR, and then ask
/proc which marked processes are alive and the records directory how many records it holds."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.marked_processes import marked_processes
from tests.sigint_default import restore_default_sigint

REPO = Path(__file__).resolve().parents[2]
MARK = "ISRCHECK_KILL_TEST"


def marked(mark: str) -> dict[int, str]:
    """Live processes marked by one invocation: pid → command line."""
    return {pid: " ".join(argv) for pid, argv in marked_processes(MARK, mark).items()}


def wait_for(condition: Callable[[], object], timeout_s: float, step_s: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step_s)
    return bool(condition())


def records(directory: Path) -> list[dict[str, object]]:
    """Every complete, valid JSON line under `directory` (a line cut by a kill is not a record)."""
    found = []
    for path in sorted(directory.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                found.append(json.loads(line))
    return found


def parent_of(pid: int) -> int | None:
    """The parent's PID, from /proc (None if the process is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


@dataclass
class Marked:
    """One isrcheck invocation and everything it started."""

    process: subprocess.Popen[bytes]
    mark: str
    tmpdir: Path

    @classmethod
    def start(cls, args: Sequence[str], tmp_path: Path) -> Marked:
        mark = uuid.uuid4().hex
        tmpdir = tmp_path / "tmp"
        tmpdir.mkdir(parents=True)
        env = {**os.environ, MARK: mark, "TMPDIR": str(tmpdir),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        process = subprocess.Popen([sys.executable, "-m", "isrcheck", *args], env=env, cwd=tmp_path,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=restore_default_sigint)
        return cls(process, mark, tmpdir)

    def alive(self) -> dict[int, str]:
        return marked(self.mark)

    def workers(self) -> list[int]:
        """Its campaign workers: its children that run isrcheck's own command line (forked) or the
        worker module (spawned). A plug-in can be its child too (one worker: no worker processes)."""
        alive = self.alive()
        own = alive.get(self.process.pid)
        return sorted(pid for pid, command in alive.items()
                      if parent_of(pid) == self.process.pid and (command == own or "worker_process" in command))

    def children_matching(self, text: str) -> list[int]:
        """Its descendants whose command line holds `text`, isrcheck's own processes left out: the
        parent's command line names the plug-in, and so does a forked worker's (the parent's)."""
        own = {self.process.pid, *self.workers()}
        return sorted(pid for pid, command in self.alive().items() if text in command and pid not in own)

    def leftovers(self) -> list[str]:
        """What it left in its TMPDIR (`pymp-*`, `isrcheck-serve-*`, ...)."""
        return sorted(p.name for p in self.tmpdir.iterdir())

    def cleanup(self) -> None:
        """Whatever the test found, leave nothing running (by PID, marked processes only)."""
        for pid in self.alive():
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        if self.process.stderr is not None:
            self.process.stderr.close()
