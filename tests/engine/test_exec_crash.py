"""A plug-in that dies between two requests of a run crashed: the next request is a crash
outcome, not an answer from a plug-in started again behind the run's back. Started again, it
answered from a fresh state (broker unknown, topic gone), and the campaign recorded that as the
implementation's divergence: a false finding (seen when `test_kills` killed the plug-in between
steps, about one time in six on a loaded machine)."""

from __future__ import annotations

import sys

import pytest
from isrcheck.adapters.base import TargetFailure
from isrcheck.adapters.plugins.exec_target import ExecTarget

PLUGIN = f"{sys.executable} -m isrcheck.adapters.plugins.stdio_reference"


def test_a_plugin_killed_between_two_steps_is_a_crash_and_the_next_run_starts_a_new_one() -> None:
    target = ExecTarget(PLUGIN)
    try:
        target.open("3.9", {})
        assert target.execute("register_broker", {"broker": 1, "incarnation": "a"})["error"] == "NONE"
        assert target.process is not None
        killed = target.process.pid
        target.process.kill()
        target.process.wait(5)
        with pytest.raises(TargetFailure) as failure:
            target.execute("unfence_broker", {"broker": 1})
        assert failure.value.kind == "crash"
        target.open("3.9", {})  # the next run: a new plug-in, from its own start
        assert target.process is not None and target.process.pid != killed
        assert target.execute("register_broker", {"broker": 1, "incarnation": "a"})["error"] == "NONE"
    finally:
        target.shutdown()
