"""Known violations (contract/operations/known_violations.py): KB1, the equal-epoch stale expansion
(docs/upstream/equal-epoch-isr-expansion.md), is the reference breaking P-HWV the way real Kafka
does. The rule must match that shape — an ISR member below the HW admitted by an AlterPartition
its leader no longer held pending — and nothing else: a member below the HW that a leader proposed
while it still counted it (here: a leader that admits laggards) is still a finding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from isrcheck.adapters.reference.cluster_target import ReferenceClusterTarget
from isrcheck.conformance.engine.run import Run, cluster_run
from isrcheck.conformance.scenario.load import load_file
from isrcheck.contract.history.ground_truth import (
    PROPOSAL_OTHER,
    PROPOSAL_PENDING,
    PROPOSAL_REPLACED_AT_EQUAL_EPOCH,
    ClusterObservation,
    IsrAdmission,
)
from isrcheck.contract.history.ground_truth_json import ground_truth_from_json, ground_truth_json
from isrcheck.contract.operations.findings import VIOLATION, Finding
from isrcheck.contract.operations.known_violations import classified_violation
from isrcheck.contract.operations.step import Step
from isrcheck.reference_impl.leader_rules import LeaderRules
from isrcheck.reference_impl.partition import Partition

RULE = "equal-epoch-stale-expansion"
SCENARIO = (Path(__file__).resolve().parents[2] / "conformance" / "scenarios" / "cluster"
            / "equal_epoch_metadata_replaces_pending_expansion.yaml")


def below_hw(member: int = 3, prop: str = "P-HWV", **evidence: Any) -> Finding:
    fields = {"partition": "foo-0", "member": member, "member_leo": 3, "leader": 1, "leader_hw": 6,
              "isr": [1, 2, 3], **evidence}
    return Finding(VIOLATION, "tick", 9, f"foo-0: ISR member {member} has LEO 3 below leader 1's HW 6",
                   property=prop, evidence=fields)


REPLACED = PROPOSAL_REPLACED_AT_EQUAL_EPOCH


def admitted(*proposals: str | None, member: int = 3) -> ClusterObservation:
    """An observation whose admissions of `member` to foo-0 had these `proposal` values, in order."""
    return ClusterObservation(9, 0, {}, {}, {}, {}, admissions=tuple(
        IsrAdmission(i, "foo", 0, member, 1, 5, 5, True, p) for i, p in enumerate(proposals, 1)))


def test_the_rule_matches_a_member_below_the_hw_admitted_by_a_replaced_proposal() -> None:
    assert classified_violation(below_hw(), admitted(REPLACED)).known == RULE


def test_the_rule_matches_nothing_else() -> None:
    assert classified_violation(below_hw(), admitted(PROPOSAL_PENDING)).known is None  # the leader still held it
    assert classified_violation(below_hw(), admitted(PROPOSAL_OTHER)).known is None  # superseded, or a stale epoch
    assert classified_violation(below_hw(), admitted(None)).known is None  # the ground truth does not say
    assert classified_violation(below_hw(), admitted(REPLACED, PROPOSAL_PENDING)).known is None  # the latest decides
    assert classified_violation(below_hw(), admitted()).known is None  # never admitted
    assert classified_violation(below_hw(member=2), admitted(REPLACED)).known is None  # another member
    assert classified_violation(below_hw(prop="P-ACK"), admitted(REPLACED)).known is None
    differs = below_hw(offset=0)
    del differs.evidence["member_leo"]  # P-HWV's other form: a member that differs below the HW
    assert classified_violation(differs, admitted(REPLACED)).known is None
    assert classified_violation(below_hw(), None).known is None


def test_the_ground_truth_json_keeps_the_proposal_and_reads_old_records() -> None:
    observation = admitted(REPLACED)
    assert ground_truth_from_json(ground_truth_json(observation)).admissions[0].proposal == REPLACED
    old = ground_truth_json(observation)
    del old["admissions"][0]["proposal"]  # a record written before the field existed
    assert ground_truth_from_json(old).admissions[0].proposal is None


class HwIgnoresFollowers(LeaderRules):
    """Moves the HW to its own log end, whoever is in the ISR (leader.md §7 step 3 dropped)."""

    def high_watermark_candidate(self, partition: Partition, now_ms: int) -> int:
        return partition.log.leo


def scenario_run(target: ReferenceClusterTarget, reference: ReferenceClusterTarget, drop: int = 0) -> Run:
    """The equal-epoch scenario's operations (its checks left out) on `target` beside the reference,
    without its last `drop` operations, to the first finding."""
    scenario = load_file(SCENARIO)[0]
    for side in {id(target): target, id(reference): reference}.values():
        side.open("3.9", scenario.config)
    run = cluster_run(reference, target, "3.9")
    steps = [Step(0, op, {"broker": b}, None, {}, None) for b in scenario.brokers
             for op in ("register_broker", "unfence_broker")]
    operations = [s for s in scenario.steps if not s.op.startswith("check_")]
    for step in [*steps, *operations[:len(operations) - drop]]:
        run.step(step)
        if run.stopped:
            break
    return run


def test_the_reference_running_the_equal_epoch_scenario_is_known_not_a_finding() -> None:
    reference = ReferenceClusterTarget()
    run = scenario_run(reference, reference)
    assert [(f.property, f.known) for f in run.findings] == [("P-HWV", RULE)]
    truth = run.history.steps[-1].target.ground_truth
    assert truth is not None
    admissions = [(a.broker, a.caught_up, a.proposal) for a in truth.admissions]
    assert admissions == [(2, True, PROPOSAL_PENDING), (3, True, REPLACED)]  # B's admission held; C's was replaced


def test_a_leader_whose_hw_passes_its_isr_breaks_p_hwv_as_a_finding() -> None:
    """The same operations with a leader whose HW ignores its followers: the first acks=1 record
    puts the HW above ISR members that never entered by an admission, which no rule explains."""
    target = ReferenceClusterTarget(leader_rules=HwIgnoresFollowers())
    run = scenario_run(target, ReferenceClusterTarget())
    assert [(f.property, f.operation, f.known) for f in run.findings] == [("P-HWV", "produce", None)]
