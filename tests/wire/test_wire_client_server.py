"""KafkaConnection ↔ KafkaProtocolServer over real TCP on 127.0.0.1: negotiation (KIP-511),
echo, timeouts, closed connections, misbehaving handlers, bad frames (controller.md §9)."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
from isrcheck.adapters.reference_server.handler import BaseHandler, FeatureSet, build_api_versions_response
from isrcheck.adapters.reference_server.server import KafkaProtocolServer
from isrcheck.adapters.wire import KafkaConnection, VersionRange
from isrcheck.adapters.wire.apis import ALTER_PARTITION, API_VERSIONS, BROKER_HEARTBEAT, DESCRIBE_CLUSTER, lookup
from isrcheck.adapters.wire.codec import NO_THROTTLE, decode_response, encode_request, encode_response, frame
from isrcheck.adapters.wire.errors import ConnectionClosedError, UnsupportedApiError, WireError, WireTimeoutError
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8, i32

from .conftest import EXPLODING_BROKER, WRONG_TYPE_BROKER, DummyHandler
from .rawnet import ScriptedServer, read_frame, send_and_drain


def describe_cluster(version: int, endpoint_type: int = 1) -> Any:
    fields: dict[str, Any] = {"include_cluster_authorized_operations": True}
    if version >= 1:
        fields["endpoint_type"] = i8(endpoint_type)
    if version >= 2:
        fields["include_fenced_brokers"] = True
    return lookup(DESCRIBE_CLUSTER, version).request(**fields)


def heartbeat(broker_id: int, version: int = 1) -> Any:
    return lookup(BROKER_HEARTBEAT, version).request(
        broker_id=i32(broker_id),
        broker_epoch=1,
        current_metadata_offset=2**62,
        want_fence=False,
        want_shut_down=False,
    )


def test_negotiates_handler_table(server: KafkaProtocolServer) -> None:
    with KafkaConnection(*server.address, timeout_s=2.0) as conn:
        assert conn.api_versions == {
            API_VERSIONS: VersionRange(0, 4),
            DESCRIBE_CLUSTER: VersionRange(0, 2),
            BROKER_HEARTBEAT: VersionRange(0, 2),
        }
        assert type(conn.api_versions_response) is lookup(API_VERSIONS, 4).response
        assert conn.version_for(DESCRIBE_CLUSTER) == 2
        assert conn.version_for(DESCRIBE_CLUSTER, cap=1) == 1


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_cluster_echo(server: KafkaProtocolServer, handler: DummyHandler, version: int) -> None:
    with KafkaConnection(*server.address, timeout_s=2.0) as conn:
        response = conn.request(describe_cluster(version, endpoint_type=2))
    assert type(response) is lookup(DESCRIBE_CLUSTER, version).response
    assert response.cluster_id == "echo:True"
    if version >= 1:
        assert response.endpoint_type == 2
    assert handler.calls == [("describe_cluster", version)]


def test_many_requests_from_several_threads_share_one_connection(server: KafkaProtocolServer) -> None:
    errors: list[BaseException] = []
    with KafkaConnection(*server.address, timeout_s=5.0) as conn:

        def worker() -> None:
            try:
                for _ in range(50):
                    assert conn.request(heartbeat(1)).is_caught_up
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


def test_version_caps_and_unsupported_versions(server: KafkaProtocolServer) -> None:
    with KafkaConnection(*server.address, timeout_s=2.0, version_caps={DESCRIBE_CLUSTER: 1}) as conn:
        assert conn.version_for(DESCRIBE_CLUSTER) == 1
        assert conn.version_for(DESCRIBE_CLUSTER, cap=0) == 0
        assert conn.classes_for(DESCRIBE_CLUSTER).request is lookup(DESCRIBE_CLUSTER, 1).request
        with pytest.raises(UnsupportedApiError, match="does not advertise alter_partition"):
            conn.version_for(ALTER_PARTITION)
        with pytest.raises(UnsupportedApiError, match="unknown API key 3"):
            conn.version_for(3)
        alter = lookup(ALTER_PARTITION, 2).request(broker_id=i32(1), topics=())
        with pytest.raises(UnsupportedApiError, match="peer does not support alter_partition v2"):
            conn.request(alter)
        assert not conn.closed  # refused locally, nothing sent
        assert conn.request(describe_cluster(2)).error_code == ErrorCode.none


def test_kip511_fallback_when_server_knows_fewer_api_versions() -> None:
    """Client asks v4; the server (capped at v2) answers v0 UNSUPPORTED_VERSION; client retries v2."""
    handler = DummyHandler(version_limits={API_VERSIONS: (0, 2)})
    with KafkaProtocolServer(handler) as srv, KafkaConnection(*srv.address, timeout_s=2.0) as conn:
        assert type(conn.api_versions_response) is lookup(API_VERSIONS, 2).response
        assert conn.api_versions[API_VERSIONS] == VersionRange(0, 2)
        assert srv.stats().requests_answered == 2


def test_client_cap_on_api_versions() -> None:
    with KafkaProtocolServer(DummyHandler()) as srv:
        with KafkaConnection(*srv.address, timeout_s=2.0, version_caps={API_VERSIONS: 0}) as conn:
            assert type(conn.api_versions_response) is lookup(API_VERSIONS, 0).response
        assert srv.stats().requests_answered == 1


def test_raw_unsupported_api_versions_keeps_connection_open(server: KafkaProtocolServer) -> None:
    with socket.create_connection(server.address, timeout=2.0) as sock:
        sock.sendall(frame(bytes.fromhex("0012 0063 00000005 ffff 00") + b"future body"))
        correlation_id, response = decode_response(read_frame(sock), API_VERSIONS, 4)
        assert correlation_id == 5
        assert response.error_code == ErrorCode.unsupported_version
        assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 4)]
        sock.sendall(encode_request(lookup(API_VERSIONS, 0).request(), 6))
        correlation_id, response = decode_response(read_frame(sock), API_VERSIONS, 0)
        assert (correlation_id, response.error_code) == (6, ErrorCode.none)


def test_api_not_served_by_handler_closes_connection(server: KafkaProtocolServer) -> None:
    """AlterPartition is in the codec table but this handler does not serve it: Kafka closes."""
    request = encode_request(lookup(ALTER_PARTITION, 2).request(broker_id=i32(1), topics=()), 1)
    received, closed = send_and_drain(server.address, request)
    assert (received, closed) == (b"", True)
    assert server.stats().closed_bad_input == 1


@pytest.mark.parametrize(
    "prefix",
    [(100 * 1024 * 1024 + 1).to_bytes(4, "big"), (-1).to_bytes(4, "big", signed=True), b"\x00\x00"],
    ids=["over-limit", "negative", "short-prefix"],
)
def test_bad_size_prefix_closes_connection(server: KafkaProtocolServer, prefix: bytes) -> None:
    assert send_and_drain(server.address, prefix) == (b"", True)


def test_handler_exception_closes_only_that_connection(server: KafkaProtocolServer) -> None:
    with (
        KafkaConnection(*server.address, timeout_s=2.0) as bad,
        KafkaConnection(*server.address, timeout_s=2.0) as good,
    ):
        assert good.request(heartbeat(1)).error_code == ErrorCode.none
        with pytest.raises(ConnectionClosedError, match="closed the connection"):
            bad.request(heartbeat(EXPLODING_BROKER))
        assert bad.closed
        with pytest.raises(ConnectionClosedError, match="is closed"):
            bad.request(heartbeat(1))
        assert good.request(heartbeat(1)).error_code == ErrorCode.none
    with KafkaConnection(*server.address, timeout_s=2.0) as fresh, pytest.raises(ConnectionClosedError):
        fresh.request(heartbeat(WRONG_TYPE_BROKER))
    assert server.stats().closed_handler_error == 2


def test_stop_closes_open_connections(handler: DummyHandler) -> None:
    srv = KafkaProtocolServer(handler)
    srv.start()
    conn = KafkaConnection(*srv.address, timeout_s=2.0)
    srv.stop()
    with pytest.raises(ConnectionClosedError):
        conn.request(heartbeat(1))
    assert conn.closed


def test_connect_refused() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    with pytest.raises(ConnectionClosedError, match="cannot connect"):
        KafkaConnection("127.0.0.1", port, timeout_s=1.0)


def _api_versions_then(answer: Any) -> Any:
    """Script for ScriptedServer: answer ApiVersions properly, then call ``answer``."""

    def script(request: Any) -> bytes | None:
        if request.api_key == API_VERSIONS:
            body = build_api_versions_response(
                request.api_version, {API_VERSIONS: VersionRange(0, 4), BROKER_HEARTBEAT: VersionRange(0, 2)}
            )
            return encode_response(body, request.correlation_id)
        return answer(request)  # type: ignore[no-any-return]

    return script


def test_request_timeout_closes_connection() -> None:
    with ScriptedServer(_api_versions_then(lambda request: None)) as srv:
        conn = KafkaConnection(*srv.address, timeout_s=2.0)
        with pytest.raises(WireTimeoutError, match="timed out"):
            conn.request(heartbeat(1), timeout_s=0.2)
        assert conn.closed
        with pytest.raises(ConnectionClosedError):
            conn.request(heartbeat(1))


def test_correlation_id_mismatch() -> None:
    def wrong_id(request: Any) -> bytes:
        response = lookup(BROKER_HEARTBEAT, request.api_version).response(
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.none,
            should_shut_down=False,
        )
        return encode_response(response, request.correlation_id + 1)

    with ScriptedServer(_api_versions_then(wrong_id)) as srv:
        conn = KafkaConnection(*srv.address, timeout_s=2.0)
        with pytest.raises(WireError, match="correlation id mismatch"):
            conn.request(heartbeat(1))
        assert conn.closed


def test_garbage_response_is_a_wire_error() -> None:
    with ScriptedServer(_api_versions_then(lambda request: frame(b"\x00\x00\x00"))) as srv:
        conn = KafkaConnection(*srv.address, timeout_s=2.0)
        with pytest.raises(WireError, match="cannot decode"):
            conn.request(heartbeat(1))
        assert conn.closed


def test_features_are_advertised_from_api_versions_v3() -> None:
    """A fake controller can publish finalized features for BrokerRegistration (§9.2)."""

    class WithFeatures(DummyHandler):
        def features(self) -> FeatureSet:
            return FeatureSet(
                supported={"metadata.version": VersionRange(7, 27)},
                finalized={"metadata.version": VersionRange(21, 21)},
                finalized_epoch=42,
            )

    with KafkaProtocolServer(WithFeatures()) as srv, KafkaConnection(*srv.address, timeout_s=2.0) as conn:
        response = conn.api_versions_response
    assert response.finalized_features_epoch == 42
    assert [(f.name, f.min_version_level, f.max_version_level) for f in response.finalized_features] == [
        ("metadata.version", 21, 21)
    ]
    assert [(f.name, f.min_version, f.max_version) for f in response.supported_features] == [
        ("metadata.version", 7, 27)
    ]


def test_announce_and_address(handler: DummyHandler) -> None:
    lines: list[str] = []
    with KafkaProtocolServer(handler, announce=lines.append) as srv:
        host, port = srv.address
        assert lines == [f"listening on {host}:{port}"]
        assert host == "127.0.0.1" and port > 0
    with pytest.raises(RuntimeError, match="not listening"):
        _ = srv.address


def test_server_rejects_inconsistent_handlers() -> None:
    class Declares(BaseHandler):
        def __init__(self, table: dict[int, VersionRange]) -> None:
            super().__init__()
            self.table = table

        def supported_versions(self) -> dict[int, VersionRange]:
            return self.table

    with pytest.raises(ValueError, match="no handle_alter_partition method"):
        KafkaProtocolServer(Declares({ALTER_PARTITION: VersionRange(0, 3)}))
    with pytest.raises(ValueError, match="codec table does not know"):
        KafkaProtocolServer(Declares({3: VersionRange(0, 12)}))
    with pytest.raises(ValueError, match=r"the codec supports 0\.\.4"):
        KafkaProtocolServer(Declares({API_VERSIONS: VersionRange(0, 5)}))


def test_version_limits_narrow_the_advertised_table() -> None:
    """Like a 4.0/4.1 controller, which only accepts AlterPartition v2-v3 (controller.md §2.1)."""

    class Controllerish(BaseHandler):
        def handle_alter_partition(self, request: Any, api_version: int) -> Any:
            raise NotImplementedError

    assert Controllerish({ALTER_PARTITION: (2, 3)}).supported_versions() == {
        API_VERSIONS: VersionRange(0, 4),
        ALTER_PARTITION: VersionRange(2, 3),
    }


def test_api_versions_with_invalid_software_name_gets_invalid_request(server: KafkaProtocolServer) -> None:
    """KIP-511 validation: the name/version must match Kafka's pattern, else INVALID_REQUEST."""
    request = lookup(API_VERSIONS, 3).request(client_software_name="-bad-", client_software_version="1.0")
    with socket.create_connection(server.address, timeout=2.0) as sock:
        sock.sendall(encode_request(request, 4))
        correlation_id, response = decode_response(read_frame(sock), API_VERSIONS, 3)
    assert (correlation_id, response.error_code, response.api_keys) == (4, ErrorCode.invalid_request, ())
