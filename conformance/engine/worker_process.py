"""Campaign worker processes: `--workers N` runs each share of the batches in a child process
that can never outlive the campaign.

A campaign's worker is forked from the parent once the parent has imported the engine
(`_fork`), so it starts with the engine, Hypothesis and the command's modules already loaded:
a worker that was a fresh interpreter (`python -m isrcheck.conformance.engine.worker_process`)
imported them all again, about half a second of CPU per worker, which on two cores capped two
workers at about 1.76× one (docs/performance.md). The parent forks only while it has a single
thread (a thread holding a lock at the fork would leave that lock held in the child forever); with
more, or without `os.fork`, the worker is that fresh interpreter, as `run_calls`' workers always
are. Either way a worker is a plain child, not a multiprocessing pool: a pool brings a Manager
process, a resource tracker and `/tmp/pymp-*` directories, none of which stop when the parent is
killed (all four were seen writing records a minute after `kill -9` of the parent). Here the
parent holds the only write end of each worker's stdin:

* the first stdin line is the job (pickled, base64); later lines are `stop` (another worker
  found something: end after the current batch), `batch B N` (the next batch to run: a
  campaign's batches are handed out one at a time, to whichever worker asks first, so a worker
  whose batches ran long never holds the others up), `call <base64>` (the next function of
  `run_calls` to run in this same process) and `done` (nothing more);
* end of file on stdin means the parent is gone (killed by any signal, SIGKILL included): the
  worker kills the processes its target started and exits at once, losing only the run in
  progress (every record before it is flushed); a forked worker is also killed by the kernel
  when its parent dies (PR_SET_PDEATHSIG, `child_processes.die_with_parent`);
* its stdout carries `progress R S F`, `stopping`, `next` (asks for a batch), `ready` (asks for
  a call), `result <base64 pickle>` (of the campaign, or of each call); whatever else the engine
  prints goes to stderr.

The worker ignores SIGINT (a terminal's Ctrl-C reaches the whole process group; the parent
decides) and turns SIGTERM into an orderly end: records closed, the target shut down.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import pickle
import queue
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, NoReturn

from isrcheck.adapters import child_processes
from isrcheck.conformance.engine.hypothesis_internals import keep_files_out_of_the_working_directory

WORKER_MODULE = "isrcheck.conformance.engine.worker_process"
EXIT_PARENT_GONE = 3


def encode(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


def decode(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))


class _StopFlag:
    """The worker's side of the shared stop flag: set by a `stop` line from the parent, or by
    this worker (then the parent is told, and tells the others)."""

    def __init__(self, out: IO[str]) -> None:
        self.event = threading.Event()
        self.out = out

    def is_set(self) -> bool:
        return self.event.is_set()

    def set(self) -> None:
        self.event.set()
        _send(self.out, "stopping")


class _Progress:
    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def put(self, item: tuple[int, int, int, int]) -> None:
        _send(self.out, f"progress {item[1]} {item[2]} {item[3]}")


_send_lock = threading.Lock()


def _send(out: IO[str], line: str) -> None:
    with _send_lock:
        try:
            out.write(line + "\n")
            out.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the parent is gone; the stdin watcher ends us


def _abandon() -> None:
    """The parent is gone: nothing may keep running on its behalf."""
    child_processes.kill_all()
    os._exit(EXIT_PARENT_GONE)


def _watch_stdin(stop: _StopFlag, inbox: queue.Queue[str]) -> None:
    for line in sys.stdin:
        if line.strip() == "stop":
            stop.event.set()
        else:
            inbox.put(line.strip())
    _abandon()


def _from_parent(out: IO[str], inbox: queue.Queue[str], ask: str) -> Iterator[str]:
    """Ask the parent (`ask`) for the next piece of work, yield it, and again, until `done`."""
    while True:
        _send(out, ask)
        line = inbox.get()
        if line == "done":
            return
        yield line


def _batches(out: IO[str], inbox: queue.Queue[str]) -> Iterator[tuple[int, int]]:
    for line in _from_parent(out, inbox, "next"):
        _, batch, examples = line.split()
        yield int(batch), int(examples)


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def main() -> int:
    keep_files_out_of_the_working_directory()  # a fresh interpreter: before the job's modules load
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    job = sys.stdin.readline()
    if not job:
        return EXIT_PARENT_GONE
    stop = _StopFlag(protocol)
    inbox: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_watch_stdin, args=(stop, inbox), name="parent-watch", daemon=True).start()
    payload = decode(job)
    if payload[0] == "call":  # any picklable function and its arguments
        _, function, arguments = payload
        result = function(*arguments)
    elif payload[0] == "calls":  # one call after another, as the parent hands them out (the pipeline's jobs)
        for line in _from_parent(protocol, inbox, "ready"):
            function, arguments = decode(line.partition(" ")[2])
            _send(protocol, f"result {encode(function(*arguments))}")
        return 0
    else:
        from isrcheck.conformance.engine.campaign import worker_main

        _, config, worker, batches, deadline = payload
        if batches is None:  # handed out by the parent, one at a time
            batches = _batches(protocol, inbox)
        result = worker_main(config, worker, batches, stop, _Progress(protocol), deadline=deadline)
    _send(protocol, f"result {encode(result)}")
    return 0


END_GRACE_S = 5.0
"""How long a worker told to end (its stdin closed) may take before it is killed."""


class ForkedChild:
    """The parent's handle on a worker forked from it (`_fork`): the part of `subprocess.Popen`
    that `WorkerProcess` uses — pid, stdin, stdout, poll, wait, kill — over two pipes."""

    def __init__(self, pid: int, stdin: IO[str], stdout: IO[bytes]) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Its exit code once it has exited (minus the signal's number if a signal ended it, as
        `Popen` has it), reaping it; None while it runs."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"forked worker {self.pid}", timeout)
            time.sleep(0.01)
        return code

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)


_forked: list[ForkedChild] = []
"""Forked workers whose pipes this process holds. A worker forked later closes its copies of
them: while a sibling held the write end of a worker's stdin, that worker would never see the end
of file that tells it its parent is gone."""


def _fork() -> ForkedChild:
    """A worker forked from this process, which must have one thread only (`can_fork`). The
    child runs `main` on its own pipes and never returns from here."""
    job_read, job_write = os.pipe()
    protocol_read, protocol_write = os.pipe()
    for stream in (sys.stdout, sys.stderr):  # or the child would write the parent's pending output too
        if stream is not None:
            stream.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        _forked_main(parent, job_read, protocol_write, (job_write, protocol_read))
    os.close(job_read)
    os.close(protocol_write)
    child = ForkedChild(pid, os.fdopen(job_write, "w", encoding="utf-8"), os.fdopen(protocol_read, "rb", buffering=0))
    _forked.append(child)
    return child


def can_fork() -> bool:
    """Whether a campaign's worker may be forked: a thread that held a lock (the import lock, a
    stream's) at the fork would leave it held in the child for good, so only while this process
    has a single thread."""
    return hasattr(os, "fork") and threading.active_count() == 1


def _forked_main(parent: int, job: int, protocol: int, parent_ends: tuple[int, ...]) -> NoReturn:
    """The forked worker's whole life: die with `parent` (even by SIGKILL), keep none of the
    parent's pipes or children, run `main` with `job` as stdin and `protocol` as stdout, and
    leave by `os._exit`: the parent's exit handlers (its temporary directories, its children)
    are not this process's to run."""
    code = 1
    try:
        child_processes.die_with_parent(parent)()
        child_processes.forget_inherited()
        for sibling in _forked:
            for stream in (sibling.stdin, sibling.stdout):
                with contextlib.suppress(OSError):
                    stream.close()
        _forked.clear()
        for descriptor in parent_ends:
            os.close(descriptor)
        # a parent started with stdin or stdout closed got a pipe as descriptor 0 or 1: moved
        # above 2 first, so that neither dup2 overwrites the other pipe
        job, protocol = (_above_standard_streams(descriptor) for descriptor in (job, protocol))
        os.dup2(job, 0)
        os.dup2(protocol, 1)
        os.close(job)
        os.close(protocol)
        sys.stdin = os.fdopen(0, "r", encoding="utf-8", closefd=False)
        sys.stdout = os.fdopen(1, "w", encoding="utf-8", closefd=False)
        code = main()
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 0 if exit.code is None else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            child_processes.stop_all()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _above_standard_streams(descriptor: int) -> int:
    """`descriptor` itself if it is above 2, else a copy above 2 (the original closed)."""
    if descriptor > 2:
        return descriptor
    moved = fcntl.fcntl(descriptor, fcntl.F_DUPFD, 3)
    os.close(descriptor)
    return moved


@dataclass
class WorkerProcess:
    """The parent's handle on one worker."""

    worker: int
    process: subprocess.Popen[str] | ForkedChild
    result: Any = None
    buffer: str = ""
    done: bool = False

    @classmethod
    def start(cls, worker: int, payload: tuple[Any, ...]) -> WorkerProcess:
        """`payload`: ("campaign", config, worker, batches or None, deadline), ("call", function,
        arguments) or ("calls",). A campaign's worker is forked if it can be (`can_fork`)."""
        process = _fork() if payload[0] == "campaign" and can_fork() else _spawn()
        assert process.stdin is not None
        process.stdin.write(encode(payload) + "\n")
        process.stdin.flush()
        return cls(worker, process)

    def read(self) -> list[str]:
        """The complete lines that have arrived; marks the worker done at end of its output."""
        assert self.process.stdout is not None
        chunk = os.read(self.process.stdout.fileno(), 65536).decode("utf-8", errors="replace")
        if not chunk:
            self.done = True
            return []
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split("\n")
        for line in lines:
            kind, _, rest = line.partition(" ")
            if kind == "result":
                self.result = decode(rest)
        return lines

    def tell(self, line: str) -> None:
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # it is gone: its end of output tells the parent

    def tell_stop(self) -> None:
        self.tell("stop")

    def close_input(self) -> None:
        """End of its stdin: a finished worker has exited already; a running one abandons its run
        and exits."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass

    def end(self, grace_s: float = END_GRACE_S) -> int | None:
        """`close_input`, wait `grace_s`, then kill it."""
        self.close_input()
        try:
            code = self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        if isinstance(self.process, ForkedChild) and self.process in _forked:
            _forked.remove(self.process)
        return code


def _spawn() -> subprocess.Popen[str]:
    """A worker that is a fresh interpreter: it imports what it needs itself."""
    return subprocess.Popen(
        [sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
    )


def run_workers(config: Any, plan: Iterable[tuple[int, int]], workers: int, deadline: float | None,
                on_progress: Callable[[int, int, int], None], stop_at_first: bool) -> tuple[list[Any], list[str]]:
    """Run the batches of `plan` in `workers` processes, each batch going to whichever worker asks
    for one next, until all have answered; returns their results and a line for each worker that
    died without one (its records up to then are on disk). Once a worker found something in
    stop-at-first mode, no more batches are handed out."""
    batches = iter(plan)
    started = [WorkerProcess.start(w, ("campaign", config, w, None, deadline)) for w in range(workers)]
    latest: dict[int, tuple[int, int, int]] = {}
    stopping = False
    try:
        while not all(w.done for w in started):
            streams = {w.process.stdout: w for w in started if not w.done}
            ready, _, _ = select.select(list(streams), [], [], 0.5)
            for stream in ready:
                worker = streams[stream]
                for line in worker.read():
                    kind, _, rest = line.partition(" ")
                    if kind == "progress":
                        runs, steps, findings = (int(x) for x in rest.split())
                        latest[worker.worker] = (runs, steps, findings)
                        on_progress(*(sum(v[i] for v in latest.values()) for i in range(3)))
                    elif kind == "next":
                        batch = None if stopping else next(batches, None)
                        worker.tell("done" if batch is None else f"batch {batch[0]} {batch[1]}")
                    elif kind == "stopping" and stop_at_first:
                        stopping = True
                        for other in started:
                            if other is not worker:
                                other.tell_stop()
    finally:
        for worker in started:  # every worker told at once, and given one grace period in all:
            worker.close_input()  # one waited for after another took up to twice as long
        deadline = time.monotonic() + END_GRACE_S
        for worker in started:
            worker.end(max(0.0, deadline - time.monotonic()))
    return [w.result for w in started if w.result is not None], [lost(w) for w in started if w.result is None]


def lost(worker: WorkerProcess) -> str:
    return (f"worker {worker.worker} ended without a result (exit code {worker.process.poll()}); "
            "its records up to its last run are kept")


def run_calls(calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]], slots: int) -> Iterator[Any]:
    """Run each `function(*arguments)` in one of `slots` worker processes, each running one call
    after another as it asks for them (a process per call paid the interpreter's and the engine's
    start-up, about a second of CPU, once per call), yielding results as they finish. A call whose
    process dies is reported (RuntimeError) when the others are done; a new process takes the
    calls still waiting. Like `run_workers`, nothing it starts outlives it."""
    pending = list(enumerate(calls))
    running: list[WorkerProcess] = []
    current: dict[int, int] = {}
    """worker number → the call it runs."""
    failures: list[str] = []
    started = 0
    try:
        while pending or current:
            while pending and len(running) < slots and started < len(calls) + slots:
                running.append(WorkerProcess.start(started, ("calls",)))
                started += 1
            if not running:  # every process died, again and again: the calls left cannot run
                failures += [f"call {index} was not run: its worker processes kept dying" for index, _ in pending]
                break
            streams = {w.process.stdout: w for w in running}
            ready, _, _ = select.select(list(streams), [], [], 0.5)
            for stream in ready:
                worker = streams[stream]
                for line in worker.read():
                    kind, _, rest = line.partition(" ")
                    if kind == "ready":
                        if pending:
                            index, call = pending.pop(0)
                            current[worker.worker] = index
                            worker.tell(f"call {encode(call)}")
                        else:
                            worker.tell("done")
                    elif kind == "result":
                        current.pop(worker.worker, None)
                        yield decode(rest)
                if worker.done:
                    running.remove(worker)
                    worker.end()
                    if worker.worker in current:
                        current.pop(worker.worker)
                        failures.append(lost(worker))
    finally:
        for worker in running:
            worker.end()
    if failures:
        raise RuntimeError("; ".join(failures))


if __name__ == "__main__":
    sys.exit(main())
