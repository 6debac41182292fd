"""Helpers for the cluster-model tests: a started cluster with one topic, and direct access to
the leader's `Partition` so a rule can be exercised on real state. (A plain module, imported by
name: tests/ has no packages.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from isrcheck.conformance.engine.targets import engine_cluster
from isrcheck.conformance.generator.cluster_machine import CLUSTER_CONFIG
from isrcheck.conformance.scenario.run import Session
from isrcheck.reference_impl.broker_config import BrokerConfig
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.mutants import CATALOGUE
from isrcheck.reference_impl.partition import Partition
from isrcheck.reference_impl.release import ClusterConfig, profile_named

TOPIC = "foo"
TP = (TOPIC, 0)


def new_cluster(
    release: str = "4.1",
    brokers: Sequence[int] = (1, 2, 3),
    assignment: Sequence[Sequence[int]] | None = ((1, 2, 3),),
    min_insync_replicas: int = 1,
    lag_ms: int = 10_000,
    session_ms: int = 9_000,
    **options: Any,
) -> Cluster:
    profile = profile_named(release)
    config = ClusterConfig.for_profile(
        profile, min_insync_replicas=min_insync_replicas, broker_session_timeout_ms=session_ms
    )
    broker_config = options.pop("broker_config", BrokerConfig(replica_lag_time_max_ms=lag_ms))
    cluster = Cluster(profile, config, broker_config, **options)
    cluster.start(list(brokers))
    if assignment is not None:
        cluster.create_topic(TOPIC, [list(r) for r in assignment])
        cluster.settle()
    return cluster


def leader_partition(cluster: Cluster, tp: tuple[str, int] = TP) -> Partition:
    registration = cluster.controller.partition(*tp)
    assert registration is not None
    return cluster.brokers[registration.leader].partitions[tp]


ENGINE_SET_UP: list[tuple[str, dict[str, Any]]] = [
    *((op, {"broker": b}) for b in (1, 2, 3) for op in ("register_broker", "unfence_broker")),
    ("create_topic", {"topic": "t", "assignment": [[1, 2, 3]]}),
    ("events", {"seed": 0, "count": 200}),
]
"""What the cluster machine starts every run with, for one partition of topic `t`."""


def engine_session(release: str = "4.1", mutant: str | None = None) -> Session:
    """The simulated cluster as campaigns drive it (unsettled, CLUSTER_CONFIG), the reference or
    a mutant, after ENGINE_SET_UP."""
    target = engine_cluster(**({} if mutant is None else CATALOGUE[mutant].cluster_kwargs()))
    target.open(release, CLUSTER_CONFIG)
    session = Session(target, release)
    for op, args in ENGINE_SET_UP:
        session.execute(op, args)
    return session
