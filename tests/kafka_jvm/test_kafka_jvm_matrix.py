"""The four-release matrix (slow): the whole scenario suite and a campaign against Kafka 3.3.2,
3.5.2, 3.7.1 and 3.9.0's own controller classes, and the developer's loop of docs/kafka-jvm.md —
a ReplicationControlManager with the ISR-eligibility rule dropped, ahead of 3.9's jars, is caught."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from isrcheck.adapters.kafka_jvm.target import KafkaJvmTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.scenario.load import load_all
from isrcheck.conformance.scenario.run import run_scenario

from tests.kafka_jvm.conftest import KNOWN_DIVERGENCE_PREFIXES, RELEASES, REPO, kafka_home

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("release", RELEASES)
def test_scenario_suite_and_k1_on_each_release(release: str) -> None:
    target = KafkaJvmTarget(kafka_home=str(kafka_home(release)))
    try:
        scenarios = load_all([str(REPO / "conformance" / "scenarios"), str(REPO / "docs" / "kafka-jvm-findings")])
        results = [run_scenario(s, target, release) for s in scenarios]
    finally:
        target.shutdown()
    assert not [r.reason for r in results if r.status == "failed"]
    assert sum(r.status == "passed" for r in results) >= 130


@pytest.mark.parametrize("release", RELEASES)
def test_campaign_on_each_release_finds_only_known_divergences(release: str) -> None:
    config = CampaignConfig(adapter=f"kafka-jvm,kafka-home={kafka_home(release)}", release=release, examples=60,
                            steps=50, seed=11, stop_at_first=False, batch_size=60)
    result = run_campaign(config)
    assert result.runs >= 60
    assert set(result.outcomes) <= {"pass", "finding"}, result.outcomes
    assert not [s for s in result.signatures if not s.startswith(KNOWN_DIVERGENCE_PREFIXES)], result.examples


def test_a_patched_controller_class_is_caught(tmp_path: Path) -> None:
    home = kafka_home("3.9")
    demo = REPO / "docs" / "kafka-jvm-demo"
    exports = "--add-exports=java.base/jdk.internal.org.objectweb.asm=ALL-UNNAMED"
    subprocess.run(["javac", exports, "-d", str(tmp_path), str(demo / "DropEligibilityCheck.java")], check=True)
    metadata_jar = next((home / "libs").glob("kafka-metadata-*.jar"))
    patched = tmp_path / "patched.jar"
    subprocess.run(["java", exports, "-cp", str(tmp_path), "DropEligibilityCheck", str(metadata_jar), str(patched)],
                   check=True)
    config = CampaignConfig(adapter=f"kafka-jvm,classpath={patched}:{home / 'libs'}/*", release="3.9",
                            examples=200, steps=50, seed=2, records_dir=tmp_path / "records")
    result = run_campaign(config)
    assert any(s.startswith("violation:alter_partition:P-ELIG") for s in result.signatures), result.signatures
    records = [json.loads(line) for f in (tmp_path / "records").glob("*.jsonl") for line in f.open()]
    shrunk = [r["counterexample"]["length"] for r in records if r["outcome"] == "finding"]
    assert shrunk and min(shrunk) <= 15
