"""What a checker reads of a controller after a step: every partition and broker in play, as the
plain JSON values a target answers `observe` with (the one shape the differential and the
controller-level properties read)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
