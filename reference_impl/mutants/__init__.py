"""The mutant catalogue: named, small variations of the reference, each reintroducing one bug
from bugs.md (or a derived mutant of its appendix), plus negative controls the checks must
*not* flag. `isrcheck mutants` lists it."""

from __future__ import annotations

from dataclasses import dataclass

from reference_impl.controller import Controller
from reference_impl.mutants import controller_mutants as cm


@dataclass(frozen=True)
class Mutant:
    id: str
    title: str
    source: str
    breaks: tuple[str, ...]
    level: str
    controller_class: type[Controller] | None = None
    negative_control: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id, "title": self.title, "source": self.source, "breaks": list(self.breaks),
            "level": self.level, "negative_control": self.negative_control,
        }


def _controller(mutant_id: str, source: str, breaks: tuple[str, ...], cls: type[Controller],
                negative_control: bool = False) -> Mutant:
    title = (cls.__doc__ or cls.__name__).split(":", 1)[-1].strip().split("\n")[0].rstrip(".")
    return Mutant(mutant_id, title, source, breaks, "controller", cls, negative_control)


CATALOGUE: dict[str, Mutant] = {
    m.id: m
    for m in (
        _controller("B01", "KAFKA-14139 / KIP-903", ("P-ELIG", "P-ACK"), cm.IgnoresMemberBrokerEpochs),
        _controller("B02", "KAFKA-13916 / KIP-841", ("P-ELIG",), cm.AcceptsFencedAndShuttingDown),
        _controller("B04", "KIP-841 part 1", ("P-ELIG", "P-LIVE"), cm.ForgetsControlledShutdownOnFailOver),
        _controller("B14", "KIP-106 / KAFKA-4623", ("P-ACK",), cm.AlwaysUnclean),
        _controller("B21", "KAFKA-14154", ("P-LIVE",), cm.StaleControllerErrors),
        _controller("D1", "bugs.md appendix 1", ("P-ELIG", "P-HWV", "P-LEAD"), cm.NoPartitionEpochCheck),
        _controller("D12", "bugs.md appendix 12", ("LeaderInIsr",), cm.AcceptsIsrWithoutLeader),
        _controller("N1", "negative control", (), cm.CounterBrokerEpochs, negative_control=True),
    )
}


def mutant_named(mutant_id: str) -> Mutant:
    if mutant_id not in CATALOGUE:
        raise KeyError(f"unknown mutant {mutant_id!r} (known: {', '.join(CATALOGUE)})")
    return CATALOGUE[mutant_id]
