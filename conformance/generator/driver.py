"""What a Hypothesis machine needs of the engine that runs it. The engine's `RunContext`
provides it and sets it as the machine's `context` before a campaign; the machines know the
engine only through this protocol, so the generators sit below the engine."""

from __future__ import annotations

from typing import Any, Protocol

from isrcheck.contract.operations.step import Step


class MachineDriver(Protocol):
    release: str

    def supports(self, op: str) -> bool:
        """Whether the target under test accepts `op` (the machine does not send it otherwise)."""
        ...

    def observes(self, field: str) -> bool:
        """Whether the target's observations report `field` truthfully (so that a `current` value
        can be resolved at the target)."""
        ...

    def start_run(self) -> Any:
        """A fresh pair of systems; the result has `reference` (the reference target), `partitions`
        and `stopped`."""
        ...

    def execute(self, run: Any, step: Step) -> None:
        """Run `step` on both sides of `run` and check it; raises to end the example on a finding."""
        ...

    def finish_run(self, run: Any) -> None: ...
