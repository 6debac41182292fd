"""Kafka homes for the kafka-jvm tests: `<repo>/../shared/kafka/<release>`. The tests of 3.9 must
run whenever that directory exists (they skip only when it does not)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED_KAFKA = REPO.parent / "shared" / "kafka"
RELEASES = ("3.3", "3.5", "3.7", "3.9", "4.0", "4.1")
KNOWN_DIVERGENCE_PREFIXES: tuple[str, ...] = ("known:",)
"""The signatures of findings a known-divergence rule matched on their run (KD1,
docs/known-divergences.md): the rule, not this prefix, decides; K1 and K2, found by kafka-jvm,
are modelled by the reference, so a campaign finding anything else is a new divergence."""


def kafka_home(release: str) -> Path:
    home = SHARED_KAFKA / release
    if not (home / "libs").is_dir():
        pytest.skip(f"no Kafka {release} at {home}")
    return home


@pytest.fixture(scope="session")
def kafka_39() -> Path:
    return kafka_home("3.9")
