"""A simulation's ground truth (`ground_truth.ClusterObservation`) as a record carries it in a
run's history (docs/records.md, `history`) and back, whole: every field a property reads, so that
`isrcheck check` judges the same values offline that the run judged live. Tuples come back as
tuples (a log is compared with the prefix an earlier HW exposed), maps keep their order.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from isrcheck.contract.history.ground_truth import (
    AckedRecord,
    BrokerView,
    ClusterObservation,
    DataLoss,
    FollowerProgress,
    IsrAdmission,
    PartitionView,
    ProduceDecision,
    RegistrationView,
    ReplicaView,
)


def _plain(value: Any) -> Any:
    if isinstance(value, FollowerProgress):
        return _view(value)
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    if isinstance(value, frozenset):
        return sorted(_plain(item) for item in value)
    return value


def _view(value: Any) -> dict[str, Any]:
    return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}


def _tuples(value: Any) -> Any:
    return tuple(_tuples(item) for item in value) if isinstance(value, list) else value


def _from_view(kind: type[Any], data: dict[str, Any]) -> Any:
    return kind(**{name: _tuples(value) for name, value in data.items()})


def _replica_from_json(data: dict[str, Any]) -> ReplicaView:
    behind = tuple(_from_view(FollowerProgress, f) for f in data.get("behind", []))
    return ReplicaView(**{**{name: _tuples(value) for name, value in data.items()}, "behind": behind})


def ground_truth_json(observation: ClusterObservation) -> dict[str, Any]:
    return {
        "step": observation.step, "now_ms": observation.now_ms,
        "partitions": [_view(v) for v in observation.partitions.values()],
        "registrations": [_view(v) for v in observation.registrations.values()],
        "brokers": [_view(v) for v in observation.brokers.values()],
        "replicas": [_view(v) for v in observation.replicas.values()],
        "acked": [_view(a) for a in observation.acked],
        "admissions": [_view(a) for a in observation.admissions],
        "data_loss": [_view(d) for d in observation.data_loss],
        "shutting_down": sorted(observation.shutting_down),
        "epoch_leaders": [[*key, leader] for key, leader in observation.epoch_leaders.items()],
        "unclean": sorted([t, p] for t, p in observation.unclean),
        "pending_produces": observation.pending_produces,
        "messages_in_flight": observation.messages_in_flight,
        "controller_log_end": observation.controller_log_end,
        "leader_branches": sorted(observation.leader_branches),
        "alter_partition_outcomes": sorted(observation.alter_partition_outcomes),
        "epoch_isrs": [[*key, list(isr)] for key, isr in observation.epoch_isrs.items()],
        "produce_decisions": [_view(d) for d in observation.produce_decisions],
    }


def ground_truth_from_json(data: dict[str, Any]) -> ClusterObservation:
    partitions = [_from_view(PartitionView, v) for v in data["partitions"]]
    registrations = [_from_view(RegistrationView, v) for v in data["registrations"]]
    brokers = [_from_view(BrokerView, v) for v in data["brokers"]]
    replicas = [_replica_from_json(v) for v in data["replicas"]]
    return ClusterObservation(
        step=int(data["step"]), now_ms=int(data["now_ms"]),
        partitions={(p.topic, p.partition): p for p in partitions},
        registrations={r.broker: r for r in registrations},
        brokers={b.broker: b for b in brokers},
        replicas={(r.broker, r.topic, r.partition): r for r in replicas},
        acked=tuple(_from_view(AckedRecord, a) for a in data["acked"]),
        admissions=tuple(_from_view(IsrAdmission, a) for a in data["admissions"]),
        data_loss=tuple(_from_view(DataLoss, d) for d in data["data_loss"]),
        shutting_down=frozenset(data["shutting_down"]),
        epoch_leaders={(str(t), int(p), int(e)): int(leader) for t, p, e, leader in data["epoch_leaders"]},
        unclean=frozenset((str(t), int(p)) for t, p in data["unclean"]),
        pending_produces=int(data["pending_produces"]),
        messages_in_flight=int(data["messages_in_flight"]),
        controller_log_end=int(data["controller_log_end"]),
        leader_branches=frozenset(data["leader_branches"]),
        alter_partition_outcomes=frozenset(data["alter_partition_outcomes"]),
        epoch_isrs={(str(t), int(p), int(e)): tuple(isr) for t, p, e, isr in data["epoch_isrs"]},
        produce_decisions=tuple(_from_view(ProduceDecision, d) for d in data.get("produce_decisions", [])),
    )
