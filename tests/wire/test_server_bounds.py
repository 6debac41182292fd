"""What one peer can cost `serve-controller` is bounded (issue 15): an idle connection is closed
after the idle timeout, a request that has begun and stalls after the frame timeout, a slowly
sent huge frame holds no more than the in-flight limit, and connections beyond the cap are
closed at once — while a well-behaved client on another connection is answered throughout."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest
from isrcheck.adapters.reference_server.server import KafkaProtocolServer
from isrcheck.adapters.wire import KafkaConnection

from .conftest import DummyHandler
from .test_wire_client_server import describe_cluster


@pytest.fixture
def bounded() -> Iterator[KafkaProtocolServer]:
    server = KafkaProtocolServer(DummyHandler(), idle_timeout_s=1.0, frame_timeout_s=1.0, max_connections=4,
                                 max_inflight_bytes=1 << 20)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """True when the server closed the connection (EOF or reset) within `within_s`."""
    sock.settimeout(within_s)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def connect(server: KafkaProtocolServer) -> socket.socket:
    return socket.create_connection(server.address, timeout=5)


def test_an_idle_connection_is_closed_after_the_idle_timeout(bounded: KafkaProtocolServer) -> None:
    with connect(bounded) as idle:
        started = time.monotonic()
        assert closed_by_server(idle, 5)
        assert 0.8 < time.monotonic() - started < 3
    assert bounded.stats().closed_timeout == 1


@pytest.mark.parametrize("sent", [b"\x00\x00", struct.pack(">i", 100) + b"\x00" * 40],
                         ids=["half prefix", "half frame"])
def test_a_stalled_request_is_closed_after_the_frame_timeout(bounded: KafkaProtocolServer, sent: bytes) -> None:
    with connect(bounded) as stalled:
        stalled.sendall(sent)
        assert closed_by_server(stalled, 5)
    assert bounded.stats().closed_timeout == 1


def test_a_request_that_keeps_trickling_is_still_closed_at_the_frame_timeout(bounded: KafkaProtocolServer) -> None:
    with connect(bounded) as slow:
        slow.sendall(struct.pack(">i", 1000))
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 5 and not closed:
            try:
                slow.sendall(b"\x00")  # a byte every 0.2 s keeps no idle timer from firing
            except OSError:
                closed = True
                break
            closed = closed_by_server(slow, 0.2)
        assert closed
        assert time.monotonic() - started < 3


def test_frames_being_read_may_not_declare_more_than_the_inflight_limit(bounded: KafkaProtocolServer) -> None:
    with connect(bounded) as first, connect(bounded) as second:
        first.sendall(struct.pack(">i", 700_000) + b"\x00" * 10)
        time.sleep(0.2)
        second.sendall(struct.pack(">i", 700_000))
        assert closed_by_server(second, 2)  # 1.4 MB declared in flight > 1 MiB
        assert not closed_by_server(first, 0.3)


def test_connections_beyond_the_cap_are_closed_and_the_others_still_served(bounded: KafkaProtocolServer) -> None:
    held = [connect(bounded) for _ in range(3)]
    try:
        time.sleep(0.2)
        client = KafkaConnection(*bounded.address, 5.0)  # the fourth: within the cap
        try:
            with connect(bounded) as extra:
                assert closed_by_server(extra, 2)
            assert bounded.stats().refused_over_limit == 1
            assert client.api_versions_response is not None
            assert not client.closed
        finally:
            client.close()
    finally:
        for sock in held:
            sock.close()


def test_a_busy_client_is_not_an_idle_one(bounded: KafkaProtocolServer) -> None:
    client = KafkaConnection(*bounded.address, 5.0)
    try:
        for _ in range(6):  # 3 s of requests every 0.5 s: never idle for the 1 s timeout
            time.sleep(0.5)
            client.request(describe_cluster(2))
        assert bounded.stats().closed_timeout == 0
    finally:
        client.close()
