"""Watchdog between isrcheck and one Kafka node: no JVM or temp directory outlives isrcheck.

Run as ``python kafka_watchdog.py [--remove DIR]... -- COMMAND...`` with a pipe on stdin whose other
end only isrcheck holds. It starts COMMAND in its own process group and then:

* a ``TERM`` / ``KILL`` line on stdin sends SIGTERM (clean shutdown) / SIGKILL (crash) to that
  group — how the launcher stops or crashes a node by id, never by name;
* a ``KEEP`` line means "leave the DIRs in place" (the run failed and its logs are kept);
* end of file on stdin — isrcheck exited, however (normal end, SIGINT, SIGKILL) — stops the
  group (SIGTERM, SIGKILL after 10 s) and removes every DIR unless KEEP was received;
* when COMMAND ends on its own, the watchdog exits with its status.

Run as ``python kafka_watchdog.py --reap-session SESSION`` it is the reaper of a process's
containers (`docker_engine`): ``REMOVE DIR`` / ``KEEP DIR`` lines on stdin name the run
directories those containers wrote in; at end of file it removes every container labelled
``isrcheck.session=SESSION`` (docker's Python SDK, which testcontainers brings), then every
directory named by REMOVE and not by KEEP.

It is started by path (not by module name) so it runs even while the package layout changes, and
uses nothing but the standard library (and the Docker SDK for reaping). The same idea as
`serve-controller --stop-on-stdin-eof`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading

GRACE_S = 10.0


def stop_group(process: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def reap(session: str) -> int:
    """Block until stdin closes, then remove the session's containers and directories."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    remove: list[str] = []
    keep: set[str] = set()
    for raw in sys.stdin.buffer:
        word, _, path = raw.decode(errors="replace").strip().partition(" ")
        if word == "REMOVE":
            remove.append(path)
        elif word == "KEEP":
            keep.add(path)
    import docker

    engine = docker.from_env(timeout=60)
    for container in engine.containers.list(all=True, sparse=True, filters={"label": f"isrcheck.session={session}"}):
        with contextlib.suppress(Exception):
            container.remove(force=True)
    for directory in remove:
        if directory not in keep:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--reap-session"] and len(argv) == 2:
        return reap(argv[1])
    remove: list[str] = []
    while argv[:1] == ["--remove"]:
        remove.append(argv[1])
        argv = argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: kafka_watchdog.py [--remove DIR] -- COMMAND...", file=sys.stderr)
        return 2
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, process_group=0)
    # only stdin (isrcheck's pipe) decides; ignored *after* the start, because a JVM started with
    # SIGTERM ignored keeps ignoring it (no clean shutdown on TERM)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    state = {"keep": False, "eof": False}

    def watch_stdin() -> None:
        for raw in sys.stdin.buffer:
            line = raw.strip().decode(errors="replace")
            if line == "TERM":
                stop_group(process, signal.SIGTERM)
            elif line == "KILL":
                stop_group(process, signal.SIGKILL)
            elif line == "KEEP":
                state["keep"] = True
        state["eof"] = True
        stop_group(process, signal.SIGTERM)
        try:
            process.wait(GRACE_S)
        except subprocess.TimeoutExpired:
            stop_group(process, signal.SIGKILL)

    watcher = threading.Thread(target=watch_stdin, daemon=True)
    watcher.start()
    status = process.wait()
    stop_group(process, signal.SIGKILL)  # anything the node left behind in its group
    if state["eof"] or not watcher.is_alive():
        watcher.join(GRACE_S)
        if not state["keep"]:
            for directory in remove:
                shutil.rmtree(directory, ignore_errors=True)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # not sys.exit: the stdin reader thread would abort interpreter shutdown
