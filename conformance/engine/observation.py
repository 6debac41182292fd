"""What the engine observes of a target after each step: every partition it has asked about and
every broker id in play, as plain JSON values (the one shape the checkers read)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.base import Target


@dataclass(frozen=True)
class ControllerObservation:
    partitions: dict[tuple[str, int], dict[str, Any]]
    brokers: dict[int, dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "partitions": {f"{t}-{p}": v for (t, p), v in sorted(self.partitions.items())},
            "brokers": {str(b): v for b, v in sorted(self.brokers.items())},
        }


EMPTY = ControllerObservation({}, {})


def observe_controller(
    target: Target, partitions: list[tuple[str, int]], brokers: list[int]
) -> ControllerObservation:
    return ControllerObservation(
        {(t, p): target.observe("partition", {"topic": t, "partition": p}) for t, p in partitions},
        {b: target.observe("broker", {"broker": b}) for b in brokers},
    )
