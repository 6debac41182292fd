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


def test_a_mutant_campaign_ends_at_its_levels_run_count_not_at_its_time_cap(tmp_path: Path) -> None:
    """Verdicts bounded by runs are the same on a loaded machine as on a quiet one."""
    plan = PipelinePlan(out=tmp_path, reference_examples=4, mutant_runs=(("controller", 7), ("cluster", 3)),
                        mutant_budget_s=120.0)
    by_mutant = {job.config.mutant: job for job in jobs(plan) if job.config.mutant}
    assert by_mutant["B02"].config.examples == 7 and by_mutant["B03a"].config.examples == 3
    # a negative control is checked like the reference, not sought like a mutant
    assert by_mutant["N1"].config.examples == by_mutant["N2"].config.examples == 4
    _, result, seconds = run_job(by_mutant["N2"])  # nothing ends it early
    assert not result.found
    assert 4 <= result.runs <= 7, result.runs  # Hypothesis may start and discard an example or two
    assert seconds < plan.mutant_budget_s / 4
