"""bench/mutation.py and bench/mutated_reference.py: a cosmic-ray mutant reaches the target only,
never the oracle; the engine kills a mutant that breaks a rule and passes an unmutated copy; and
(slow) a fixed sample of five mutants gets the verdicts the full table reports for them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
ALTER_PARTITION = ROOT / "reference_impl" / "alter_partition.py"
FENCED_CHECK = "    if registration.fenced:\n        return \"fenced\"\n"


def bench_module(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:  # as `python bench/mutation.py` runs it: its neighbours importable
        sys.path.insert(0, str(BENCH))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def fenced_admitted() -> str:
    """alter_partition.py with the KIP-841 fenced check removed (B02's half)."""
    source = ALTER_PARTITION.read_text(encoding="utf-8")
    assert FENCED_CHECK in source
    return source.replace(FENCED_CHECK, "")


def test_an_annotation_only_change_is_recognised_and_a_real_one_is_not() -> None:
    mutation = bench_module("mutation")
    original = "from __future__ import annotations\ndef f(x: int | None) -> int:\n    return x or 1\n"
    annotation = original.replace("int | None", "int - None")
    real = original.replace("x or 1", "x and 1")
    assert mutation.without_annotations(annotation) == mutation.without_annotations(original)
    assert mutation.without_annotations(real) != mutation.without_annotations(original)


def test_the_mutant_reaches_the_target_controller_and_not_the_reference() -> None:
    loader = bench_module("mutated_reference")
    from isrcheck.reference_impl import alter_partition, controller
    from isrcheck.reference_impl.messages import IsrMember
    from isrcheck.reference_impl.state import BrokerRegistration

    entry = loader.mutant_entry("alter_partition", fenced_admitted())
    mutated_controller = entry.controller_class
    assert mutated_controller is not None and mutated_controller is not controller.Controller
    fenced = {2: BrokerRegistration(2, 7, "incarnation-2", fenced=True)}
    member = IsrMember(2, 7)
    assert alter_partition.ineligibility(member, fenced, True) == "fenced"  # the oracle's rule is untouched
    mutated_module = sys.modules[mutated_controller.__module__]
    assert mutated_module.ineligibility(member, fenced, True) is None  # the target's controller calls the mutant
    assert mutated_module.Error is alter_partition.Error  # values cross between the two unchanged
    assert mutated_module.BrokerState is controller.BrokerState


def run_child(source: str, tmp_path: Path, *run_args: str) -> dict[str, object]:
    path = tmp_path / "alter_partition.py"
    path.write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, str(BENCH / "mutated_reference.py"), "--module", "alter_partition",
                           "--source", str(path), "--", "--seed", "1", "--json", "--shrink-budget", "0", *run_args],
                          capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert done.stdout.startswith("{"), done.stderr[-2000:]
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


def test_the_engine_kills_a_mutated_rule_and_passes_the_unmutated_copy(tmp_path: Path) -> None:
    killed = run_child(fenced_admitted(), tmp_path, "--no-differential", "--examples", "200")
    assert killed["verdict"] == "failed"
    assert any(":P-ELIG:" in signature for signature in killed["findings"])  # type: ignore[union-attr]
    clean = run_child(ALTER_PARTITION.read_text(encoding="utf-8"), tmp_path, "--examples", "60")
    assert clean["verdict"] == "passed"
    assert clean["runs"] >= 60


SAMPLE = {
    "alter_partition:core/ReplaceComparisonOperator_Gt_IsNot:1": "differential",
    "alter_partition_manager:core/ReplaceFalseWithTrue:1": "properties",
    "leader_rules:core/ReplaceComparisonOperator_GtE_Is:5": "properties",
    "partition_change:core/ReplaceAndWithOr:6": "differential",
    "follower:core/AddNot:0": "survived",
}
"""Five mutants of bench/mutation.py's table: their verdicts there, one per kind of outcome."""


@pytest.mark.slow
def test_a_sample_of_five_mutants_gets_its_verdicts(tmp_path: Path) -> None:
    saved = tmp_path / "sample.json"
    done = subprocess.run([sys.executable, str(BENCH / "mutation.py"), "--only", *SAMPLE, "--budget", "30",
                           "--processes", "1", "--save", str(saved)],
                          capture_output=True, text=True, timeout=900, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(saved.read_text(encoding="utf-8"))["results"]
    verdicts = {r["spec"]["module"] + ":" + r["spec"]["operator"] + ":" + str(r["spec"]["occurrence"]):
                r["killed_by"] or "survived" for r in results}
    assert verdicts == SAMPLE
    assert Counter(verdicts.values()) == Counter({"differential": 2, "properties": 2, "survived": 1})
    assert all(r["seconds_to_kill"] < 30 for r in results if r["killed_by"])
    assert "survived: 1, of which equivalent: 1" in done.stdout  # the TYPE_CHECKING guard, triaged


def test_a_drawn_campaign_runs_at_the_controller_level_only() -> None:
    mutation = bench_module("mutation")
    campaigns = [mutation.campaign_option(text) for text in mutation.DEFAULT_CAMPAIGNS]
    assert campaigns[-1] == mutation.Campaign(4, "4.0", True) and campaigns[-1].text == "4:4.0:drawn"
    assert mutation.campaigns_at("controller", campaigns) == campaigns
    assert mutation.campaigns_at("cluster", campaigns) == campaigns[:3]
    for bad in ("4:4.0:sometimes", "x:4.0", "4"):
        with pytest.raises(Exception, match="SEED:RELEASE"):
            mutation.campaign_option(bad)


@pytest.mark.slow
def test_mutant_decisions_tells_a_reachable_difference_from_none() -> None:
    """bench/mutant_decisions.py, the measurement behind the equivalent-over-reachable-states
    triages: the ELR-branch mutant killed by the differential decides differently in most partition
    changes of a 4.0 campaign with ELR on; the one triaged equivalent in none."""
    done = subprocess.run([sys.executable, str(BENCH / "mutant_decisions.py"), "--function", "build_partition_change",
                           "--only", "partition_change:core/ReplaceUnaryOperator_Delete_Not:13",
                           "partition_change:core/ReplaceComparisonOperator_NotEq_GtE:9", "--",
                           "--kafka", "4.0", "--setting", "eligible_leader_replicas=true", "--seed", "21",
                           "--examples", "50"],
                          capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    calls = int(next(line for line in lines if line.endswith("calls of build_partition_change")).split()[0])
    counts = {line.split(": ")[0]: int(line.split(": ")[1].split()[0])
              for line in lines if "decided differently" in line}
    assert calls > 500
    assert counts["partition_change:core/ReplaceUnaryOperator_Delete_Not:13"] > calls // 10
    assert counts["partition_change:core/ReplaceComparisonOperator_NotEq_GtE:9"] == 0
