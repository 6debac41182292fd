"""A target that answers correctly but slowly (the reference controller, 0.3 s per call): what a
controller over a real network with a long session timeout looks like to the budget."""

from __future__ import annotations

import time
from typing import Any

from isrcheck.adapters.base import Args, Result
from isrcheck.adapters.reference.controller_target import ReferenceTarget

DELAY_S = 0.3


class SlowTarget(ReferenceTarget):
    name = "slow-reference"

    def execute(self, op: str, args: Args) -> Result:
        time.sleep(DELAY_S)
        return super().execute(op, args)

    def observe(self, what: str, args: Args) -> Result:
        return super().observe(what, args)


def make(**_: Any) -> SlowTarget:
    return SlowTarget()
