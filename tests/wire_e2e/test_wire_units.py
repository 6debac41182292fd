"""Pieces of kafka-wire that need no server: namespaces, adapter specs, the soft-state mirror,
registration features (controller.md §4.1, §4.2, §9.2)."""

from __future__ import annotations

import pytest
from isrcheck.adapters.catalogue.adapter_options import parse_spec, with_cli_options
from isrcheck.adapters.kafka_wire.ghost_broker import FinalizedFeatures, SoftState, next_soft_state
from isrcheck.adapters.kafka_wire.run_namespace import ANCHOR, STRIDE, NamespaceError, RunNamespace, new_session
from isrcheck.contract.errors import UsageError


def test_namespace_maps_both_ways_and_keeps_negative_ids() -> None:
    base, tag = new_session()
    ns = RunNamespace.for_run(base, tag, 3)
    assert ns.local_broker(ns.broker(7)) == 7
    assert ns.broker(-1) == -1 and ns.local_broker(-1) == -1
    assert ns.local_broker(0) == 0  # a schema default (§2.7) is not a broker of this run
    assert ns.local_topic(ns.topic("t0")) == "t0" and ns.topic("t0") != ns.topic("t1")
    other = RunNamespace.for_run(base, tag, 4)
    assert not set(range(ns.first_id, ns.first_id + STRIDE)) & set(range(other.first_id, other.first_id + STRIDE))
    assert ns.owns(ns.broker(ANCHOR))
    with pytest.raises(NamespaceError):
        ns.broker(STRIDE)


def test_specs_carry_options_and_cli_flags_fold_in() -> None:
    assert parse_spec("kafka-wire,bootstrap=127.0.0.1:9093,metadata-log=/x") == (
        "kafka-wire", {"bootstrap": "127.0.0.1:9093", "metadata-log": "/x"})
    assert with_cli_options("kafka-wire", "h:1", "3.9") == "kafka-wire,bootstrap=h:1"
    assert with_cli_options("kafka-docker", None, "3.9.0") == "kafka-docker,version=3.9.0"
    assert with_cli_options("kafka-docker", None, "3.9") == "kafka-docker"
    assert with_cli_options("reference", None, "3.9") == "reference"
    with pytest.raises(UsageError):
        with_cli_options("reference", "h:1", None)
    with pytest.raises(UsageError):
        parse_spec("kafka-wire,oops")


def test_unknown_wire_options_and_a_bootstrap_without_log_are_usage_errors() -> None:
    from isrcheck.adapters.catalogue.registry import make_target

    with pytest.raises(UsageError, match="unknown option"):
        make_target("kafka-wire,colour=blue")
    with pytest.raises(UsageError, match="metadata-log"):
        make_target("kafka-wire,bootstrap=127.0.0.1:1")


@pytest.mark.parametrize(("before", "shut_down", "fenced", "after"), [
    (SoftState.FENCED, False, False, SoftState.UNFENCED),          # caught up: unfenced
    (SoftState.FENCED, True, True, SoftState.FENCED),              # fenced asking to shut down: SHUTDOWN_NOW
    (SoftState.UNFENCED, True, False, SoftState.CONTROLLED_SHUTDOWN),  # leads something
    (SoftState.UNFENCED, True, True, SoftState.FENCED),            # leads nothing: SHUTDOWN_NOW
    (SoftState.UNFENCED, False, True, SoftState.FENCED),           # WantFence
    (SoftState.CONTROLLED_SHUTDOWN, False, False, SoftState.CONTROLLED_SHUTDOWN),  # flags ignored
    (SoftState.CONTROLLED_SHUTDOWN, True, True, SoftState.FENCED),  # shutdown completes
])
def test_soft_state_mirror_follows_the_heartbeat_table(
    before: SoftState, shut_down: bool, fenced: bool, after: SoftState
) -> None:
    assert next_soft_state(before, shut_down, fenced) is after


def test_registration_features_follow_the_finalized_levels() -> None:
    assert FinalizedFeatures({}).declared()["metadata.version"][0] == 1  # 3.3/3.5 say nothing: any level
    declared = FinalizedFeatures({"metadata.version": 21, "eligible.leader.replicas.version": 1}).declared()
    assert declared == {"metadata.version": (21, 21), "eligible.leader.replicas.version": (0, 1)}
