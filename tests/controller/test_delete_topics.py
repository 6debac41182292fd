"""DeleteTopics (Kafka 3.9 `ControllerApis.deleteTopics` → `ReplicationControlManager.deleteTopic`):
one RemoveTopicRecord per deleted topic; its replay forgets the topic, its partitions and its
configs, so a deleted partition is no longer elected when a broker unfences
(`handleBrokerUnfenced` walks the leaderless partitions)."""

from __future__ import annotations

from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.metadata_cache import MetadataCache
from isrcheck.reference_impl.state import (
    BrokerRegistrationChangeRecord,
    PartitionChangeRecord,
    RemoveTopicRecord,
)


def test_delete_writes_one_remove_topic_record_and_forgets_the_topic(make, release):
    h = make(release)
    h.start(1, 2, 3)
    topic_id = h.create("foo", [[1, 2, 3], [2, 3, 1]], {"min.insync.replicas": "2"})
    h.create("bar", [[3, 1, 2]])
    mark = len(h.c.log)
    assert h.c.delete_topics(["foo"]) == {"foo": Error.NONE}
    assert h.records_since(mark) == [RemoveTopicRecord("foo", topic_id)]
    assert h.c.partition("foo", 0) is None and h.c.partition("foo", 1) is None
    assert "foo" not in h.c.topic_ids and topic_id not in h.c.topic_names and "foo" not in h.c.topic_configs
    assert h.state("bar").isr == (3, 1, 2)
    assert h.c.create_topic("foo", [[2, 3]]) is Error.NONE, "a deleted name can be created again"
    assert h.c.topic_ids["foo"] != topic_id and h.state("foo").replicas == (2, 3)


def test_unknown_and_repeated_names_are_refused_and_write_nothing(make, release):
    """`ControllerApis.deleteTopics`: a name given twice is INVALID_REQUEST ("Duplicate topic
    name."), one the controller does not know UNKNOWN_TOPIC_OR_PARTITION."""
    h = make(release)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    mark = len(h.c.log)
    assert h.c.delete_topics(["nope", "foo", "foo"]) == {
        "nope": Error.UNKNOWN_TOPIC_OR_PARTITION, "foo": Error.INVALID_REQUEST,
    }
    assert h.records_since(mark) == []
    assert h.state("foo").isr == (1, 2)


def test_a_deleted_leaderless_partition_is_not_elected_when_its_replica_unfences(make, release):
    """The reason a run deletes its topics on a long-lived controller: left behind, a leaderless
    partition gets a PartitionChangeRecord (an election) on every later unfencing."""

    def unfence_after_fencing(delete: bool) -> list[type]:
        h = make(release)
        h.start(1)
        h.create("foo", [[1]])
        assert h.heartbeat(1, fence=True).error is Error.NONE
        assert h.state("foo").leader == -1
        if delete:
            assert h.c.delete_topics(["foo"]) == {"foo": Error.NONE}
        mark = len(h.c.log)
        h.unfence(1)
        return [type(record) for record in h.records_since(mark)]

    assert unfence_after_fencing(delete=False) == [BrokerRegistrationChangeRecord, PartitionChangeRecord]
    assert unfence_after_fencing(delete=True) == [BrokerRegistrationChangeRecord]


def test_a_broker_cache_forgets_a_removed_topic(make, release):
    h = make(release)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    h.create("bar", [[2, 1]])
    h.c.delete_topics(["foo"])
    cache = MetadataCache()
    for offset, record in h.c.log:
        cache.replay(offset, record)
    assert sorted(cache.partitions) == [("bar", 0)]
    assert sorted(cache.topic_ids) == ["bar"] and "foo" not in cache.topic_configs
