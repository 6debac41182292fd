"""What a campaign runs against: the reference (oracle) and the target, built from CLI specs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from adapters.base import Target
from adapters.reference import ReferenceTarget
from adapters.registry import make_target
from isrcheck.usage import UsageError
from reference_impl.mutants import CATALOGUE, Mutant


@dataclass(frozen=True)
class TargetSpec:
    adapter: str
    mutant: str | None = None
    timeout_s: float = 30.0

    @property
    def display_name(self) -> str:
        return self.adapter + (f"+{self.mutant}" if self.mutant else "")

    def mutant_entry(self) -> Mutant | None:
        if self.mutant is None:
            return None
        if self.mutant not in CATALOGUE:
            raise UsageError(f"unknown mutant {self.mutant!r} (see 'isrcheck mutants'; known: {', '.join(CATALOGUE)})")
        return CATALOGUE[self.mutant]

    def factory(self) -> Callable[[], Target]:
        """A function building a fresh target per run; mutants apply to the reference adapter."""
        mutant = self.mutant_entry()
        if mutant is not None:
            if self.adapter != "reference":
                raise UsageError(f"--mutant applies to the reference adapter, not {self.adapter!r}")
            controller_class = mutant.controller_class
            if controller_class is None:
                raise UsageError(f"mutant {mutant.id} is {mutant.level}-level; the controller machine cannot run it")
            return lambda: ReferenceTarget(controller_class)
        return SharedTarget(self.adapter, self.timeout_s)


class SharedTarget:
    """One target instance reused across runs (`open` starts a fresh system), rebuilt only after
    it broke — an external process or a remote cluster is too costly to start per run."""

    def __init__(self, adapter: str, timeout_s: float) -> None:
        self.adapter = adapter
        self.timeout_s = timeout_s
        self.instance: Target = make_target(adapter, timeout_s)

    def __call__(self) -> Target:
        if getattr(self.instance, "broken", None) is not None:
            self.instance = make_target(self.adapter, self.timeout_s)
        return self.instance
