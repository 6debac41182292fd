"""How the engine observes a target after each step (the value it builds is
`isrcheck.contract.history.controller_view.ControllerObservation`)."""

from __future__ import annotations

from isrcheck.adapters.base import Target
from isrcheck.contract.history.controller_view import ControllerObservation


def observe_controller(
    target: Target, partitions: list[tuple[str, int]], brokers: list[int]
) -> ControllerObservation:
    return ControllerObservation(
        {(t, p): target.observe("partition", {"topic": t, "partition": p}) for t, p in partitions},
        {b: target.observe("broker", {"broker": b}) for b in brokers},
    )
