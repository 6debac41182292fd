"""A small TCP proxy in front of one Kafka listener, for network faults a nemesis can choose.

A real network cannot drop one chosen message; what a proxy in front of a listener can do is act
on whole connections and on the byte stream of Kafka's framing (a request is an int32 size
followed by the request header, whose first field is the int16 api key — Kafka protocol guide,
"Common Request and Response Structure"):

* ``cut`` — close every connection and refuse new ones (a partition between the clients of
  this listener and the node behind it);
* ``delay`` — forward every chunk after ``delay_ms`` (a slow link);
* ``hold`` — stop forwarding in both directions, buffering; ``release`` forwards what was
  held (a long GC pause of the link, or of the path to one node);
* ``hold_api`` — forward normally until a client sends a request with the given api key, then
  hold that connection (both directions) until ``release``; a connection that already carried
  such requests is held at once (its long-poll answer must not get through either). Kafka sends AlterPartition (api key
  56) on its own connection (the leader's AlterPartitionManager has its own
  NodeToControllerChannelManager, "alterPartition"), so this holds one leader's AlterPartition
  in flight while its heartbeats and metadata fetches go on — how the KIP-903 interleaving is
  reached on real brokers;
* ``hold_client`` — hold (both directions) every connection whose requests carry a client id
  starting with a prefix (the request header's ``client_id``, after api key, version and
  correlation id). Every follower fetches from a leader through the leader's one replication
  listener, but each follower's fetcher names itself (``broker-<id>-fetcher-<n>``,
  `ReplicaFetcherManager.createFetcherThread`, 3.9.0), so one follower's replication can stall
  while the others' goes on — and the stalled broker still heartbeats, so it is not fenced.

One listening thread per proxy, two pump threads per connection; nothing here knows Kafka beyond
the framing.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

PASS, CUT, DELAY, HOLD, HOLD_API = "pass", "cut", "delay", "hold", "hold_api"
ALTER_PARTITION = 56


@dataclass
class Link:
    """One proxied connection: client socket, upstream socket, and what is held."""

    client: socket.socket
    upstream: socket.socket
    held: bool = False
    held_api: int | None = None
    waiting_api: int | None = None
    """The api key of a request blocked at the proxy right now."""
    seen_apis: set[int] = field(default_factory=set)
    """Api keys of the requests this connection has carried."""
    client_id: str | None = None
    """The client id of the first request this connection carried."""
    held_client: str | None = None
    """The client-id prefix this connection is held for (`TcpProxy.hold_client`)."""
    closed: bool = False
    pending: bytearray = field(default_factory=bytearray)
    """Client→server bytes not yet parsed into whole frames (hold_api mode)."""

    def close(self) -> None:
        self.closed = True
        for sock in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()


class TcpProxy:
    """Listens on ``127.0.0.1:listen_port`` and forwards to ``127.0.0.1:upstream_port``."""

    def __init__(self, listen_port: int, upstream_port: int, name: str = "") -> None:
        self.listen_port = listen_port
        self.upstream_port = upstream_port
        self.name = name or f"{listen_port}->{upstream_port}"
        self.mode = PASS
        self.delay_ms = 0
        self.hold_api_keys: set[int] = set()
        self.held_client_prefixes: set[str] = set()
        self.held_requests = 0
        """Requests with a held api key seen since the last `set_mode` (hold_api)."""
        self.links: list[Link] = []
        self.lock = threading.Condition()
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", listen_port))
        self.server.listen(64)
        self.stopped = False
        self.thread = threading.Thread(target=self.accept_loop, name=f"proxy-{self.name}", daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------ control

    def set_mode(self, mode: str, delay_ms: int = 0, api_key: int | None = None) -> None:
        """Switch mode; `pass` releases whatever was held."""
        if mode not in (PASS, CUT, DELAY, HOLD, HOLD_API):
            raise ValueError(f"unknown proxy mode {mode!r}")
        with self.lock:
            self.mode, self.delay_ms = mode, delay_ms
            self.hold_api_keys = {api_key} if mode == HOLD_API and api_key is not None else set()
            if mode in (HOLD_API, PASS):
                self.held_requests = 0
            if mode == PASS:
                self.held_client_prefixes.clear()
                for link in self.links:
                    link.held, link.held_api, link.held_client = False, None, None
            doomed = list(self.links) if mode == CUT else []
            for link in doomed:
                # closed before a held pump wakes: it must drop what it holds, not see a mode
                # that no longer holds and forward it in the moment before the sockets close
                link.closed = True
            self.links = [link for link in self.links if link not in doomed]
            self.lock.notify_all()
        for link in doomed:
            link.close()

    def release(self) -> None:
        self.set_mode(PASS)

    def hold_api(self, api_key: int) -> None:
        """Also hold the next request with `api_key` on any connection (others keep theirs).
        A connection that has carried such requests is held at once in both directions: a
        long-polling request already forwarded (a metadata-log Fetch) must not deliver its answer."""
        with self.lock:
            if self.mode != HOLD_API:
                self.mode, self.held_requests = HOLD_API, 0
            self.hold_api_keys.add(api_key)
            for link in self.links:
                if api_key in link.seen_apis and not link.held:
                    link.held, link.held_api = True, api_key

    def release_api(self, api_key: int) -> None:
        """Forward what is held for `api_key` and stop holding it; other held keys stay held."""
        with self.lock:
            self.hold_api_keys.discard(api_key)
            for link in self.links:
                if link.held_api == api_key:
                    link.held, link.held_api = False, None
            if not self.hold_api_keys and self.mode == HOLD_API:
                self.mode = PASS
            self.lock.notify_all()

    def hold_client(self, prefix: str) -> None:
        """Hold every connection, present or future, whose client id starts with `prefix`, in both
        directions (a long poll already forwarded must not answer either)."""
        with self.lock:
            self.held_client_prefixes.add(prefix)
            for link in self.links:
                if link.client_id is not None and link.client_id.startswith(prefix) and not link.held:
                    link.held, link.held_client = True, prefix

    def release_client(self, prefix: str) -> None:
        """Forward what is held for `prefix` and stop holding it."""
        with self.lock:
            self.held_client_prefixes.discard(prefix)
            for link in self.links:
                if link.held_client == prefix:
                    link.held, link.held_client = False, None
            self.lock.notify_all()

    def clear(self) -> bool:
        """Passing, with nothing held or delayed: as a fresh proxy is."""
        with self.lock:
            return (self.mode == PASS and self.delay_ms == 0 and not self.hold_api_keys
                    and not self.held_client_prefixes and not any(link.held for link in self.links))

    def held_clients(self, prefix: str) -> int:
        """Connections held now for `prefix`."""
        with self.lock:
            return sum(1 for link in self.links if link.held_client == prefix)

    def held(self, api_key: int) -> int:
        """Requests with `api_key` blocked at the proxy now."""
        with self.lock:
            return sum(1 for link in self.links if link.waiting_api == api_key)

    def wait_held(self, timeout_s: float) -> bool:
        """In hold_api mode: wait until a request with the held api key is being held."""
        deadline = time.monotonic() + timeout_s
        with self.lock:
            while self.held_requests == 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.lock.wait(remaining)
            return True

    def stop(self) -> None:
        """Stop listening and close every connection. The listening socket is shut down before it
        is closed: close() alone does not wake the thread blocked in accept(), and the port would
        stay bound for as long as this process lives (a campaign ran out of ports that way)."""
        self.stopped = True
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.server.close()
        self.thread.join(timeout=5)
        with self.lock:
            links, self.links = list(self.links), []
            self.lock.notify_all()
        for link in links:
            link.close()

    # ------------------------------------------------------------------ forwarding

    def accept_loop(self) -> None:
        while not self.stopped:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            if self.mode == CUT:
                with contextlib.suppress(OSError):
                    client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                with contextlib.suppress(OSError):
                    client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = Link(client, upstream)
            with self.lock:
                self.links.append(link)
            threading.Thread(target=self.pump, args=(link, True), daemon=True).start()
            threading.Thread(target=self.pump, args=(link, False), daemon=True).start()

    def pump(self, link: Link, to_server: bool) -> None:
        source, sink = (link.client, link.upstream) if to_server else (link.upstream, link.client)
        try:
            while not link.closed:
                data = source.recv(65536)
                if not data:
                    break
                if to_server:
                    self.forward_request_bytes(link, data, sink)
                else:
                    if not self.wait_open(link, to_server=False):
                        break
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            link.close()
            with self.lock:
                if link in self.links:
                    self.links.remove(link)

    def wait_open(self, link: Link, to_server: bool) -> bool:
        """Block while `link` is held (both directions); apply the delay. False when the link was
        closed meanwhile (a cut): what it held is lost, as a cut connection's bytes are."""
        with self.lock:
            while not link.closed and (self.mode == HOLD or link.held):
                self.lock.wait(0.5)
            if link.closed:
                return False
            delay = self.delay_ms if self.mode == DELAY else 0
        if delay:
            time.sleep(delay / 1000)
        return not link.closed

    def forward_request_bytes(self, link: Link, data: bytes, sink: socket.socket) -> None:
        """Forward client bytes frame by frame, so hold_api can stop right before a request."""
        link.pending += data
        while len(link.pending) >= 6:
            size = struct.unpack(">i", link.pending[:4])[0]
            if len(link.pending) < 4 + size:
                break
            api_key = struct.unpack(">h", link.pending[4:6])[0]
            with self.lock:
                if link.client_id is None:
                    link.client_id = request_client_id(link.pending[: 4 + size])
                for prefix in self.held_client_prefixes:
                    if link.client_id is not None and link.client_id.startswith(prefix) and not link.held:
                        link.held, link.held_client = True, prefix
                link.seen_apis.add(api_key)
                if self.mode == HOLD_API and api_key in self.hold_api_keys and not link.held:
                    link.held, link.held_api = True, api_key
                if link.held and api_key == link.held_api:
                    link.waiting_api = api_key
                    self.held_requests += 1
                    self.lock.notify_all()
            if not self.wait_open(link, to_server=True):
                return
            link.waiting_api = None
            frame = bytes(link.pending[: 4 + size])
            del link.pending[: 4 + size]
            sink.sendall(frame)


def request_client_id(frame: bytes | bytearray) -> str | None:
    """The client id of one request frame: int32 size, then request header v1/v2 = int16 api key,
    int16 api version, int32 correlation id, client_id as a (non-compact) nullable string, which v2
    keeps for compatibility (Kafka protocol guide, "Request Header"). None when absent or cut."""
    if len(frame) < 14:
        return None
    length = struct.unpack(">h", frame[12:14])[0]
    if length < 0 or len(frame) < 14 + length:
        return None
    return bytes(frame[14:14 + length]).decode(errors="replace")
