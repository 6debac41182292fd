"""Cluster settings a controller-level campaign draws, batch by batch, within what the release
accepts: the metadata.version (`kafka-storage.sh format --release-version` / `kafka-features.sh
upgrade`) and, where the release has them, eligible leader replicas (KIP-966, the
`eligible.leader.replicas.version` feature). A campaign that always runs the release's defaults
never reaches the rules those settings gate: the 3.8+ leader-epoch bump on an ISR shrink below
metadata.version 3.6-IV0 (KAFKA-15021, controller.md §3.1 step 7) and the 4.0 lastKnownElr rule
with ELR opted in (§4.9).

The settings are drawn from the batch's seed, not by Hypothesis: every run of a batch, and its
shrinking, uses the same controller configuration, and the record names the settings it ran with
(`--setting KEY=VALUE` in its replay command), so it replays without drawing again.
"""

from __future__ import annotations

import random
from typing import Any

from isrcheck.reference_impl.release import MV_4_0_IV1, Elr, MetadataVersion, profile_named

KRAFT_METADATA_VERSIONS = (
    "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0",
    "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3",
    "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1",
)
"""Every KRaft metadata.version, oldest first: `org.apache.kafka.server.common.MetadataVersion`
from IBP_3_0_IV1 (MINIMUM_KRAFT_VERSION) to IBP_3_9_IV0 at 3.9.0-rc3 and to IBP_4_1_IV1
(LATEST_PRODUCTION) at 4.1.1. A release accepts those between its profile's minimum and default
(`ReleaseProfile.minimum_metadata_version`, `default_metadata_version`)."""

SETTING_KEYS = ("metadata_version", "eligible_leader_replicas")
"""What `drawn_settings` draws (a subset of adapters/reference/controller_target.CONFIG_KEYS)."""


def metadata_versions(release: str) -> list[str]:
    """The metadata.versions `release` can run, oldest first."""
    profile = profile_named(release)
    low, high = profile.minimum_metadata_version, profile.default_metadata_version
    return [text for text in KRAFT_METADATA_VERSIONS if low <= MetadataVersion.parse(text) <= high]


def drawn_settings(release: str, rng: random.Random) -> dict[str, Any]:
    """One configuration `release` accepts. Where ELR exists (4.0 opt-in, 4.1 on by default), it
    is on in half the draws, with a metadata.version that allows it (4.0-IV1 or later); otherwise
    off, with any metadata.version the release runs — so a quarter of 4.x draws and every 3.8/3.9
    draw may fall below 3.6-IV0."""
    versions = metadata_versions(release)
    if profile_named(release).elr is Elr.UNAVAILABLE:
        return {"metadata_version": rng.choice(versions)}
    elr = rng.random() < 0.5
    if elr:
        versions = [text for text in versions if MetadataVersion.parse(text) >= MV_4_0_IV1]
    return {"metadata_version": rng.choice(versions), "eligible_leader_replicas": elr}


def settings_option(text: str) -> tuple[str, Any]:
    """`KEY=VALUE` of `--setting`: a known key, its value as the controller configuration takes it
    (raises ValueError naming what is wrong)."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not value:
        raise ValueError(f"{text!r} is not KEY=VALUE (e.g. metadata_version=3.5-IV2)")
    if key == "metadata_version":
        if value not in KRAFT_METADATA_VERSIONS:
            raise ValueError(f"metadata_version {value!r} is not one of {', '.join(KRAFT_METADATA_VERSIONS)}")
        return key, value
    if key == "eligible_leader_replicas":
        if value not in ("true", "false"):
            raise ValueError(f"eligible_leader_replicas must be true or false, not {value!r}")
        return key, value == "true"
    raise ValueError(f"unknown setting {key!r}; known: {', '.join(SETTING_KEYS)}")


def setting_text(key: str, value: Any) -> str:
    """The `--setting` argument that gives `key` this value (the inverse of `settings_option`)."""
    return f"{key}={str(value).lower() if isinstance(value, bool) else value}"
