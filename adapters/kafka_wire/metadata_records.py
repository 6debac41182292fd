"""Metadata records in Kafka's JSON form — the one shape every metadata source is read as.

`kafka-dump-log.sh --cluster-metadata-decoder` prints each record of `__cluster_metadata` as
``{"type": "PARTITION_CHANGE_RECORD", "version": 0, "data": {...}}`` with the schema's
camelCase field names (controller.md §9.4 item 2). `isrcheck serve-controller` writes the
reference controller's records (`isrcheck.reference_impl.state`) in the same form, one JSON line each
with its offset, so a single replayer (`isrcheck.adapters.kafka_wire.metadata_image`) serves both the reference
server and a real KRaft controller.

Tagged fields at their default are omitted, as Kafka's JSON converters do; in particular a
PartitionChangeRecord without `leader` means "leader unchanged" (-2) and without `isr` means
"ISR unchanged" (controller.md §1.1).
"""

from __future__ import annotations

import base64
import functools
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from isrcheck.reference_impl.state import (
    NO_LEADER_CHANGE,
    BrokerRegistrationChangeRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionState,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)

TOPIC_RESOURCE = 2
"""ConfigRecord.ResourceType of a topic (Kafka's `ConfigResource.Type.TOPIC`)."""
BROKER_RESOURCE = 4
"""ConfigRecord.ResourceType of a broker; ResourceName "" is the cluster-wide default."""

SERVER_HEADER = "ISRCHECK_SERVER"
"""Not a Kafka record: serve-controller's first line, naming its release, settings and mutant."""


@dataclass(frozen=True, slots=True)
class MetadataEntry:
    """One metadata record at one log offset."""

    offset: int
    type: str
    version: int = 0
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json_line(self) -> str:
        return json.dumps({"offset": self.offset, "type": self.type, "version": self.version, "data": self.data},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, offset: int, document: Mapping[str, Any]) -> MetadataEntry:
        return cls(offset, str(document["type"]), int(document.get("version", 0)), dict(document.get("data", {})))


@functools.lru_cache(maxsize=4096)
def kafka_uuid(value: uuid.UUID | str) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding (cached: the
    metadata log writes a topic's id in every one of its partition records)."""
    raw = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    return base64.urlsafe_b64encode(raw.bytes).decode("ascii").rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    """Inverse of :func:`kafka_uuid`; also accepts the canonical hyphenated form."""
    if "-" in text and len(text) == 36:
        return uuid.UUID(text)
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def _maybe_uuid(text: str) -> str:
    try:
        return kafka_uuid(text)
    except ValueError:
        return text


def _partition_data(state: PartitionState) -> dict[str, Any]:
    return {
        "replicas": list(state.replicas), "isr": list(state.isr),
        "removingReplicas": list(state.removing), "addingReplicas": list(state.adding),
        "leader": state.leader, "leaderRecoveryState": int(state.leader_recovery_state),
        "leaderEpoch": state.leader_epoch, "partitionEpoch": state.partition_epoch,
        "eligibleLeaderReplicas": list(state.elr), "lastKnownElr": list(state.last_known_elr),
    }


def _change_data(record: PartitionChangeRecord) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if record.isr is not None:
        data["isr"] = list(record.isr)
    if record.leader != NO_LEADER_CHANGE:
        data["leader"] = record.leader
    for key, value in (
        ("replicas", record.replicas), ("removingReplicas", record.removing), ("addingReplicas", record.adding),
        ("eligibleLeaderReplicas", record.elr), ("lastKnownElr", record.last_known_elr),
    ):
        if value is not None:
            data[key] = list(value)
    if record.leader_recovery_state is not None:
        data["leaderRecoveryState"] = int(record.leader_recovery_state)
    return data


def reference_entries(offset: int, record: MetadataRecord, topic_ids: Mapping[str, str]) -> list[MetadataEntry]:
    """The Kafka JSON form of one reference record (a TopicRecord with configs becomes a
    TOPIC_RECORD plus one CONFIG_RECORD per config, as Kafka writes them)."""
    match record:
        case TopicRecord():
            entries = [MetadataEntry(offset, "TOPIC_RECORD", 0,
                                     {"name": record.name, "topicId": kafka_uuid(record.topic_id)})]
            entries += [
                MetadataEntry(offset, "CONFIG_RECORD", 0,
                              {"resourceType": TOPIC_RESOURCE, "resourceName": record.name, "name": k, "value": v})
                for k, v in record.configs
            ]
            return entries
        case RemoveTopicRecord():
            return [MetadataEntry(offset, "REMOVE_TOPIC_RECORD", 0, {"topicId": kafka_uuid(record.topic_id)})]
        case PartitionRecord():
            data = {"partitionId": record.partition, "topicId": kafka_uuid(topic_ids[record.topic]),
                    **_partition_data(record.state)}
            return [MetadataEntry(offset, "PARTITION_RECORD", 2, data)]
        case PartitionChangeRecord():
            data = {"partitionId": record.partition, "topicId": kafka_uuid(topic_ids[record.topic]),
                    **_change_data(record)}
            return [MetadataEntry(offset, "PARTITION_CHANGE_RECORD", 2, data)]
        case RegisterBrokerRecord():
            r = record.registration
            return [MetadataEntry(offset, "REGISTER_BROKER_RECORD", 3, {
                "brokerId": r.broker, "incarnationId": _maybe_uuid(r.incarnation), "brokerEpoch": r.epoch,
                "endPoints": [], "features": [], "rack": None, "fenced": r.fenced,
                "inControlledShutdown": r.in_controlled_shutdown,
            })]
        case BrokerRegistrationChangeRecord():
            data = {"brokerId": record.broker, "brokerEpoch": record.epoch}
            if record.fenced is not None:
                data["fenced"] = 1 if record.fenced else -1
            if record.in_controlled_shutdown:
                data["inControlledShutdown"] = 1
            return [MetadataEntry(offset, "BROKER_REGISTRATION_CHANGE_RECORD", 1, data)]
        case UnregisterBrokerRecord():
            return [MetadataEntry(offset, "UNREGISTER_BROKER_RECORD", 0,
                                  {"brokerId": record.broker, "brokerEpoch": record.epoch})]
    raise TypeError(f"no Kafka form for {type(record).__name__}")


def feature_entry(offset: int, name: str, level: int) -> MetadataEntry:
    return MetadataEntry(offset, "FEATURE_LEVEL_RECORD", 0, {"name": name, "featureLevel": level})


def cluster_config_entry(offset: int, name: str, value: str) -> MetadataEntry:
    return MetadataEntry(offset, "CONFIG_RECORD", 0,
                         {"resourceType": BROKER_RESOURCE, "resourceName": "", "name": name, "value": value})
