"""What isrcheck asks of a Docker engine, in one place: is there one, is the image there, and
nothing isrcheck creates on it outlives the isrcheck process that created it.

Every container isrcheck starts carries two labels: `isrcheck.session` (this process's session,
one per process) and `isrcheck.owner` (`<hostname>:<pid>`). Two mechanisms remove them, neither of
them testcontainers' Ryuk (its image cannot be pulled on machines without a registry, and a CI
job should not need it):

* a reaper — `kafka_watchdog.py --reap-session SESSION`, started with the first container, holding
  the read end of a pipe only this process writes: when the pipe closes (normal end, SIGINT,
  SIGKILL of isrcheck alike) it removes every container of the session, and the run directories
  they wrote in (`remove_with_session`) unless a failed run keeps them;
* a sweep — before the first container of a process, containers whose `isrcheck.owner` is a
  process of this host that no longer exists are removed (a reaper that was itself killed).

isrcheck never pulls: a missing image is one line naming it, how to get it and the `image=`
option (docs/real-kafka.md).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

SESSION_LABEL = "isrcheck.session"
OWNER_LABEL = "isrcheck.owner"
WATCHDOG = Path(__file__).with_name("kafka_watchdog.py")

_session: dict[str, Any] = {}


def client() -> Any:
    import docker

    return docker.from_env(timeout=30)


def docker_unavailable() -> str | None:
    """None when a Docker engine answers; otherwise the reason, in one line."""
    try:
        import docker
    except ImportError as error:
        return f"docker SDK not installed: {error}"
    try:
        docker.from_env(timeout=5).ping()
    except Exception as error:  # the SDK raises many types for "no engine"
        return f"no Docker engine reachable: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    return None


def missing_image(image: str) -> str | None:
    """None when `image` is on the engine; otherwise the one line a user needs (isrcheck never
    pulls: a CI job pulls or builds its images in a step of its own)."""
    import docker.errors

    try:
        client().images.get(image)
    except docker.errors.ImageNotFound:
        return (f"Docker image {image} is not on this engine (isrcheck never pulls): `docker pull {image}` "
                f"or build it, or name another with image=NAME (e.g. --adapter kafka-docker,image=NAME)")
    return None


def owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def session_labels() -> dict[str, str]:
    """The labels of this process's containers; starts the reaper and sweeps orphans once."""
    if _session.get("pid") != os.getpid():  # a forked worker is a session of its own
        sweep_orphans()
        session = f"{owner()}:{uuid.uuid4().hex[:8]}"
        reaper = subprocess.Popen([sys.executable, str(WATCHDOG), "--reap-session", session],
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        _session.update(pid=os.getpid(), session=session, reaper=reaper)
    return {SESSION_LABEL: str(_session["session"]), OWNER_LABEL: owner()}


def remove_with_session(path: str, keep: bool = False) -> None:
    """Have the reaper remove the run directory `path` when this process ends — or, with `keep`,
    leave it (a failed run's logs)."""
    session_labels()
    reaper = _session["reaper"]
    if reaper.stdin is not None:
        with contextlib.suppress(OSError, ValueError):  # ValueError: the pipe is already closed
            reaper.stdin.write(f"{'KEEP' if keep else 'REMOVE'} {path}\n".encode())
            reaper.stdin.flush()


def stop_reaper() -> None:
    """Close this process's reaper's pipe (it removes what is left of the session) and wait for it.
    Registered when this module is imported, so it runs after the atexit clean-ups of everything
    that later started containers (atexit runs last-registered first): a failed run's KEEP line
    reaches the reaper before its pipe closes."""
    reaper = _session.get("reaper")
    if reaper is None or _session.get("pid") != os.getpid():
        return
    if reaper.stdin is not None:
        with contextlib.suppress(OSError):
            reaper.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        reaper.wait(timeout=30)


def remove_session(session: str) -> int:
    """Remove every container of `session`; how many there were."""
    return _remove({"label": f"{SESSION_LABEL}={session}"})


def sweep_orphans() -> int:
    """Remove containers of this host whose owning process is gone."""
    host = socket.gethostname()
    gone = 0
    with contextlib.suppress(Exception):
        for container in client().containers.list(all=True, sparse=True, filters={"label": OWNER_LABEL}):
            owner_host, _, pid = str((container.attrs.get("Labels") or {}).get(OWNER_LABEL, "")).rpartition(":")
            if owner_host == host and pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(Exception):
                    container.remove(force=True)
                    gone += 1
    return gone


def _remove(filters: dict[str, str]) -> int:
    removed = 0
    for container in client().containers.list(all=True, sparse=True, filters=filters):
        with contextlib.suppress(Exception):
            container.remove(force=True)
            removed += 1
    return removed


def container_user() -> str:
    """Containers run as the invoking user, so what they write in the bind-mounted run directory
    (data, logs) is the user's to read and remove, as with processes."""
    return f"{os.getuid()}:{os.getgid()}"


atexit.register(stop_reaper)
