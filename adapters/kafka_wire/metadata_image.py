"""Controller state rebuilt from its metadata records — observation without perturbation.

Replaying `__cluster_metadata` with the §1.1 merge rule gives the exact persisted state of every
partition (leader, ISR, replicas, leader epoch, partition epoch, LRS, adding/removing, ELR,
last known ELR) and of every broker registration (epoch, fenced, in controlled shutdown), plus
the offset of each broker's latest RegisterBrokerRecord (needed to report a metadata offset
that is *not* caught up, §4.2). Nothing is sent to the controller to learn it
(controller.md §9.4 item 2); the heartbeat soft state (§1.2) is not in the log and is not here.

Records are `isrcheck.adapters.kafka_wire.metadata_records.MetadataEntry` values in Kafka's JSON form; unknown
record types (NoOp, producer ids, ACLs, ...) are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from isrcheck.adapters.kafka_wire.metadata_records import BROKER_RESOURCE, SERVER_HEADER, TOPIC_RESOURCE, MetadataEntry

NO_LEADER_CHANGE = -2
LRS_NAMES = {0: "RECOVERED", 1: "RECOVERING"}


@dataclass(frozen=True, slots=True)
class PartitionImage:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    leader_recovery_state: int = 0
    removing: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class BrokerImage:
    broker: int
    epoch: int
    incarnation: str
    fenced: bool
    in_controlled_shutdown: bool
    register_offset: int


def _ints(value: Any) -> tuple[int, ...]:
    return () if value is None else tuple(int(v) for v in value)


_LIST_FIELDS = (
    ("isr", "isr"), ("replicas", "replicas"), ("removingReplicas", "removing"), ("addingReplicas", "adding"),
    ("eligibleLeaderReplicas", "elr"), ("lastKnownElr", "last_known_elr"),
)


def merge(state: PartitionImage, data: Mapping[str, Any]) -> PartitionImage:
    """`PartitionRegistration.merge` (§1.1): partition epoch +1 always; leader epoch +1 iff the
    record names a leader (anything but -2, including -1 and the same leader)."""
    leader = int(data.get("leader", NO_LEADER_CHANGE))
    lrs = int(data.get("leaderRecoveryState", -1))
    lists = {attribute: _ints(data[key]) for key, attribute in _LIST_FIELDS if data.get(key) is not None}
    return PartitionImage(
        replicas=lists.get("replicas", state.replicas),
        isr=lists.get("isr", state.isr),
        leader=state.leader if leader == NO_LEADER_CHANGE else leader,
        leader_epoch=state.leader_epoch if leader == NO_LEADER_CHANGE else state.leader_epoch + 1,
        partition_epoch=state.partition_epoch + 1,
        leader_recovery_state=state.leader_recovery_state if lrs == -1 else lrs,
        removing=lists.get("removing", state.removing),
        adding=lists.get("adding", state.adding),
        elr=lists.get("elr", state.elr),
        last_known_elr=lists.get("last_known_elr", state.last_known_elr),
    )


class MetadataImage:
    """The state the records replayed so far describe; `apply` is the only writer."""

    def __init__(self) -> None:
        self.topic_names: dict[str, str] = {}
        """topic id (Kafka string form) → name."""
        self.topic_ids: dict[str, str] = {}
        self.partitions: dict[tuple[str, int], PartitionImage] = {}
        """(topic id, partition) → state."""
        self.brokers: dict[int, BrokerImage] = {}
        self.features: dict[str, int] = {}
        self.cluster_configs: dict[str, str] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.server: dict[str, Any] | None = None
        self.last_offset = -1
        self.fence_offsets: dict[int, int] = {}
        """broker → offset of the latest record that fenced it (a FENCE change, possibly redundant)."""

    # ------------------------------------------------------------------ reads

    def partition(self, topic: str, index: int) -> PartitionImage | None:
        topic_id = self.topic_ids.get(topic)
        return None if topic_id is None else self.partitions.get((topic_id, index))

    def broker(self, broker: int) -> BrokerImage | None:
        return self.brokers.get(broker)

    # ------------------------------------------------------------------ replay

    def apply_all(self, entries: Iterable[MetadataEntry]) -> None:
        for entry in entries:
            self.apply(entry)

    def apply(self, entry: MetadataEntry) -> None:
        data = entry.data
        self.last_offset = max(self.last_offset, entry.offset)
        handler = _HANDLERS.get(entry.type)
        if handler is not None:
            handler(self, entry.offset, data)

    def _topic(self, offset: int, data: Mapping[str, Any]) -> None:
        name, topic_id = str(data["name"]), str(data["topicId"])
        self.topic_names[topic_id] = name
        self.topic_ids[name] = topic_id

    def _remove_topic(self, offset: int, data: Mapping[str, Any]) -> None:
        topic_id = str(data["topicId"])
        name = self.topic_names.pop(topic_id, None)
        if name is not None and self.topic_ids.get(name) == topic_id:
            del self.topic_ids[name]
        for key in [k for k in self.partitions if k[0] == topic_id]:
            del self.partitions[key]

    def _partition(self, offset: int, data: Mapping[str, Any]) -> None:
        self.partitions[(str(data["topicId"]), int(data["partitionId"]))] = PartitionImage(
            replicas=_ints(data.get("replicas")), isr=_ints(data.get("isr")), leader=int(data.get("leader", -1)),
            leader_epoch=int(data.get("leaderEpoch", 0)), partition_epoch=int(data.get("partitionEpoch", 0)),
            leader_recovery_state=int(data.get("leaderRecoveryState", 0)),
            removing=_ints(data.get("removingReplicas")), adding=_ints(data.get("addingReplicas")),
            elr=_ints(data.get("eligibleLeaderReplicas")), last_known_elr=_ints(data.get("lastKnownElr")),
        )

    def _partition_change(self, offset: int, data: Mapping[str, Any]) -> None:
        key = (str(data["topicId"]), int(data["partitionId"]))
        current = self.partitions.get(key)
        if current is not None:
            self.partitions[key] = merge(current, data)

    def _clear_elr(self, offset: int, data: Mapping[str, Any]) -> None:
        """ClearElrRecord (§4.9): empty name = every topic. [UNSURE] whether Kafka bumps the
        partition epoch here; merged like a change record, so it does."""
        name = str(data.get("topicName", ""))
        topic_id = self.topic_ids.get(name) if name else None
        for key in list(self.partitions):
            if not name or key[0] == topic_id:
                self.partitions[key] = merge(self.partitions[key], {"eligibleLeaderReplicas": [], "lastKnownElr": []})

    def _register(self, offset: int, data: Mapping[str, Any]) -> None:
        broker = int(data["brokerId"])
        self.brokers[broker] = BrokerImage(
            broker, int(data["brokerEpoch"]), str(data.get("incarnationId", "")), bool(data.get("fenced", True)),
            bool(data.get("inControlledShutdown", False)), offset,
        )

    def _registration_change(self, offset: int, data: Mapping[str, Any]) -> None:
        broker = int(data["brokerId"])
        current = self.brokers.get(broker)
        if current is None:
            return
        fenced = int(data.get("fenced", 0))
        if fenced == 1:
            self.fence_offsets[broker] = offset
        self.brokers[broker] = replace(
            current,
            fenced=current.fenced if fenced == 0 else fenced == 1,
            in_controlled_shutdown=current.in_controlled_shutdown or int(data.get("inControlledShutdown", 0)) == 1,
        )

    def _fence(self, offset: int, data: Mapping[str, Any]) -> None:
        """FenceBrokerRecord / UnfenceBrokerRecord (metadata.version < 3.3-IV2)."""
        self._registration_change(offset, {"brokerId": data["id"], "fenced": 1})

    def _unfence(self, offset: int, data: Mapping[str, Any]) -> None:
        self._registration_change(offset, {"brokerId": data["id"], "fenced": -1})

    def _unregister(self, offset: int, data: Mapping[str, Any]) -> None:
        self.brokers.pop(int(data["brokerId"]), None)

    def _feature(self, offset: int, data: Mapping[str, Any]) -> None:
        self.features[str(data["name"])] = int(data.get("featureLevel", 0))

    def _config(self, offset: int, data: Mapping[str, Any]) -> None:
        kind, resource = int(data.get("resourceType", 0)), str(data.get("resourceName", ""))
        name, value = str(data["name"]), data.get("value")
        if kind == BROKER_RESOURCE and resource == "":
            target = self.cluster_configs
        elif kind == TOPIC_RESOURCE:
            target = self.topic_configs.setdefault(resource, {})
        else:
            return
        if value is None:
            target.pop(name, None)
        else:
            target[name] = str(value)

    def _server(self, offset: int, data: Mapping[str, Any]) -> None:
        self.server = dict(data)


_HANDLERS = {
    "TOPIC_RECORD": MetadataImage._topic,
    "REMOVE_TOPIC_RECORD": MetadataImage._remove_topic,
    "PARTITION_RECORD": MetadataImage._partition,
    "PARTITION_CHANGE_RECORD": MetadataImage._partition_change,
    "CLEAR_ELR_RECORD": MetadataImage._clear_elr,
    "REGISTER_BROKER_RECORD": MetadataImage._register,
    "BROKER_REGISTRATION_CHANGE_RECORD": MetadataImage._registration_change,
    "FENCE_BROKER_RECORD": MetadataImage._fence,
    "UNFENCE_BROKER_RECORD": MetadataImage._unfence,
    "UNREGISTER_BROKER_RECORD": MetadataImage._unregister,
    "FEATURE_LEVEL_RECORD": MetadataImage._feature,
    "CONFIG_RECORD": MetadataImage._config,
    SERVER_HEADER: MetadataImage._server,
}
