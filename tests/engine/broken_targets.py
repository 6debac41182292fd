"""Targets that misbehave on purpose, loaded by tests through the `module:Class` adapter path."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import Args, Result, UnsupportedConfiguration
from isrcheck.adapters.reference.controller_target import ReferenceTarget


class HangingTarget(ReferenceTarget):
    """Answers normally, then hangs on its first topic creation (every run creates one)."""

    def execute(self, op: str, args: Args) -> Result:
        if op == "create_topic":
            time.sleep(30)
        return super().execute(op, args)


class ExplodingTarget(ReferenceTarget):
    """Raises on its first controlled shutdown, like a buggy plug-in."""

    def execute(self, op: str, args: Args) -> Result:
        if op == "controlled_shutdown":
            raise RuntimeError("plug-in bug")
        return super().execute(op, args)

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        super().open(release, config)


class BlindToEpochsTarget(ReferenceTarget):
    """Correct, but its observations cannot see partition epochs (reported as -1), as a real
    broker's Metadata response cannot; declares so only when `observable_fields` is set."""

    def observe(self, what: str, args: Args) -> Result:
        seen = dict(super().observe(what, args))
        if what == "partition" and "partition_epoch" in seen:
            seen["partition_epoch"] = -1
        return seen


class DeclaredBlindToEpochsTarget(BlindToEpochsTarget):
    observable_fields = frozenset({"leader", "isr", "replicas", "leader_epoch"}) | frozenset(
        {"registered", "fenced", "in_controlled_shutdown", "broker_epoch"})


class RefusingTarget(ReferenceTarget):
    """Cannot run any configuration: `open` raises UnsupportedConfiguration, as kafka-docker does
    without Docker, or a plug-in asked for a release it does not implement."""

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        raise UnsupportedConfiguration(f"this target does not run Kafka {release}")


class ObserveCrashingTarget(ReferenceTarget):
    """Answers every operation, but crashes when observed after a broker shut down: the crash
    comes during `observe`, not `execute` (the exec protocol promises the same outcome)."""

    def observe(self, what: str, args: Args) -> Result:
        seen = super().observe(what, args)
        if what == "broker" and seen.get("in_controlled_shutdown"):
            raise RuntimeError("plug-in bug while observing")
        return seen
