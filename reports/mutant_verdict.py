"""Whether a mutant's result is good news, for the report's table and chart.

A mutant reintroduces a bug, so being detected is the pass. A negative control is a variation
Kafka allows, so the opposite holds: not being flagged is the pass and a finding on it is a
false positive of the properties — shown in red, never in the green of a detected bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Verdict:
    passed: bool
    label: str
    negative_control: bool


def verdict(mutant: dict[str, Any]) -> Verdict:
    """For one entry of summary.json's `mutants` (`negative_control` as the records said)."""
    control = bool(mutant.get("negative_control"))
    detected = bool(mutant.get("detected"))
    if control:
        return Verdict(False, "false positive", True) if detected else Verdict(True, "passed: not flagged", True)
    return Verdict(True, "detected", False) if detected else Verdict(False, "not detected", False)
