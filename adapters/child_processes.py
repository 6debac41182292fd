"""The processes a target starts (an `exec:` plug-in, a controller), kept track of so that none
outlives isrcheck, however isrcheck ends.

Three ends are covered:

* an orderly end (`shutdown`, interpreter exit): `stop` closes the child's stdin — the protocol's
  "isrcheck is gone" — waits `grace_s`, then kills it, so a child that ignores end of file is
  killed rather than left running;
* an abrupt end that runs Python (a campaign worker whose parent vanished, SIGTERM turned into an
  exception): `kill_all` kills every child still registered;
* an end that runs no Python at all (SIGKILL): on Linux each child is started with a parent-death
  signal (`die_with_parent`), so the kernel kills it; elsewhere the child has only its stdin's
  end of file to go by.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

_lock = threading.Lock()
_children: dict[int, subprocess.Popen[str] | subprocess.Popen[bytes]] = {}
PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PRCTL = _load_prctl()
"""Resolved once, before any fork: the function run between fork and exec must not load anything."""


def die_with_parent(parent: int) -> Callable[[], None]:
    """A `preexec_fn`: the kernel sends the child SIGKILL when the thread that started it ends
    (Linux). Children are started from the thread that drives the target for the whole campaign,
    so this means: when isrcheck ends, even by SIGKILL. A parent that ended between the fork and
    the `prctl` sends nothing (prctl(2)); the child then is no longer `parent`'s, and kills
    itself before it runs anything."""

    def preexec() -> None:
        if _PRCTL is not None:
            _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def preexec() -> Callable[[], None] | None:
    """`die_with_parent` when it means "when isrcheck ends": only for children started from the
    main thread (one started from a short-lived worker thread would die with that thread)."""
    if _PRCTL is None or threading.current_thread() is not threading.main_thread():
        return None
    return die_with_parent(os.getpid())


_ending = False
"""Set by `kill_all`: the process is ending abruptly, and a child started from now on (a target
restarting the plug-in `kill_all` just killed) is killed as soon as it is registered."""


def started(process: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    with _lock:
        if not _ending:
            _children[process.pid] = process
            return
    with contextlib.suppress(OSError):
        process.kill()


def ended(process: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    with _lock:
        _children.pop(process.pid, None)


def running() -> list[int]:
    """PIDs of registered children that have not exited (for tests and diagnostics)."""
    with _lock:
        return [pid for pid, process in _children.items() if process.poll() is None]


def stop(process: subprocess.Popen[str] | subprocess.Popen[bytes], grace_s: float = 2.0) -> int | None:
    """End a child the protocol's way (end of stdin), and kill it if it has not exited within
    `grace_s`. Returns its exit code (None if it could not be reaped)."""
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass
    code: int | None
    try:
        code = process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        try:
            code = process.wait(5)
        except subprocess.TimeoutExpired:
            code = None
    ended(process)
    return code


def kill_all() -> None:
    """Kill every registered child at once (no grace: the caller is ending abruptly), and every
    child registered after."""
    global _ending
    with _lock:
        _ending = True
        children = list(_children.values())
        _children.clear()
    for process in children:
        if process.poll() is None:
            with contextlib.suppress(OSError):
                process.kill()
    for process in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(2)


def stop_all() -> None:
    """`stop` every registered child: what an orderly end of the process does (at exit; a forked
    campaign worker, which leaves by `os._exit` and so runs no exit handlers, calls it itself)."""
    with _lock:
        children = list(_children.values())
    for process in children:
        stop(process, grace_s=1.0)


def forget_inherited() -> None:
    """In a child forked from this process: the children registered so far are its parent's, not
    its own; killing or stopping them is the parent's business (a forked campaign worker that
    `kill_all`ed them would kill its parent's processes)."""
    global _ending
    with _lock:
        _children.clear()
        _ending = False


atexit.register(stop_all)
