"""What a record carries for a reader who was not there: the shrunk counterexample's own
findings (its messages are about its steps), the mutant under test wherever the adapter spec names
it, the catalogue's title and ticket, the properties checked, the outcomes reached, and which
isrcheck ran."""

from __future__ import annotations

import json
from pathlib import Path

from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.provenance import commit_of
from isrcheck.conformance.engine.targets import TargetSpec
from isrcheck.contract.operations.coverage import coverage_points
from isrcheck.reference_impl.mutants import CATALOGUE


def records(directory: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.open()]


def test_the_shrunk_counterexample_carries_its_own_findings_and_they_are_what_is_printed(tmp_path: Path) -> None:
    # the first seed whose failing run Hypothesis could shorten (a run that fails at its first
    # steps is its own counterexample, and then the two could not be told apart); whatever the
    # numbers, the shown finding must sit at the counterexample's diverging step
    for seed in range(3, 13):
        records_dir = tmp_path / str(seed)
        result = run_campaign(CampaignConfig(mutant="B01", examples=200, steps=50, seed=seed,
                                             records_dir=records_dir))
        (shrunk,) = [r for r in records(records_dir) if r["counterexample"] is not None]
        counterexample = shrunk["counterexample"]
        if counterexample["length"] < shrunk["steps"]:
            break
    else:
        raise AssertionError("no seed of ten found B01 in a run that shrinking shortened")
    for finding in counterexample["findings"]:
        assert finding["step"] == counterexample["diverging_step"] <= counterexample["length"]
        if finding["signature"] in result.examples:
            assert result.examples[finding["signature"]]["message"] == finding["message"]
    # the shorter interleaving shows the bug the run found; the consequences around it may differ
    # (Hypothesis keeps a shrink that fails the same way, and a finding is one way to fail: the longer
    # run also showed a partition epoch that differed later, the shorter one an ISR at its last step)
    found = {f["signature"] for f in shrunk["findings"]}
    assert found & {f["signature"] for f in counterexample["findings"]} & set(result.examples)


def test_records_name_the_mutant_title_ticket_properties_coverage_and_provenance(tmp_path: Path) -> None:
    run_campaign(CampaignConfig(mutant="B02", examples=5, steps=10, seed=1, records_dir=tmp_path,
                                stop_at_first=False))
    record = records(tmp_path)[0]
    assert (record["mutant"], record["mutant_ticket"]) == ("B02", "KAFKA-13916 / KIP-841")
    assert record["mutant_title"] == CATALOGUE["B02"].title
    assert record["properties"] == ["P-ELIG", "P-LEAD", "LeaderInIsr"]
    assert "create_topic:NONE" in record["coverage"] and "register_broker:NONE" in record["coverage"]
    assert record["isrcheck_version"] == "0.1.0"


def test_a_wire_mutant_spec_names_its_mutant() -> None:
    assert TargetSpec("kafka-wire,mutant=B02").served_mutant == "B02"
    assert TargetSpec("reference+D12").served_mutant == "D12"
    assert TargetSpec("kafka-wire").served_mutant is None
    assert TargetSpec("reference", "B01").served_mutant == "B01"
    assert TargetSpec("kafka-wire,mutant=B02").served_mutant_entry() is CATALOGUE["B02"]


def test_coverage_points_name_the_branch_taken() -> None:
    steps = [("alter_partition", {"top_level_error": "STALE_BROKER_EPOCH", "error": "NONE"}),
             ("alter_partition", {"top_level_error": "NONE", "error": "INELIGIBLE_REPLICA"}),
             ("elect_leaders", {"errors": [["t0", 0, "NONE"], ["t0", 1, "ELECTION_NOT_NEEDED"]]}),
             ("crash", {}), ("crash", None), ("controlled_shutdown", {"error": "NONE"})]
    assert coverage_points(steps) == ["alter_partition:INELIGIBLE_REPLICA", "alter_partition:STALE_BROKER_EPOCH",
                                      "controlled_shutdown", "controlled_shutdown:NONE", "crash",
                                      "elect_leaders:ELECTION_NOT_NEEDED"]


def test_commit_of_a_directory_outside_git_is_none(tmp_path: Path) -> None:
    assert commit_of(tmp_path) is None
