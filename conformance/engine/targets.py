"""What a campaign runs against: the reference (oracle) and the target, built from CLI specs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from isrcheck.adapters.base import Target
from isrcheck.adapters.catalogue.adapter_options import is_option_spec, parse_spec
from isrcheck.adapters.catalogue.registry import MUTANT_PREFIX, make_target
from isrcheck.adapters.reference.cluster_target import ReferenceClusterTarget
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.contract.errors import UsageError
from isrcheck.reference_impl.broker_config import BrokerConfig
from isrcheck.reference_impl.mutants import CATALOGUE, Mutant


def engine_cluster(**options: Any) -> ReferenceClusterTarget:
    """The simulated cluster as the engine drives it: unsettled (the machine moves the network),
    with the 1/10-scale broker timings that fit CLUSTER_CONFIG's one-second sessions, and a
    livelock declared after 20,000 events without quiet (a healthy heal needs a few hundred)."""
    return ReferenceClusterTarget(settle=False, broker_config=BrokerConfig.fast(), quiescence_limit=20_000, **options)


@dataclass(frozen=True)
class TargetSpec:
    adapter: str
    mutant: str | None = None
    timeout_s: float = 30.0

    @property
    def display_name(self) -> str:
        return self.adapter + (f"+{self.mutant}" if self.mutant else "")

    @property
    def served_mutant(self) -> str | None:
        """The mutant under test, wherever the spec names it: `--mutant`, an adapter that serves
        one (`kafka-wire,mutant=B02` starts serve-controller children with it) or `reference+B01`.
        Records carry it, so a wire-mutant campaign counts as that mutant's, not as a clean target."""
        if self.mutant is not None:
            return self.mutant
        if self.adapter.startswith(MUTANT_PREFIX):
            return self.adapter[len(MUTANT_PREFIX):] or None
        if is_option_spec(self.adapter):
            return parse_spec(self.adapter)[1].get("mutant") or None
        return None

    def served_mutant_entry(self) -> Mutant | None:
        """The catalogue's entry for `served_mutant`; None for none or an id it does not know."""
        served = self.served_mutant
        return None if served is None else CATALOGUE.get(served)

    def mutant_entry(self) -> Mutant | None:
        if self.mutant is None:
            return None
        if self.mutant not in CATALOGUE:
            raise UsageError(f"unknown mutant {self.mutant!r} (see 'isrcheck mutants'; known: {', '.join(CATALOGUE)})")
        return CATALOGUE[self.mutant]

    def factory(self, level: str = "controller") -> Callable[[], Target]:
        """A function building the target for each run; mutants apply to the reference adapter.
        At the cluster level the reference is the simulated cluster, stepped by the engine."""
        mutant = self.mutant_entry()
        if mutant is not None and self.adapter != "reference":
            raise UsageError(f"--mutant applies to the reference adapter, not {self.adapter!r}")
        if level == "cluster":
            if self.adapter != "reference" and mutant is None:
                shared = SharedTarget(self.adapter, self.timeout_s)
                if getattr(shared.instance, "black_box_history", False):
                    return shared  # judged on its history (conformance/engine/history_campaign.py)
            if self.adapter != "reference":
                raise UsageError(f"adapter {self.adapter!r} does not offer the cluster level to the engine "
                                 "(a black-box cluster target declares black_box_history: docs/real-kafka.md)")
            options = {} if mutant is None else cluster_options(mutant)
            return lambda: engine_cluster(**options)
        if mutant is not None:
            controller_class = mutant.controller_class
            if controller_class is None:
                raise UsageError(f"mutant {mutant.id} is cluster-level; run it with --level cluster")
            return lambda: ReferenceTarget(controller_class)
        return SharedTarget(self.adapter, self.timeout_s)


def cluster_options(mutant: Mutant) -> dict[str, Any]:
    options: dict[str, Any] = dict(getattr(mutant, "cluster_options", ()))
    if mutant.controller_class is not None:
        options.setdefault("controller_class", mutant.controller_class)
    return options


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

    def shutdown(self) -> None:
        self.instance.shutdown()
