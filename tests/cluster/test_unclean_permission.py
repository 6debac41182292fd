"""An election outside the ISR loses acknowledged records; P-ACK exempts it only where someone
allowed it (unclean.leader.election.enable, or an unclean ElectLeaders request: KIP-106, KIP-460,
bugs.md B14). The same history — the lagging replica left alive when both ISR members crash after
an acks=all write — is a P-ACK finding against a controller that elects uncleanly on its own, and
no finding where the topic enables unclean election."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_helpers import ENGINE_SET_UP
from isrcheck.conformance.engine.run import Run, cluster_run
from isrcheck.conformance.engine.targets import engine_cluster
from isrcheck.conformance.generator.cluster_machine import CLUSTER_CONFIG
from isrcheck.contract.operations.step import Step
from isrcheck.reference_impl.mutants import CATALOGUE
from isrcheck.reference_impl.rpc import FETCH

PARTITION = ("t", 0)
LAST_MEMBERS_LOST: list[tuple[str, dict[str, Any]]] = [
    ("hold", {"kind": FETCH, "from": 3}),
    ("produce", {"topic": "t", "partition": 0, "acks": 1, "records": 1}),
    ("tick", {"ms": 5000}),  # 3 leaves the ISR
    ("produce", {"topic": "t", "partition": 0, "acks": "all", "records": 2}),
    ("tick", {"ms": 1000}),  # acknowledged by 1 and 2
    ("crash", {"broker": 2, "lose": "none"}),
    ("tick", {"ms": 3000}),
    ("crash", {"broker": 1, "lose": "none"}),
    ("tick", {"ms": 3000}),  # the last ISR member is gone; 3 lives
    ("release", {}),
    ("tick", {"ms": 1000}),
]


def replay(steps: list[tuple[str, dict[str, Any]]], mutant: str | None, release: str = "4.1") -> Run:
    """The steps on a simulated cluster (a mutant beside the reference), left open to inspect."""
    reference = engine_cluster()
    reference.open(release, CLUSTER_CONFIG)
    target = reference
    if mutant is not None:
        target = engine_cluster(**CATALOGUE[mutant].cluster_kwargs())
        target.open(release, CLUSTER_CONFIG)
    run = cluster_run(reference, target, release)
    for index, (op, args) in enumerate(steps):
        run.step(Step(index, op, dict(args), None, {}, None))
        if run.stopped:
            break
    return run


def with_topic_configs(configs: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    return [(op, {**args, "configs": configs}) if op == "create_topic" else (op, args) for op, args in ENGINE_SET_UP]


def test_an_unclean_election_nobody_allowed_is_a_lost_acknowledged_record() -> None:
    run = replay([*ENGINE_SET_UP, *LAST_MEMBERS_LOST], "B14")
    assert [f.signature for f in run.findings][:1] == ["violation:tick:P-ACK:"]
    assert PARTITION not in run.target.cluster.unclean


def test_the_reference_keeps_the_partition_offline_instead() -> None:
    run = replay([*ENGINE_SET_UP, *LAST_MEMBERS_LOST], None)
    assert run.findings == []
    assert run.reference.cluster.controller.partitions[PARTITION].leader == -1


@pytest.mark.parametrize("allowed_by", ["topic", "request"])
def test_an_unclean_election_someone_allowed_is_exempt(allowed_by: str) -> None:
    """3.9 honours the topic config (controller.md §4.8); any release honours the request."""
    if allowed_by == "topic":
        run = replay([*with_topic_configs({"unclean.leader.election.enable": "true"}), *LAST_MEMBERS_LOST],
                     None, "3.9")
    else:
        request = ("elect_leaders", {"type": "unclean", "partitions": [list(PARTITION)]})
        run = replay([*ENGINE_SET_UP, *LAST_MEMBERS_LOST, request, ("tick", {"ms": 1000})], None)
    cluster = run.reference.cluster
    assert cluster.controller.partitions[PARTITION].leader == 3
    assert PARTITION in cluster.unclean
    assert run.findings == []
