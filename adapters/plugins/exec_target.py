"""`exec:COMMAND` — a system under test in any language, run as a child process speaking the
JSON-lines protocol of docs/exec-protocol.md. Every call has a timeout; a child that hangs is
killed (`timeout`), one that exits or writes garbage is a `crash`, with its stderr tail."""

from __future__ import annotations

import json
import queue
import shlex
import subprocess
import threading
from collections.abc import Mapping
from typing import IO, Any

from isrcheck.adapters import child_processes
from isrcheck.adapters.base import Args, Result, Target, TargetFailure, UnsupportedConfiguration
from isrcheck.adapters.plugins.stdio_protocol import PROTOCOL, request_line

from isrcheck.errors import UsageError

STDERR_TAIL = 2000


class ExecTarget(Target):
    def __init__(self, command: str, timeout_s: float = 10.0) -> None:
        self.command = shlex.split(command)
        if not self.command:
            raise UsageError("exec: needs a command, e.g. exec:'./my-impl --stdio'")
        self.timeout_s = timeout_s
        self.process: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_tail = ""
        self.next_id = 0
        try:
            description = self.call("describe", {})
        except (TargetFailure, UnsupportedConfiguration) as error:
            # before any run: not a verdict on an implementation, the command is not a plug-in
            self.stop()
            raise UsageError(f"exec:{command} is not an isrcheck plug-in ({PROTOCOL}, docs/exec-protocol.md): "
                             f"{error}") from None
        if not isinstance(description, dict) or description.get("protocol") != PROTOCOL:
            self.stop()
            raise UsageError(f"exec:{command} does not speak {PROTOCOL} (describe said {str(description)[:200]!r})")
        self.name = str(description.get("name", command))
        self.levels = frozenset(description.get("levels", ["controller"]))
        releases = description.get("releases")
        self.releases = None if releases is None else frozenset(releases)
        self.unsupported_operations = frozenset(description.get("unsupported_operations", []))
        observable = description.get("observable_fields")
        self.observable_fields = None if observable is None else frozenset(observable)

    def start(self) -> None:
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, bufsize=1, preexec_fn=child_processes.preexec(),
            )
        except OSError as error:
            raise UsageError(f"exec: cannot start {self.command[0]!r}: {error.strerror}") from None
        child_processes.started(self.process)
        self.lines = queue.Queue()
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self.pump, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self.drain, args=(self.process.stderr,), daemon=True).start()

    def pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def drain(self, stream: IO[str]) -> None:
        for line in stream:
            self.stderr_tail = (self.stderr_tail + line)[-STDERR_TAIL:]

    def stop(self) -> None:
        """Kill at once: the process hung or misbehaved."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=5)
            child_processes.ended(self.process)
        self.process = None

    def shutdown(self) -> None:
        """After the last run: end of stdin tells the plug-in isrcheck is done (exec protocol);
        one that ignores it is killed after a grace period rather than left running."""
        if self.process is not None:
            child_processes.stop(self.process)
        self.process = None

    def failure(self, kind: str, message: str) -> TargetFailure:
        code = None
        if self.process is not None and kind == "crash":
            try:
                code = self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        self.stop()
        tail = self.stderr_tail.strip().splitlines()[-3:]
        detail = f" (exit code {code})" if code is not None else ""
        detail += f"; stderr: {' | '.join(tail)}" if tail else ""
        return TargetFailure(kind, f"{' '.join(self.command)}: {message}{detail}")

    def call(self, method: str, params: dict[str, Any]) -> Any:
        if self.process is None or self.process.poll() is not None:
            self.start()
        assert self.process is not None and self.process.stdin is not None
        self.next_id += 1
        try:
            self.process.stdin.write(request_line(self.next_id, method, params))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self.failure("crash", f"{method}: the process is gone") from None
        except ValueError:  # stdin closed under us: shut down from another thread
            raise self.failure("crash", f"{method}: the process was stopped") from None
        try:
            line = self.lines.get(timeout=self.timeout_s)
        except queue.Empty:
            raise self.failure("timeout", f"{method}: no reply within {self.timeout_s:g} s") from None
        if line is None:
            raise self.failure("crash", f"{method}: the process closed its output")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            raise self.failure("crash", f"{method}: reply is not JSON: {line[:200]!r}") from None
        if not isinstance(reply, dict) or reply.get("id") != self.next_id:
            raise self.failure("crash", f"{method}: reply does not answer request {self.next_id}: {line[:200]!r}")
        error = reply.get("error")
        if error is not None:
            message = str(error.get("message", error)) if isinstance(error, dict) else str(error)
            if isinstance(error, dict) and error.get("kind") == "unsupported_configuration":
                raise UnsupportedConfiguration(message)
            raise TargetFailure("crash", f"{method}: the implementation reported an error: {message}")
        return reply.get("result")

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        self.call("open", {"release": release, "config": dict(config)})

    def execute(self, op: str, args: Args) -> Result:
        result = self.call("execute", {"op": op, "args": dict(args)})
        return dict(result) if isinstance(result, dict) else {}

    def observe(self, what: str, args: Args) -> Result:
        result = self.call("observe", {"what": what, "args": dict(args)})
        return dict(result) if isinstance(result, dict) else {}

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.call("close", {})
