"""Fixtures for the wire-layer tests: a dummy handler and a server running on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from isrcheck.adapters.reference_server.handler import BaseHandler
from isrcheck.adapters.reference_server.server import KafkaProtocolServer
from isrcheck.adapters.wire.apis import BROKER_HEARTBEAT, DESCRIBE_CLUSTER, lookup
from isrcheck.adapters.wire.codec import NO_THROTTLE
from kio.schema.errors import ErrorCode

#: Broker id that makes :meth:`DummyHandler.handle_broker_heartbeat` raise.
EXPLODING_BROKER = 666
#: Broker id that makes it return the wrong response class.
WRONG_TYPE_BROKER = 667


class DummyHandler(BaseHandler):
    """Answers ApiVersions (inherited), echoes DescribeCluster, and misbehaves on request.

    DescribeCluster echo: the response's ``cluster_id`` names the request's flags, and v1+
    echoes ``endpoint_type`` - enough to see the request travelled intact.
    """

    def __init__(self, version_limits: dict[int, tuple[int, int]] | None = None) -> None:
        super().__init__(version_limits)
        self.calls: list[tuple[str, int]] = []

    def handle_describe_cluster(self, request: Any, api_version: int) -> Any:
        self.calls.append(("describe_cluster", api_version))
        fields: dict[str, Any] = {
            "throttle_time": NO_THROTTLE,
            "error_code": ErrorCode.none,
            "cluster_id": f"echo:{request.include_cluster_authorized_operations}",
            "brokers": (),
            "cluster_authorized_operations": -2147483648,
        }
        if api_version >= 1:
            fields["endpoint_type"] = request.endpoint_type
        return lookup(DESCRIBE_CLUSTER, api_version).response(**fields)

    def handle_broker_heartbeat(self, request: Any, api_version: int) -> Any:
        self.calls.append(("broker_heartbeat", api_version))
        if request.broker_id == EXPLODING_BROKER:
            raise RuntimeError("boom")
        if request.broker_id == WRONG_TYPE_BROKER:
            return "not a response"
        return lookup(BROKER_HEARTBEAT, api_version).response(
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.none,
            is_caught_up=True,
            is_fenced=False,
            should_shut_down=False,
        )


@pytest.fixture
def handler() -> DummyHandler:
    return DummyHandler()


@pytest.fixture
def server(handler: DummyHandler) -> Iterator[KafkaProtocolServer]:
    srv = KafkaProtocolServer(handler, "127.0.0.1", 0)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()
