"""A run cleans up after itself on a long-lived controller: kafka-wire's `close` deletes the run's
topics (DeleteTopics → RemoveTopicRecord) before it unregisters the run's brokers, so what later
runs' unfencings walk (`handleBrokerUnfenced`: every leaderless partition) does not grow with the
campaign. serve-controller answers DeleteTopics by name in v1–v5 (`topic_names`) and v6 (`topics`)."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from isrcheck.adapters.kafka_wire.controller_endpoints import FixedEndpoint
from isrcheck.adapters.kafka_wire.metadata_image import MetadataImage
from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
from isrcheck.adapters.wire import KafkaConnection
from isrcheck.adapters.wire.apis import DELETE_TOPICS, nested_class
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32Timedelta

from .conftest import RunningServer

TIMEOUT = i32Timedelta.parse(datetime.timedelta(seconds=10))


def image_of(server: RunningServer) -> MetadataImage:
    """The server's whole metadata log replayed afresh."""
    source = FixedEndpoint(server.host, server.port, str(server.log_dir)).endpoint_for(None).open_source()  # type: ignore[arg-type]
    try:
        image = MetadataImage()
        image.apply_all(source.poll())
        return image
    finally:
        source.close()


def test_a_campaign_leaves_no_topic_and_no_partition_behind(serve_controller: Callable[..., RunningServer]) -> None:
    server = serve_controller(release="3.9")
    result = run_campaign(CampaignConfig(adapter=server.adapter, release="3.9", examples=12, steps=25, seed=3,
                                         batch_size=6))
    assert result.runs >= 12 and not result.found
    image = image_of(server)
    assert image.topic_ids == {} and image.partitions == {}
    assert image.brokers == {}


def test_close_deletes_the_runs_topics_and_nothing_else(serve_controller: Callable[..., RunningServer]) -> None:
    server = serve_controller(release="3.9")
    endpoint = FixedEndpoint(server.host, server.port, str(server.log_dir), 1000)
    kept, closed = KafkaWireTarget(endpoint), KafkaWireTarget(endpoint)
    try:
        for target in (kept, closed):
            target.open("3.9", {})
            for broker in (1, 2):
                target.execute("register_broker", {"broker": broker, "incarnation": f"b{broker}"})
                target.execute("unfence_broker", {"broker": broker})
            assert target.execute("create_topic", {"topic": "t0", "assignment": [[1, 2], [2, 1]]})["error"] == "NONE"
        kept_topic, closed_topic = kept.namespace.topic("t0"), closed.namespace.topic("t0")
        closed.close()
        image = image_of(server)
        assert sorted(image.topic_ids) == [kept_topic], closed_topic
        assert {topic for topic, _ in image.partitions} == {image.topic_ids[kept_topic]}
    finally:
        kept.shutdown()
        closed.shutdown()


def test_serve_controller_answers_delete_topics_by_name_in_v4_and_v6(
        serve_controller: Callable[..., RunningServer]) -> None:
    server = serve_controller(release="3.9")
    target = KafkaWireTarget(FixedEndpoint(server.host, server.port, str(server.log_dir), 1000))
    connection = KafkaConnection(server.host, server.port, 10.0)
    try:
        target.open("3.9", {})
        target.execute("register_broker", {"broker": 1, "incarnation": "b1"})
        target.execute("unfence_broker", {"broker": 1})
        for topic in ("a", "b"):
            target.execute("create_topic", {"topic": topic, "assignment": [[1]]})
        a, b = target.namespace.topic("a"), target.namespace.topic("b")
        v4 = connection.classes_for(DELETE_TOPICS, 4)
        answer = connection.request(v4.request(topic_names=(a, a + "-missing"), timeout=TIMEOUT))
        assert {r.name: r.error_code for r in answer.responses} == {
            a: ErrorCode.none, a + "-missing": ErrorCode.unknown_topic_or_partition}
        v6 = connection.classes_for(DELETE_TOPICS, 6)
        state = nested_class(v6.request, "DeleteTopicState")
        answer = connection.request(v6.request(topics=(state(name=b, topic_id=None),), timeout=TIMEOUT))
        assert [(r.name, r.error_code) for r in answer.responses] == [(b, ErrorCode.none)]
        assert answer.responses[0].topic_id is not None
        assert a not in image_of(server).topic_ids and b not in image_of(server).topic_ids
    finally:
        connection.close()
        target.shutdown()
