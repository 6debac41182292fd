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


CATALOGUE: dict[str, Mutant] = {
    m.id: m
    for m in (
        Mutant("B01", "controller ignores the ISR members' broker epochs (no KIP-903 check)",
               "KAFKA-14139 / KIP-903", ("P-ELIG", "P-ACK"), "controller", cm.IgnoresMemberBrokerEpochs),
        Mutant("B02", "controller accepts a fenced or shutting-down broker into the ISR",
               "KAFKA-13916 / KIP-841", ("P-ELIG",), "controller", cm.AcceptsFencedAndShuttingDown),
        Mutant("B04", "controlled-shutdown state lost on controller fail-over",
               "KIP-841 part 1", ("P-ELIG", "P-LIVE"), "controller", cm.ForgetsControlledShutdownOnFailOver),
        Mutant("B14", "automatic elections may pick a replica outside the ISR (unclean)",
               "KIP-106 / KAFKA-4623", ("P-ACK",), "controller", cm.AlwaysUnclean),
        Mutant("B21", "epochs ahead of the controller answered as fenced, not NOT_CONTROLLER",
               "KAFKA-14154", ("P-LIVE",), "controller", cm.StaleControllerErrors),
        Mutant("D1", "AlterPartition accepted without the partition-epoch compare-and-set",
               "bugs.md appendix 1", ("P-ELIG", "P-HWV", "P-LEAD"), "controller", cm.NoPartitionEpochCheck),
        Mutant("D12", "controller lets the leader drop itself from the ISR",
               "bugs.md appendix 12", ("LeaderInIsr",), "controller", cm.AcceptsIsrWithoutLeader),
        Mutant("N1", "broker epochs from a private counter instead of log offsets (allowed)",
               "negative control", (), "controller", cm.CounterBrokerEpochs, negative_control=True),
    )
}


def mutant_named(mutant_id: str) -> Mutant:
    if mutant_id not in CATALOGUE:
        raise KeyError(f"unknown mutant {mutant_id!r} (known: {', '.join(CATALOGUE)})")
    return CATALOGUE[mutant_id]
