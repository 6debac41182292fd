"""Controller-level campaigns over drawn cluster settings (conformance/generator/cluster_settings.py,
`isrcheck run --draw-settings` / `--setting`): every draw is a configuration the release accepts,
the draws reach the settings a release's defaults never run (ELR opted in on 4.0, metadata.version
below 3.6-IV0 on 3.8+), a record names the settings its run had and replays with them, and bad
settings are one usage line (exit 2)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.generator.cluster_settings import (
    drawn_settings,
    metadata_versions,
    setting_text,
    settings_option,
)
from isrcheck.reference_impl.release import PROFILES, ClusterConfig, MetadataVersion, profile_named

from isrcheck.cli import main

DRAWS = 400


@pytest.mark.parametrize("release", sorted(PROFILES))
def test_every_draw_is_a_configuration_the_release_accepts(release: str) -> None:
    rng = random.Random(5)
    seen = set()
    for _ in range(DRAWS):
        settings = drawn_settings(release, rng)
        config = ClusterConfig.for_profile(profile_named(release), **settings)  # raises if the release refuses it
        seen.add((str(config.metadata_version), config.eligible_leader_replicas))
    assert len(seen) > 1, seen


def test_the_draws_reach_what_the_defaults_never_run() -> None:
    rng = random.Random(6)
    on_4_0 = [ClusterConfig.for_profile(profile_named("4.0"), **drawn_settings("4.0", rng)) for _ in range(DRAWS)]
    assert not ClusterConfig.for_profile(profile_named("4.0")).eligible_leader_replicas  # the default: off
    assert sum(c.eligible_leader_replicas for c in on_4_0) > DRAWS // 4
    assert sum(c.metadata_version < MetadataVersion(3, 6, 0) for c in on_4_0) > DRAWS // 20
    on_3_9 = [drawn_settings("3.9", rng) for _ in range(DRAWS)]
    assert any(MetadataVersion.parse(s["metadata_version"]) < MetadataVersion(3, 6, 0) for s in on_3_9)
    assert all("eligible_leader_replicas" not in s for s in on_3_9)  # ELR does not exist before 4.0


def test_metadata_versions_run_from_the_minimum_to_the_default() -> None:
    assert metadata_versions("3.3") == ["3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3"]
    assert metadata_versions("4.0")[0] == "3.3-IV3" and metadata_versions("4.0")[-1] == "4.0-IV3"


@pytest.mark.parametrize("text", ["metadata_version=3.5-IV2", "eligible_leader_replicas=true",
                                  "eligible_leader_replicas=false"])
def test_a_setting_reads_back_as_written(text: str) -> None:
    assert setting_text(*settings_option(text)) == text


@pytest.mark.parametrize("text", ["metadata_version", "metadata_version=3.5", "eligible_leader_replicas=yes",
                                  "min_insync_replicas=2"])
def test_a_bad_setting_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        settings_option(text)


@pytest.mark.parametrize("args, says", [
    (["--setting", "metadata_version=9.9-IV0"], "is not one of"),
    (["--setting", "eligible_leader_replicas=true", "--kafka", "3.9"], "cannot be enabled on Kafka 3.9"),
    (["--draw-settings", "--level", "cluster"], "controller level only"),
])
def test_bad_settings_are_one_usage_line(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--examples", "1", "--seed", "1", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and says in err[0], err


def test_a_drawn_campaign_runs_each_batch_with_its_settings_and_records_them(tmp_path: Path) -> None:
    config = CampaignConfig(release="4.0", level="controller", examples=75, seed=40, draw_settings=True,
                            records_dir=tmp_path, differential=True)
    result = run_campaign(config)
    assert result.runs >= 75 and not result.signatures
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert len(records) == result.runs
    by_seed = {r["seed"]: r["settings"] for r in records}
    assert len(by_seed) == 3  # three batches of 25, each with its own draw
    for seed, settings in by_seed.items():
        assert settings == config.settings_for(seed) == drawn_settings("4.0", random.Random(seed))
        replay = config.replay_command(seed, 25)
        assert all(f"--setting {setting_text(k, v)}" in replay for k, v in settings.items()), replay


def test_a_fixed_setting_overrides_the_draw() -> None:
    config = CampaignConfig(release="4.0", draw_settings=True, settings=(("eligible_leader_replicas", False),))
    assert all(config.settings_for(seed)["eligible_leader_replicas"] is False for seed in range(20))
    assert CampaignConfig(release="4.0").settings_for(3) == {}
