"""The checkers of one controller-level history step, the same live (`PairRun.step`) and offline
(`isrcheck check` on a record's history): the differential — one more checker, over the two
sides of the step — then the properties over the target's side.

A step's divergences that a known-divergence rule explains are marked so (docs/known-divergences.md);
the properties judge the target alone, on its answer and on its observation before and after.
A step whose target side carries no observation judges no property: the run's record lists them
as unknown (`PairRun.unknown`).
"""

from __future__ import annotations

from isrcheck.conformance.engine.differential import compare_observations, compare_results
from isrcheck.conformance.properties.catalogue import judge_controller_step
from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.history.steps import HistoryStep
from isrcheck.contract.operations.findings import Finding
from isrcheck.contract.operations.known_divergences import DivergingStep, classified


def judge_pair_step(step: HistoryStep, target_before: ControllerObservation, reference_before: ControllerObservation,
                    differential: bool, observable: frozenset[str] | None) -> list[Finding]:
    """Every finding of one step: divergences first (when `differential`), then violations."""
    target, reference = step.target, step.reference
    assert target.result is not None and target.args is not None
    findings: list[Finding] = []
    if differential and reference is not None and reference.result is not None:
        for finding in (
            compare_results(step.index, step.op, reference.result, target.result),
            None if target.observation is None or reference.observation is None
            else compare_observations(step.index, step.op, reference.observation, target.observation, observable),
        ):
            if finding is not None:
                findings.append(finding)
        if findings:  # a divergence a known-divergence rule explains is marked so (not a finding)
            findings = classified(findings, DivergingStep(step.op, target.args, reference_before,
                                                          reference.result, target.result))
    if target.observation is not None:
        findings.extend(judge_controller_step(step.index, step.op, target.args, target.result,
                                              target_before, target.observation))
    return findings
