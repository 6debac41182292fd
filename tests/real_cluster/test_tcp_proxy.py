"""The TCP proxy in front of a listener: pass, cut, and holding one api key's request in flight
while other requests on other connections go through (how a leader's AlterPartition is held)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
from isrcheck.adapters.real_kafka.cluster_processes import free_base_port
from isrcheck.adapters.real_kafka.tcp_proxy import ALTER_PARTITION, CUT, HOLD, HOLD_API, PASS, TcpProxy


def frame(api_key: int, body: bytes = b"") -> bytes:
    """A request frame as Kafka writes it: int32 size, then int16 api key (and the rest)."""
    payload = struct.pack(">hh", api_key, 0) + body
    return struct.pack(">i", len(payload)) + payload


class EchoServer:
    """Answers every request frame with its api key (a stand-in for a controller listener)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_server(("127.0.0.1", port))
        self.seen: list[int] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        with conn:
            while True:
                head = conn.recv(4, socket.MSG_WAITALL)
                if len(head) < 4:
                    return
                body = conn.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
                api_key = struct.unpack(">h", body[:2])[0]
                self.seen.append(api_key)
                conn.sendall(struct.pack(">h", api_key))


@pytest.fixture
def proxied() -> Iterator[tuple[EchoServer, TcpProxy]]:
    base = free_base_port()
    server = EchoServer(base + 1)
    proxy = TcpProxy(base + 2, base + 1)
    yield server, proxy
    proxy.stop()
    server.sock.close()


def ask(port: int, api_key: int, timeout_s: float = 2.0) -> int | None:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as conn:
        conn.sendall(frame(api_key, b"x" * 10))
        try:
            answer = conn.recv(2, socket.MSG_WAITALL)
        except (TimeoutError, ConnectionResetError):
            return None
        return struct.unpack(">h", answer)[0] if len(answer) == 2 else None


def test_pass_and_cut(proxied: tuple[EchoServer, TcpProxy]) -> None:
    server, proxy = proxied
    assert ask(proxy.listen_port, 3) == 3
    proxy.set_mode(CUT)
    assert ask(proxy.listen_port, 3, timeout_s=1) is None
    proxy.set_mode(PASS)
    assert ask(proxy.listen_port, 3) == 3
    assert server.seen == [3, 3]


def send_and_close(port: int, api_key: int) -> None:
    """A client that sends one request and goes away (its process dies) before any answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
        conn.sendall(frame(api_key, b"x" * 10))


def wait_seen(server: EchoServer, count: int, timeout_s: float = 3.0) -> None:
    deadline = time.monotonic() + timeout_s
    while len(server.seen) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_hold_forwards_at_the_release_what_a_closed_client_sent_and_a_cut_does_not(
    proxied: tuple[EchoServer, TcpProxy],
) -> None:
    """A dead broker incarnation's held heartbeat still reaches the controller when a hold ends
    (as a kernel retransmits an orphaned socket's unacknowledged bytes once a partition heals);
    a cut closes the held connections and what they held is lost. The simulated cluster plug-in
    delivers a dead incarnation's messages the same way (SimulatedCluster.forget_dead_sends)."""
    server, proxy = proxied
    proxy.set_mode(HOLD)
    send_and_close(proxy.listen_port, 63)  # BrokerHeartbeat's api key
    time.sleep(0.3)
    assert server.seen == []
    proxy.set_mode(PASS)
    wait_seen(server, 1)
    assert server.seen == [63]
    proxy.set_mode(HOLD)
    send_and_close(proxy.listen_port, 63)
    time.sleep(0.3)
    proxy.set_mode(CUT)
    proxy.set_mode(PASS)
    time.sleep(0.5)
    assert server.seen == [63]


def test_hold_api_holds_only_that_request_until_released(proxied: tuple[EchoServer, TcpProxy]) -> None:
    server, proxy = proxied
    proxy.set_mode(HOLD_API, api_key=ALTER_PARTITION)
    held = socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=5)
    held.sendall(frame(ALTER_PARTITION))
    assert proxy.wait_held(2.0)
    assert ask(proxy.listen_port, 63) == 63  # a heartbeat on another connection goes through
    assert ALTER_PARTITION not in server.seen
    proxy.release()
    assert struct.unpack(">h", held.recv(2, socket.MSG_WAITALL))[0] == ALTER_PARTITION
    held.close()
    assert server.seen == [63, ALTER_PARTITION]


def test_hold_api_also_holds_the_answer_to_a_request_already_forwarded(
        proxied: tuple[EchoServer, TcpProxy]) -> None:
    """A metadata-log Fetch is a long poll: holding the next Fetch is not enough, the connection
    that carries Fetches is held in both directions at once."""
    server, proxy = proxied
    conn = socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=1)
    conn.sendall(frame(1))
    assert struct.unpack(">h", conn.recv(2, socket.MSG_WAITALL))[0] == 1
    proxy.hold_api(1)
    assert proxy.held(1) == 0  # nothing waits yet
    conn.sendall(frame(1))
    deadline = time.monotonic() + 2
    while proxy.held(1) == 0 and time.monotonic() < deadline:
        pass
    assert proxy.held(1) == 1 and server.seen == [1]
    proxy.release_api(1)
    assert struct.unpack(">h", conn.recv(2, socket.MSG_WAITALL))[0] == 1
    conn.close()


def test_a_stopped_proxy_frees_its_port() -> None:
    """A long campaign starts and stops hundreds of proxies in one process."""
    from isrcheck.adapters.real_kafka.cluster_processes import port_free

    base = free_base_port()
    for _ in range(3):
        proxy = TcpProxy(base + 5, base + 6)
        assert not port_free(base + 5)
        proxy.stop()
        assert not proxy.thread.is_alive() and port_free(base + 5)


def client_frame(api_key: int, client_id: str) -> bytes:
    """A request frame with a v1 header: api key, version, correlation id, client id."""
    name = client_id.encode()
    payload = struct.pack(">hhih", api_key, 0, 7, len(name)) + name
    return struct.pack(">i", len(payload)) + payload


def test_hold_client_stalls_one_followers_fetches_and_not_the_others(proxied: tuple[EchoServer, TcpProxy]) -> None:
    """Followers share a leader's replication listener; the fetcher's client id tells them apart.
    A connection of broker 103's fetcher that already fetched is held at once (its long poll must
    not answer), a new one is held at its first request, broker 102's goes on; release forwards."""
    server, proxy = proxied
    old = socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=1)
    old.sendall(client_frame(1, "broker-103-fetcher-0"))
    assert struct.unpack(">h", old.recv(2, socket.MSG_WAITALL))[0] == 1
    proxy.hold_client("broker-103-fetcher-")
    assert proxy.held_clients("broker-103-fetcher-") == 1
    old.sendall(client_frame(1, "broker-103-fetcher-0"))
    new = socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=1)
    new.sendall(client_frame(1, "broker-103-fetcher-0"))
    other = socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=2)
    other.sendall(client_frame(1, "broker-102-fetcher-0"))
    assert struct.unpack(">h", other.recv(2, socket.MSG_WAITALL))[0] == 1
    with pytest.raises(TimeoutError):
        new.recv(2, socket.MSG_WAITALL)
    assert server.seen == [1, 1]  # the first fetch of 103 and the fetch of 102; both of 103's later ones wait
    assert proxy.held_clients("broker-103-fetcher-") == 2
    proxy.release_client("broker-103-fetcher-")
    for conn in (old, new):
        conn.settimeout(2)
        assert struct.unpack(">h", conn.recv(2, socket.MSG_WAITALL))[0] == 1
        conn.close()
    other.close()
    assert server.seen == [1, 1, 1, 1]
