"""Proofs for the cluster-level mutant catalogue (reference_impl/mutants, bugs.md B01–B30 and
appendix D1–D14): every mutant breaks at least one property its catalogue entry names, on a
targeted cluster scenario (tests/mutants/scenarios/) or on seeded random schedules, and the same
scenario or seeds pass on the reference; the negative controls break nothing on many seeds and
on every scenario.

A failing proof prints what the mutant's run saw; replay a scenario with
`isrcheck scenario tests/mutants/scenarios/FILE --adapter reference+ID --kafka RELEASE`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from isrcheck.adapters.catalogue.registry import LevelDispatch, make_target
from isrcheck.conformance.engine.random_schedules import ScheduleConfig, run_schedule
from isrcheck.conformance.properties.catalogue import ALL_PROPERTIES
from isrcheck.conformance.scenario.load import load_all, load_file
from isrcheck.conformance.scenario.run import run_scenario
from isrcheck.contract.errors import UsageError
from isrcheck.reference_impl.mutants import CATALOGUE, EQUIVALENT, Mutant
from isrcheck.reference_impl.mutants import cluster_mutants as km
from isrcheck.reference_impl.mutants import controller_mutants as cm
from mutant_helpers import SCENARIOS, CappedClusterTarget, run_file

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "conformance" / "scenarios" / "cluster"

CLUSTER = {m.id: m for m in CATALOGUE.values() if m.level == "cluster"}
MUTANTS = sorted(i for i, m in CLUSTER.items() if not m.negative_control)
CONTROLS = sorted(i for i, m in CLUSTER.items() if m.negative_control)

SCENARIO_PROOFS: dict[str, tuple[str, str]] = {
    "B01L": ("b01l_proposal_without_broker_epochs.yaml", "4.1"),
    "B03a": ("b03a_proposes_fenced_follower.yaml", "4.1"),
    "B03b": ("b03b_retries_ineligible.yaml", "4.1"),
    "B06": ("b06_stale_incarnation_fetch.yaml", "4.1"),
    "B07": ("b07_in_sync_at_hw.yaml", "4.1"),
    "B08a": ("b08_maximal_isr.yaml", "4.1"),
    "B08b": ("b08_maximal_isr.yaml", "4.1"),
    "B09": ("b09_diverging_fetch.yaml", "4.1"),
    "B15a": ("b15a_hw_under_min_isr.yaml", "4.1"),
    "B17": ("b17_clears_inflight_item.yaml", "4.1"),
    "B21L": ("b21l_stale_controller_errors.yaml", "4.1"),
    "B22": ("b22_rebuilt_request_loses_isr.yaml", "3.3"),
    "B23": ("b23_ineligible_holds_back_hw.yaml", "4.1"),
    "B27": ("b27_hw_before_truncation.yaml", "4.1"),
    "D4": ("d4_late_response_applied.yaml", "4.1"),
    "D6": ("d6_older_metadata.yaml", "4.1"),
    "D7": ("d7_new_leader_assumes_leos.yaml", "4.1"),
    "D9": ("d9_proposes_while_inflight.yaml", "4.1"),
    "D10": ("d10_many_requests_inflight.yaml", "4.1"),
    "D14": ("d14_strict_fetch_broker_epoch.yaml", "4.1"),
}
"""Mutant → (proof scenario file, release)."""

SEED_PROOFS: dict[str, tuple[ScheduleConfig, range]] = {
    # a follower's HW past its LEO needs a follower catching up over several (small) fetch
    # responses, which scenario config cannot set; BrokerConfig.fast() has four records per fetch
    "D13": (ScheduleConfig(actions=400), range(0, 80)),
    # also found at random (the scenario is the primary proof)
    "D10": (ScheduleConfig(), range(0, 120)),
}
"""Mutant → (schedule configuration, seeds searched in order until one violates)."""


def with_options(config: ScheduleConfig, mutant: Mutant | None) -> ScheduleConfig:
    options = {} if mutant is None else mutant.cluster_kwargs()
    return ScheduleConfig(
        release=config.release, actions=config.actions, partitions=config.partitions,
        min_insync_replicas=config.min_insync_replicas, cluster_options=options,
    )


# ------------------------------------------------------------------------------ the catalogue


def test_every_cluster_mutant_has_a_proof() -> None:
    assert set(MUTANTS) == set(SCENARIO_PROOFS) | {m for m in SEED_PROOFS if m not in SCENARIO_PROOFS}
    assert set(CONTROLS) == {"N2", "N3", "N4"}
    for name, _ in SCENARIO_PROOFS.values():
        assert (SCENARIOS / name).is_file(), name


def test_cluster_entries_are_well_formed() -> None:
    for mutant in CLUSTER.values():
        assert mutant.controller_class is None, mutant.id
        assert mutant.cluster_options, mutant.id
        assert set(mutant.breaks) <= set(ALL_PROPERTIES), mutant.id
        assert bool(mutant.breaks) != mutant.negative_control, mutant.id
        assert set(mutant.to_json()) == {"id", "title", "source", "breaks", "level", "negative_control", "release"}
        target = CappedClusterTarget(**mutant.cluster_kwargs())  # the options are the target's keywords
        assert target.options


def test_controller_mutants_run_in_the_cluster_model_too() -> None:
    assert CATALOGUE["B01"].cluster_kwargs() == {"controller_class": cm.IgnoresMemberBrokerEpochs}
    assert CATALOGUE["B03a"].cluster_kwargs()["controller_class"] is cm.AcceptsFencedAndShuttingDown


def test_equivalent_mutants_are_documented_and_not_catalogued() -> None:
    assert EQUIVALENT and not set(EQUIVALENT) & set(CATALOGUE)
    assert {"B10", "B16", "B19", "B26", "D2", "D3", "D5", "D8", "D11"} <= set(EQUIVALENT)
    for entry in EQUIVALENT.values():
        assert entry.reason and entry.mutant.level == "cluster" and entry.mutant.cluster_options


def test_the_mutants_command_lists_the_cluster_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    from isrcheck.cli import main

    assert main(["mutants"]) == 0
    listed = capsys.readouterr().out
    for mutant_id in CLUSTER:
        assert any(line.split()[:2] == [mutant_id, "cluster"] for line in listed.splitlines()), mutant_id


# ------------------------------------------------------------------------------ proofs


@pytest.mark.parametrize("mutant_id", sorted(SCENARIO_PROOFS))
def test_the_proof_scenario_breaks_a_property_the_mutant_names(mutant_id: str) -> None:
    name, release = SCENARIO_PROOFS[mutant_id]
    path = SCENARIOS / name
    reference = run_file(path, None, release)
    assert all(o.status == "passed" and not o.violations for o in reference), [(o.name, o.reason) for o in reference]
    outcomes = run_file(path, mutant_id, release)
    violated = set().union(*(o.violated for o in outcomes))
    assert violated & set(CATALOGUE[mutant_id].breaks), [(o.name, o.status, o.reason, o.violated) for o in outcomes]


@pytest.mark.parametrize("mutant_id", sorted(SEED_PROOFS))
def test_seeded_schedules_find_the_mutant(mutant_id: str) -> None:
    config, seeds = SEED_PROOFS[mutant_id]
    mutant = CATALOGUE[mutant_id]
    found = None
    tried = []
    for seed in seeds:
        tried.append(seed)
        result = run_schedule(seed, with_options(config, mutant))
        if {v.property for v in result.violations} & set(mutant.breaks):
            found = result
            break
    assert found is not None, f"{mutant_id}: no violation of {mutant.breaks} in seeds {seeds}"
    failures = [r.summary() for r in (run_schedule(s, with_options(config, None)) for s in tried) if not r.ok]
    assert not failures, failures


def test_b03a_needs_both_halves() -> None:
    """bugs.md B03: alone the leader's proposal of a fenced follower is refused by the controller
    (INELIGIBLE_REPLICA); with B02's controller, which admits it, P-ELIG breaks."""
    (scenario,) = load_file(SCENARIOS / SCENARIO_PROOFS["B03a"][0])
    halves: list[dict[str, Any]] = [
        {"leader_rules": km.ProposesIneligibleReplicas()}, {"controller_class": cm.AcceptsFencedAndShuttingDown},
    ]
    for options in halves:
        target = CappedClusterTarget(**options)
        result = run_scenario(scenario, target, "4.1")
        assert result.status == "passed" and not result.violations, (options, result.reason)


# ------------------------------------------------------------------------------ negative controls

CONTROL_PARTITIONS = 4
"""Batching (N2, N4) shows only with several proposals queued behind one in flight."""


@pytest.mark.parametrize("release", ["4.1", "3.5"])
@pytest.mark.parametrize("control", ["N2", "N3", "N4"])
def test_negative_controls_pass_random_schedules(control: str, release: str) -> None:
    mutant = CATALOGUE[control]
    config = with_options(ScheduleConfig(release=release, partitions=CONTROL_PARTITIONS), mutant)
    failures = [r.summary() for r in (run_schedule(seed, config) for seed in range(100)) if not r.ok]
    assert not failures, failures


@pytest.mark.parametrize("control", ["N2", "N3", "N4"])
def test_negative_controls_change_the_runs(control: str) -> None:
    """A control is not vacuous: on some seed it makes the cluster behave differently."""
    config = ScheduleConfig(partitions=CONTROL_PARTITIONS)
    for seed in range(100):
        reference = run_schedule(seed, config)
        if run_schedule(seed, with_options(config, CATALOGUE[control])).digest != reference.digest:
            return
    pytest.fail(f"{control} never changed a run")


@pytest.mark.parametrize("release", ["4.1", "3.5", "3.3"])
@pytest.mark.parametrize("control", ["N2", "N3", "N4"])
def test_negative_controls_pass_every_scenario(control: str, release: str) -> None:
    target = make_target(f"reference+{control}")
    results = [run_scenario(s, target, release) for s in load_all([str(SCENARIOS), str(SHIPPED)])]
    assert not [r.reason for r in results if r.status == "failed"]
    assert isinstance(target, LevelDispatch)


@pytest.mark.slow
@pytest.mark.parametrize("release", ["4.1", "4.0", "3.9", "3.7", "3.5", "3.3"])
@pytest.mark.parametrize("control", ["N2", "N3", "N4"])
def test_negative_controls_pass_many_random_schedules(control: str, release: str) -> None:
    config = with_options(ScheduleConfig(release=release, partitions=CONTROL_PARTITIONS), CATALOGUE[control])
    failures = [r.summary() for r in (run_schedule(seed, config) for seed in range(1000, 2000)) if not r.ok]
    assert not failures, failures


# ------------------------------------------------------------------------------ the adapter


def test_reference_plus_mutant_adapter() -> None:
    target = make_target("reference+B06")
    assert isinstance(target, LevelDispatch) and target.name == "reference+B06"
    (scenario,) = load_file(SCENARIOS / SCENARIO_PROOFS["B06"][0])
    assert run_scenario(scenario, target, "4.1").status == "failed"
    assert run_scenario(scenario, make_target("reference"), "4.1").status == "passed"
    with pytest.raises(UsageError, match="unknown mutant"):
        make_target("reference+B99")
