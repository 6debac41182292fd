"""Scenario semantics (scenario-format.md): defaults, `current`, captures, `when`, `kafka`, set
comparison of ELR fields, failures naming step, field, expected and actual; exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.scenario.load import load_file
from isrcheck.conformance.scenario.run import run_scenario

KIP903 = """
name: a replica that re-registered may not join the ISR with its old epoch (KIP-903)
source: KIP-903
kafka: ">=3.7"
brokers: [1, 2, 3]
steps:
  - create_topic: {topic: foo, assignment: [[1, 2, 3]]}
  - check_broker: {broker: 3}
    as: {broker_epoch: old3}
  - alter_partition: {version: 3, broker: 1, topic: foo, isr: [1, 2]}
    expect: {error: NONE, isr: [1, 2], partition_epoch: 1, leader_epoch: 0}
  - fence_broker: {broker: 3}
  - register_broker: {broker: 3}
  - unfence_broker: {broker: 3}
  - alter_partition: {version: 3, broker: 1, topic: foo, isr: [1, 2, [3, $old3]]}
    expect: {error: INELIGIBLE_REPLICA}
  - alter_partition: {version: 3, broker: 1, topic: foo, isr: [1, 2, 3]}
    expect: {error: NONE, isr: [1, 2, 3], partition_epoch: 2}
"""


def run_text(tmp_path: Path, text: str, release: str = "4.1") -> list[str]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return [run_scenario(s, ReferenceTarget(), release).status for s in load_file(path)]


def test_the_format_example_passes_where_it_applies_and_skips_elsewhere(tmp_path: Path) -> None:
    assert run_text(tmp_path, KIP903, "4.1") == ["passed"]
    assert run_text(tmp_path, KIP903, "3.7") == ["passed"]
    assert run_text(tmp_path, KIP903, "3.5") == ["skipped"]


def test_a_wrong_expectation_fails_naming_step_field_expected_and_actual(tmp_path: Path) -> None:
    text = KIP903.replace("expect: {error: INELIGIBLE_REPLICA}", "expect: {error: NONE}")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    (scenario,) = load_file(path)
    result = run_scenario(scenario, ReferenceTarget(), "4.1")
    assert result.status == "failed"
    assert result.failure is not None
    assert (result.failure.step, result.failure.op, result.failure.field) == (7, "alter_partition", "error")
    assert (result.failure.expected, result.failure.actual) == ("NONE", "INELIGIBLE_REPLICA")


def test_capture_arithmetic_and_when(tmp_path: Path) -> None:
    text = """
name: partition epoch captured and compared with +1; a step limited to 3.x
brokers: [1, 2]
steps:
  - create_topic: {topic: t, assignment: [[1, 2]]}
  - check_partition: {topic: t}
    as: {partition_epoch: pe}
  - alter_partition: {broker: 1, topic: t, isr: [1]}
    expect: {partition_epoch: $pe+1}
  - alter_partition: {version: 0, broker: 1, topic: t, isr: [1, 2]}
    when: "<4.0"
  - alter_partition: {version: 0, broker: 1, topic: t, isr: [1, 2]}
    when: ">=4.0"
    expect: {top_level_error: UNSUPPORTED_VERSION}
"""
    assert run_text(tmp_path, text, "4.1") == ["passed"]
    assert run_text(tmp_path, text, "3.9") == ["passed"]


def test_elr_fields_compare_as_sets_and_other_lists_in_order(tmp_path: Path) -> None:
    text = """
name: ELR compares as a set, ISR in order
kafka: ">=4.1"
config: {eligible_leader_replicas: true, min_insync_replicas: 3}
brokers: [1, 2, 3]
steps:
  - create_topic: {topic: t, assignment: [[1, 2, 3]]}
  - fence_broker: {broker: 3}
  - fence_broker: {broker: 2}
  - check_partition: {topic: t, isr: [1], elr: [3, 2]}
"""
    assert run_text(tmp_path, text) == ["passed"]
    assert run_text(tmp_path, text.replace("isr: [1], elr: [3, 2]", "isr: [1], elr: [3]")) == ["failed"]


def test_unsupported_configuration_skips_with_reason(tmp_path: Path) -> None:
    text = "name: elr on 3.9\nconfig: {eligible_leader_replicas: true}\nbrokers: [1]\nsteps:\n" \
           "  - create_topic: {topic: t, assignment: [[1]]}\n"
    assert run_text(tmp_path, text, "3.9") == ["skipped"]


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(KIP903)
    bad = tmp_path / "bad.yaml"
    bad.write_text(KIP903.replace("partition_epoch: 2}", "partition_epoch: 7}"))
    command = [sys.executable, "-m", "isrcheck", "scenario"]
    passed = subprocess.run([*command, str(good)], capture_output=True, text=True, timeout=60)
    assert passed.returncode == 0 and passed.stdout.strip().endswith("1 passed, 0 failed, 0 skipped")
    failed = subprocess.run([*command, str(good), str(bad), "--json"], capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1
    objects = [json.loads(line) for line in failed.stdout.splitlines()]
    assert [o["status"] for o in objects] == ["passed", "failed"]
    assert objects[1]["failure"] == {
        "step": 8, "op": "alter_partition", "field": "partition_epoch", "expected": 7, "actual": 2,
    }
    assert "1 passed, 1 failed, 0 skipped" in failed.stderr
