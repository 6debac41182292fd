"""The two races by which a child could outlive an isrcheck worker whose parent was killed
(`adapters/child_processes.py`), each built to happen rather than waited for. Before the guards,
`test_sigkill_of_isrcheck_kills_a_plugin_that_ignores_end_of_input[2]` left a plug-in running in
about one run in five: the worker killed its plug-in, its target started a new one at once, and
that one was registered too late for `kill_all` and asked for its parent-death signal too late
for the kernel."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from isrcheck.adapters import child_processes

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_a_child_registered_after_kill_all_is_killed_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_processes, "_ending", False)
    monkeypatch.setattr(child_processes, "_children", {})  # children of other tests in this process live on
    child_processes.kill_all()
    late = subprocess.Popen(SLEEPER)
    try:
        child_processes.started(late)
        assert late.wait(5) == -signal.SIGKILL
        assert late.pid not in child_processes.running()
    finally:
        late.kill()
        late.wait()


def test_a_child_whose_parent_ended_before_its_prctl_kills_itself() -> None:
    """The child of a parent that is already gone is re-parented: `getppid()` is no longer the
    pid the parent captured before the fork. A pid that is not this process's stands for it."""
    orphan = subprocess.Popen(SLEEPER, preexec_fn=child_processes.die_with_parent(os.getpid() + 1_000_000))
    try:
        assert orphan.wait(5) == -signal.SIGKILL
    finally:
        orphan.kill()
        orphan.wait()


def test_a_child_of_a_live_parent_runs() -> None:
    child = subprocess.Popen(SLEEPER, preexec_fn=child_processes.die_with_parent(os.getpid()))
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(0.5)
    finally:
        child.kill()
        child.wait()
