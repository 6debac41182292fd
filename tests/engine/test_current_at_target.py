"""The controller machine names what an AlterPartition means as current — its sender the
partition's leader, its leader and partition epochs — and each side resolves it against its own
state (`ControllerMachine.current_at_target`). Shown on a controller whose state rightly differs
from the reference's on 4.1 and is not judged for it (no differential): one without eligible
leader replicas (KIP-966), on by default on 4.1. Copied from the reference, the requests reach it
with epochs ahead of its own (NOT_CONTROLLER, controller.md §2.4 rows 2-3) from a last ISR
member's first fencing on, and are refused before their members' eligibility is looked at."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.generator.controller_machine import ControllerMachine
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.messages import AlterPartitionRequest, AlterPartitionResponse
from isrcheck.reference_impl.mutants import CATALOGUE, Mutant
from isrcheck.reference_impl.release import ClusterConfig, ReleaseProfile

ANSWERS: Counter[str] = Counter()


class WithoutElrCounted(Controller):
    """The reference with eligible leader replicas off whatever the run asks, counting its
    AlterPartition answers per partition."""

    def __init__(self, profile: ReleaseProfile | str = "4.1", config: ClusterConfig | None = None) -> None:
        super().__init__(profile, config)
        self.config = dataclasses.replace(self.config, eligible_leader_replicas=False)

    def alter_partition(self, request: AlterPartitionRequest) -> AlterPartitionResponse:
        response = super().alter_partition(request)
        for topic in response.topics:
            ANSWERS.update(p.error.name for p in topic.partitions)
        return response


@pytest.fixture
def without_elr() -> Iterator[str]:
    CATALOGUE["T-no-elr"] = Mutant("T-no-elr", "no eligible leader replicas", "test", (), "controller",
                                   WithoutElrCounted, negative_control=True, release="4.1")
    try:
        yield "T-no-elr"
    finally:
        del CATALOGUE["T-no-elr"]
        ControllerMachine.current_at_target = True


def answers(mutant: str, at_target: bool) -> tuple[int, Counter[str]]:
    ControllerMachine.current_at_target = at_target
    ANSWERS.clear()
    result = run_campaign(CampaignConfig(mutant=mutant, level="controller", release="4.1", seed=1, examples=60,
                                         steps=50, differential=False, stop_at_first=False, shrink_budget_s=1))
    assert not result.signatures  # no property breaks: the difference is ELR, which is not judged here
    return result.runs, Counter(ANSWERS)


def test_current_values_are_resolved_at_a_target_whose_state_differs(without_elr: str) -> None:
    runs_before, copied = answers(without_elr, at_target=False)
    runs_after, resolved = answers(without_elr, at_target=True)
    assert runs_before >= 60 and runs_after >= 60
    assert sum(copied.values()) > 100 and sum(resolved.values()) > 100  # AlterPartitions were answered
    assert copied["NOT_CONTROLLER"] > 2 * resolved["NOT_CONTROLLER"], (copied, resolved)
    assert resolved["NONE"] + resolved["INELIGIBLE_REPLICA"] > copied["NONE"] + copied["INELIGIBLE_REPLICA"]
