"""The release matrix (slow): the whole scenario suite and a campaign against Kafka 3.3.2,
3.5.2, 3.7.1, 3.9.0, 4.0.1 and 4.1.1's own controller classes, and the developer's loop of docs/kafka-jvm.md —
Kafka's own ReplicationControlManager.java with the KIP-841 eligibility rule patched out, compiled
and put ahead of 3.9's jars, is caught (and compiled unpatched, is not)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from isrcheck.adapters.kafka_jvm.target import KafkaJvmTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.scenario.load import load_all
from isrcheck.conformance.scenario.run import run_scenario

from tests.kafka_jvm.conftest import KNOWN_DIVERGENCE_PREFIXES, RELEASES, REPO, kafka_home

pytestmark = pytest.mark.slow
DEMO = REPO / "docs" / "kafka-jvm-demo"


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


def kafka_git_dir() -> Path:
    """An apache/kafka clone to take ReplicationControlManager.java from: $KAFKA_GIT_DIR, else the
    bare mirror beside the repository. Not vendored: the test needs a Kafka release on disk anyway
    (it skips without one), and a copy of one release's 2,400-line source would only go stale."""
    candidate = Path(os.environ.get("KAFKA_GIT_DIR") or REPO.parent / ".mirror" / "apache+kafka" / "repo")
    if subprocess.run(["git", "--git-dir", str(candidate), "rev-parse", "--git-dir"], capture_output=True).returncode:
        pytest.fail(f"no apache/kafka git repository at {candidate} (set KAFKA_GIT_DIR to a clone)", pytrace=False)
    return candidate


def patched_class(home: Path, patch: str, out: Path) -> Path:
    subprocess.run([str(DEMO / "build-patched-class.sh"), str(home), patch, str(out), str(kafka_git_dir())],
                   check=True, capture_output=True, text=True)
    return out


def test_a_rule_patched_out_of_kafkas_source_is_caught_and_the_unpatched_source_is_not(tmp_path: Path) -> None:
    """The developer's loop from source (docs/kafka-jvm.md): 3.9.0's ReplicationControlManager.java
    with the KIP-841 eligibility check removed, compiled against 3.9's jars and put ahead of them,
    is caught with a short counterexample; the same source compiled unpatched passes."""
    home = kafka_home("3.9")
    patched = patched_class(home, str(DEMO / "drop-kip841-eligibility.patch"), tmp_path / "patched.jar")
    config = CampaignConfig(adapter=f"kafka-jvm,classpath={patched}:{home / 'libs'}/*", release="3.9",
                            examples=200, steps=50, seed=2, records_dir=tmp_path / "records")
    result = run_campaign(config)
    assert any(s.startswith("violation:alter_partition:P-ELIG") for s in result.signatures), result.signatures
    records = [json.loads(line) for f in (tmp_path / "records").glob("*.jsonl") for line in f.open()]
    found = [r for r in records if r["outcome"] == "finding"]
    assert found and found[0]["counterexample"]["length"] <= 15
    elig = [f["message"] for r in found for f in r["counterexample"]["findings"] if ":P-ELIG" in f["signature"]]
    assert elig and all("controlled shutdown" in m or "fenced" in m for m in elig), elig  # KIP-841, what was cut

    unpatched = patched_class(home, "-", tmp_path / "unpatched.jar")
    control = run_campaign(CampaignConfig(adapter=f"kafka-jvm,classpath={unpatched}:{home / 'libs'}/*",
                                          release="3.9", examples=100, steps=50, seed=2, stop_at_first=False))
    assert control.runs >= 100 and not control.signatures, control.examples
