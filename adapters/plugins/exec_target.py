"""`exec:COMMAND` — a system under test in any language, run as a child process speaking the
JSON-lines protocol of docs/exec-protocol.md. Every call has a timeout; a child that hangs is
killed (`timeout`), one that exits or writes garbage is a `crash`, with its stderr tail.

Replies are read on the calling thread (`select` with the call's timeout, then `os.read`), not
handed over by a reader thread through a queue: a round trip is a few tens of microseconds and
the hand-over between threads cost more than the plug-in's own answer (kafka-jvm: 56 µs per
no-op call through a queue, 21-25 µs read directly, same JVM, bench/kafka_jvm.py).

A plug-in that declares the optional `snapshot` capability (docs/exec-protocol.md) answers each
`execute` together with the state after it, and every `observe` until the next operation is
answered from that snapshot: one round trip per step instead of one per observation.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import IO, Any

from isrcheck.adapters import child_processes
from isrcheck.adapters.base import Args, Result, Target, TargetFailure, UnsupportedConfiguration
from isrcheck.adapters.plugins.stdio_protocol import PROTOCOL, request_line
from isrcheck.contract.errors import UsageError

STDERR_TAIL = 2000
SNAPSHOT = "snapshot"
"""The optional capability: `execute` with `"snapshot": true` answers `{"result", "snapshot"}`."""
UNREGISTERED = {"registered": False, "fenced": True, "in_controlled_shutdown": False, "broker_epoch": -1}
"""A broker a snapshot does not list (as `observe` answers for one: docs/exec-protocol.md)."""


class ExecTarget(Target):
    def __init__(self, command: str, timeout_s: float = 10.0) -> None:
        self.command = shlex.split(command)
        if not self.command:
            raise UsageError("exec: needs a command, e.g. exec:'./my-impl --stdio'")
        self.timeout_s = timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = bytearray()
        """Bytes read from the plug-in's stdout and not yet returned as a line."""
        self.stderr_tail = ""
        self.next_id = 0
        self.snapshots = False
        self.snapshot: dict[str, Any] | None = None
        """The state after the last operation (plug-ins with the `snapshot` capability)."""
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
        capabilities = description.get("capabilities") or []
        self.snapshots = isinstance(capabilities, list) and SNAPSHOT in capabilities

    def start(self) -> None:
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                preexec_fn=child_processes.preexec(),
            )
        except OSError as error:
            raise UsageError(f"exec: cannot start {self.command[0]!r}: {error.strerror}") from None
        child_processes.started(self.process)
        self.buffer = bytearray()
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self.drain, args=(self.process.stderr,), daemon=True).start()

    def read_line(self, timeout_s: float) -> bytes | None:
        """The plug-in's next line of output; None once it closed its output (a last line without
        a newline is returned first). Raises TimeoutError when no full line came in time."""
        assert self.process is not None and self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        searched = 0
        while True:
            end = self.buffer.find(b"\n", searched)
            if end >= 0:
                line = bytes(self.buffer[:end + 1])
                del self.buffer[:end + 1]
                return line
            searched = len(self.buffer)
            remaining = deadline - time.monotonic()
            ready = select.select([descriptor], [], [], remaining)[0] if remaining > 0 else []
            if not ready:
                raise TimeoutError
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                if not self.buffer:
                    return None
                line = bytes(self.buffer)
                self.buffer.clear()
                return line
            self.buffer += chunk

    def drain(self, stream: IO[bytes]) -> None:
        for line in stream:
            self.stderr_tail = (self.stderr_tail + line.decode("utf-8", "replace"))[-STDERR_TAIL:]

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
        """One request and its reply. The plug-in is started on first use and after a failure
        ended it; one that exited by itself since its last reply crashed, and is reported so:
        started again quietly in the middle of a run, it would answer from a fresh state, and
        the difference would read as the implementation's divergence (a false finding)."""
        if self.process is None:
            self.start()
        elif self.process.poll() is not None:
            raise self.failure("crash", f"{method}: the process exited since its last reply")
        assert self.process is not None and self.process.stdin is not None
        self.next_id += 1
        try:
            self.process.stdin.write(request_line(self.next_id, method, params).encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self.failure("crash", f"{method}: the process is gone") from None
        except ValueError:  # stdin closed under us: shut down from another thread
            raise self.failure("crash", f"{method}: the process was stopped") from None
        try:
            raw = self.read_line(self.timeout_s)
        except TimeoutError:
            raise self.failure("timeout", f"{method}: no reply within {self.timeout_s:g} s") from None
        except (OSError, ValueError):  # stdout closed under us: shut down from another thread
            raise self.failure("crash", f"{method}: the process was stopped") from None
        if raw is None:
            raise self.failure("crash", f"{method}: the process closed its output")
        line = raw.decode("utf-8", "replace")
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
        self.snapshot = None
        self.call("open", {"release": release, "config": dict(config)})

    def execute(self, op: str, args: Args) -> Result:
        self.snapshot = None
        if not self.snapshots:
            result = self.call("execute", {"op": op, "args": dict(args)})
            return dict(result) if isinstance(result, dict) else {}
        reply = self.call("execute", {"op": op, "args": dict(args), SNAPSHOT: True})
        if not isinstance(reply, dict) or not isinstance(reply.get("result"), dict):
            raise TargetFailure("crash", f"execute: with {SNAPSHOT}: true the reply must be "
                                         f"{{\"result\": {{...}}, \"snapshot\": {{...}}}}, not {str(reply)[:200]!r}")
        self.snapshot = checked_snapshot("execute", reply.get(SNAPSHOT))
        return dict(reply["result"])

    def observe(self, what: str, args: Args) -> Result:
        if not self.snapshots:
            result = self.call("observe", {"what": what, "args": dict(args)})
            return dict(result) if isinstance(result, dict) else {}
        if self.snapshot is None:  # nothing executed since `open` (or a snapshot was never taken)
            self.snapshot = checked_snapshot(SNAPSHOT, self.call(SNAPSHOT, {}))
        if what == "partition":
            key = f"{args['topic']}/{int(args.get('partition', 0))}"
            return dict(self.snapshot["partitions"].get(key, {"exists": False}))
        if what == "broker":
            return dict(self.snapshot["brokers"].get(str(int(args["broker"])), UNREGISTERED))
        raise ValueError(f"cannot observe {what!r}")

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.call("close", {})


def checked_snapshot(method: str, snapshot: Any) -> dict[str, Any]:
    """A snapshot as docs/exec-protocol.md defines it, or a crash outcome naming what is wrong."""
    if (not isinstance(snapshot, dict) or not isinstance(snapshot.get("partitions"), dict)
            or not isinstance(snapshot.get("brokers"), dict)):
        raise TargetFailure("crash", f"{method}: a snapshot must be {{\"partitions\": {{...}}, \"brokers\": {{...}}}}, "
                                     f"not {str(snapshot)[:200]!r}")
    return snapshot
