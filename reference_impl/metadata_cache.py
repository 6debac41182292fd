"""A broker's metadata cache: the controller's metadata log replayed up to an offset
(`KRaftMetadataCache`; leader.md §5 condition 4, §10). Metadata lag is just a smaller offset.
"""

from __future__ import annotations

from .state import (
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionState,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
    merge,
)

TopicPartition = tuple[str, int]


class MetadataCache:
    def __init__(self) -> None:
        self.offset = 0
        """The last applied metadata log offset (reported in heartbeats, controller.md §4.2)."""
        self.partitions: dict[TopicPartition, PartitionState] = {}
        self.brokers: dict[int, BrokerRegistration] = {}
        self.topic_ids: dict[str, str] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}

    def replay(self, offset: int, record: MetadataRecord) -> TopicPartition | None:
        """Apply one record; returns the partition it changed, if any."""
        self.offset = offset
        match record:
            case PartitionChangeRecord():
                key = (record.topic, record.partition)
                self.partitions[key] = merge(self.partitions[key], record)
                return key
            case PartitionRecord():
                key = (record.topic, record.partition)
                self.partitions[key] = record.state
                return key
            case TopicRecord():
                self.topic_ids[record.name] = record.topic_id
                self.topic_configs[record.name] = dict(record.configs)
            case RemoveTopicRecord():
                self.topic_ids.pop(record.name, None)
                self.topic_configs.pop(record.name, None)
                for key in [k for k in self.partitions if k[0] == record.name]:
                    del self.partitions[key]
            case RegisterBrokerRecord():
                self.brokers[record.registration.broker] = record.registration
            case BrokerRegistrationChangeRecord():
                old = self.brokers[record.broker]
                self.brokers[record.broker] = BrokerRegistration(
                    old.broker, old.epoch, old.incarnation,
                    old.fenced if record.fenced is None else record.fenced,
                    old.in_controlled_shutdown if record.in_controlled_shutdown is None
                    else record.in_controlled_shutdown,
                )
            case UnregisterBrokerRecord():
                self.brokers.pop(record.broker, None)
        return None

    def alive_broker_epoch(self, broker: int) -> int | None:
        """`getAliveBrokerEpoch`: the registered epoch of an unfenced broker, else None (§4, §5.4)."""
        registration = self.brokers.get(broker)
        if registration is None or registration.fenced:
            return None
        return registration.epoch

    def min_insync_replicas(self, topic: str, default: int) -> int:
        return int(self.topic_configs.get(topic, {}).get("min.insync.replicas", default))
