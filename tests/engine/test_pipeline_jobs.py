"""The main job's mutant campaigns: a found mutant stops soon after its finding (its shrinking is
capped) instead of shrinking until the end of its budget, so found mutants cost less than missed ones."""

from __future__ import annotations

from pathlib import Path

from isrcheck.pipeline import PipelinePlan, jobs, run_job


def test_a_found_mutant_shrinks_for_the_cap_not_the_whole_budget(tmp_path: Path) -> None:
    plan = PipelinePlan(out=tmp_path, mutant_budget_s=30.0, mutant_shrink_s=1)
    job = next(job for job in jobs(plan) if job.config.mutant == "B14")
    _, result, seconds = run_job(job)
    assert result.found and result.seconds_to_first_finding is not None
    # Hypothesis checks its shrink limit between shrink passes: a second of slack for the pass in progress
    assert result.seconds - result.seconds_to_first_finding < plan.mutant_shrink_s + 2.0, result.seconds
    assert seconds < plan.mutant_budget_s / 2


def test_every_mutant_campaign_gets_the_cap_and_the_reference_campaigns_do_not_need_one(tmp_path: Path) -> None:
    plan = PipelinePlan(out=tmp_path, mutant_shrink_s=2)
    for job in jobs(plan):
        if job.config.budget_s is not None:
            assert job.config.shrink_budget_s == 2, job.label
        else:
            assert job.config.examples == plan.reference_examples and not job.expect_finding, job.label
