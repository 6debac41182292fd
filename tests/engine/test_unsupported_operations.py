"""The controller generator never sends a target an operation it declares unsupported
(`Target.unsupported_operations`, e.g. `kafka-jvm,without=reassign`), nor a rule that would send
one among others (a restart is a session expiry, a registration and an unfencing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign


def campaign(adapter: str) -> CampaignConfig:
    return CampaignConfig(adapter=adapter, release="3.9", examples=40, steps=30, seed=5, stop_at_first=False)


@pytest.fixture(autouse=True)
def partial_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


def test_a_declared_unsupported_operation_is_never_generated() -> None:
    import partial_targets

    control = run_campaign(campaign("partial_targets:CountingTarget"))
    assert not control.signatures and partial_targets.CountingTarget.sent["reassign"] > 0
    without = run_campaign(campaign("partial_targets:WithoutReassign"))
    assert not without.signatures, without.examples  # a reassign sent would be a crash outcome
    sent = partial_targets.WithoutReassign.sent
    assert sent["reassign"] == 0 and sent["alter_partition"] > 0 and sent["elect_leaders"] > 0


def test_a_rule_sending_an_unsupported_operation_among_others_is_not_generated() -> None:
    import partial_targets

    without = run_campaign(campaign("partial_targets:WithoutFence"))
    assert not without.signatures, without.examples
    sent = partial_targets.WithoutFence.sent
    # restart_broker (fence, register, unfence) is gone with fence_broker; registering alone is not
    assert sent["fence_broker"] == 0 and sent["register_broker"] > 3 * 40 and sent["reassign"] > 0


def test_kafka_jvm_declares_its_without_option() -> None:
    from isrcheck.adapters.catalogue.registry import make_target

    shared = Path(__file__).resolve().parents[2].parent / "shared" / "kafka" / "3.9"
    if not (shared / "libs").is_dir():
        pytest.skip(f"no Kafka 3.9 at {shared}")
    target = make_target(f"kafka-jvm,kafka-home={shared},without=reassign+fail_over_controller", 30.0)
    assert target.unsupported_operations == frozenset({"reassign", "fail_over_controller"})
