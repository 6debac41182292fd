"""A small blocking Kafka client connection: framing, correlation ids, version negotiation.

This is the transport a fake broker uses to drive a real KRaft controller (controller.md §9.2):
one TCP connection, one request in flight at a time, per-request timeouts, and every failure
surfaced as a :class:`~isrcheck.adapters.wire.errors.WireError`.  kio provides entities and
serialisation only (no client, by design - landscape.md §5), hence this class.

Version negotiation (KIP-511, as Kafka's ``NetworkClient`` does it): on connect, send
ApiVersions at the highest version this codec knows (capped by ``version_caps[18]``).  A broker
that does not know that version answers a v0 body with ``UNSUPPORTED_VERSION`` and its own
ApiVersions range; retry once at the highest common version.  The advertised table is then kept
in :attr:`KafkaConnection.api_versions`, and :meth:`KafkaConnection.version_for` picks, per API,
the highest version both sides support, not above the caller's cap.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Final

from kio.schema.errors import ErrorCode

from .apis import API_VERSIONS, ApiVersionClasses, VersionRange, api_spec, classes_of, lookup
from .codec import DEFAULT_CLIENT_ID, MAX_FRAME_BYTES, decode_response, encode_request, parse_frame_size
from .errors import ConnectionClosedError, UnsupportedApiError, WireError, WireTimeoutError

#: ``client_software_name``/``version`` sent in ApiVersions v3+ (must match Kafka's
#: ``[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?`` or the broker answers INVALID_REQUEST).
CLIENT_SOFTWARE_NAME: Final = "isrcheck"
CLIENT_SOFTWARE_VERSION: Final = "0.1.0"

_MAX_CORRELATION_ID: Final = 2**31 - 1


class KafkaConnection:
    """Blocking connection to one Kafka listener (e.g. a KRaft controller's CONTROLLER listener).

    Connects and negotiates versions in the constructor.  ``timeout_s`` bounds the connect and is
    the default per-request timeout.  ``version_caps`` (API key → highest version to use) lets a
    scenario pin an older protocol, e.g. ``{56: 2}`` for AlterPartition without KIP-903 epochs.
    Thread-safe: requests from several threads are serialised.
    """

    def __init__(
        self,
        host: str,
        port: int,
        timeout_s: float = 10.0,
        *,
        client_id: str | None = DEFAULT_CLIENT_ID,
        version_caps: Mapping[int, int] | None = None,
        max_frame_bytes: int = MAX_FRAME_BYTES,
    ) -> None:
        self.host = host
        self.port = port
        self.timeout_s = timeout_s
        self.client_id = client_id
        self._caps = dict(version_caps or {})
        self._max_frame_bytes = max_frame_bytes
        self._lock = threading.Lock()
        self._correlation_ids = itertools.count(1)
        self._api_versions: Mapping[int, VersionRange] = MappingProxyType({})
        self.api_versions_response: Any = None
        """The ApiVersions response the negotiation ended with (features live there, §9.2)."""
        try:
            self._sock: socket.socket | None = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise ConnectionClosedError(f"cannot connect to {host}:{port}: {exc}") from exc
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self._negotiate()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------------- public

    @property
    def api_versions(self) -> Mapping[int, VersionRange]:
        """API key → version range the peer advertised."""
        return self._api_versions

    @property
    def closed(self) -> bool:
        """True once the connection was closed, locally or after an error."""
        return self._sock is None

    def version_for(self, api_key: int, cap: int | None = None) -> int:
        """Highest version of ``api_key`` both sides support, at most ``cap`` and the constructor cap.

        :class:`UnsupportedApiError` when there is none (peer lacks the API, or no overlap).
        """
        spec = api_spec(api_key)
        theirs = self._api_versions.get(api_key)
        if theirs is None:
            raise UnsupportedApiError(f"peer does not advertise {spec.name} (key {api_key})", api_key=api_key)
        common = spec.version_range.intersect(theirs)
        limits = [c for c in (cap, self._caps.get(api_key)) if c is not None]
        if common is not None and limits:
            limit = min(limits)
            below = limit < common.min_version
            common = None if below else common.intersect(VersionRange(common.min_version, limit))
        if common is None:
            raise UnsupportedApiError(
                f"no common version of {spec.name}: codec {_fmt(spec.version_range)}, peer {_fmt(theirs)}, "
                f"cap {min(limits) if limits else None}",
                api_key=api_key,
            )
        return common.max_version

    def classes_for(self, api_key: int, cap: int | None = None) -> ApiVersionClasses:
        """Request/response classes at :meth:`version_for` - build the request from ``.request``."""
        return lookup(api_key, self.version_for(api_key, cap))

    def request(self, entity: object, timeout_s: float | None = None) -> Any:
        """Send a kio request entity, wait for and return its kio response entity.

        The entity's version must be one the peer advertised (see :meth:`version_for`).  On a
        timeout, a framing or decoding error, or a correlation-id mismatch the connection is
        closed (the byte stream can no longer be trusted) and a :class:`WireError` is raised.
        """
        entry = classes_of(entity)
        if type(entity) is not entry.request:
            raise UnsupportedApiError(f"{type(entity).__qualname__} is a response, not a request")
        theirs = self._api_versions.get(entry.api_key)
        if theirs is None or entry.api_version not in theirs:
            raise UnsupportedApiError(
                f"peer does not support {api_spec(entry.api_key).name} v{entry.api_version} "
                f"(advertised {_fmt(theirs)})",
                api_key=entry.api_key,
                api_version=entry.api_version,
            )
        return self._round_trip(entity, entry, timeout_s)

    def close(self) -> None:
        """Close the socket; later requests raise :class:`ConnectionClosedError`."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def __enter__(self) -> KafkaConnection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"KafkaConnection({self.host}:{self.port}, {state})"

    # ----------------------------------------------------------------------------- internals

    def _negotiate(self) -> None:
        ours = api_spec(API_VERSIONS).version_range
        cap = self._caps.get(API_VERSIONS)
        version = ours.max_version if cap is None else max(ours.min_version, min(cap, ours.max_version))
        response = self._api_versions_round_trip(version)
        if response.error_code == ErrorCode.unsupported_version:
            theirs = {k.api_key: VersionRange(k.min_version, k.max_version) for k in response.api_keys}
            common = ours.intersect(theirs[API_VERSIONS]) if API_VERSIONS in theirs else None
            if common is None or common.max_version >= version:
                raise UnsupportedApiError(
                    f"peer rejected ApiVersions v{version} and offers {_fmt(theirs.get(API_VERSIONS))}",
                    api_key=API_VERSIONS,
                )
            response = self._api_versions_round_trip(common.max_version)
        if response.error_code != ErrorCode.none:
            raise WireError(f"ApiVersions failed: {response.error_code.name}")
        self._api_versions = MappingProxyType(
            {int(k.api_key): VersionRange(int(k.min_version), int(k.max_version)) for k in response.api_keys}
        )
        self.api_versions_response = response

    def _api_versions_round_trip(self, version: int) -> Any:
        entry = lookup(API_VERSIONS, version)
        if version >= 3:
            request = entry.request(
                client_software_name=CLIENT_SOFTWARE_NAME, client_software_version=CLIENT_SOFTWARE_VERSION
            )
        else:
            request = entry.request()
        return self._round_trip(request, entry, None)

    def _round_trip(self, entity: object, entry: ApiVersionClasses, timeout_s: float | None) -> Any:
        with self._lock:
            sock = self._sock
            if sock is None:
                raise ConnectionClosedError(f"connection to {self.host}:{self.port} is closed")
            correlation_id = self._next_correlation_id()
            frame = encode_request(entity, correlation_id, self.client_id)
            if len(frame) - 4 > self._max_frame_bytes:
                raise WireError(f"request of {len(frame) - 4} bytes exceeds the frame limit")
            deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
            try:
                self._send_all(sock, frame, deadline)
                size = parse_frame_size(self._recv_exactly(sock, 4, deadline), self._max_frame_bytes)
                payload = self._recv_exactly(sock, size, deadline)
                received_id, response = decode_response(payload, entry.api_key, entry.api_version)
                if received_id != correlation_id:
                    raise WireError(f"correlation id mismatch: sent {correlation_id}, received {received_id}")
            except BaseException:
                self.close()
                raise
            return response

    def _next_correlation_id(self) -> int:
        value = next(self._correlation_ids)
        if value > _MAX_CORRELATION_ID:
            self._correlation_ids = itertools.count(2)
            value = 1
        return value

    def _send_all(self, sock: socket.socket, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            sock.settimeout(self._remaining(deadline))
            try:
                sent = sock.send(view)
            except TimeoutError as exc:
                raise WireTimeoutError(f"timed out sending to {self.host}:{self.port}") from exc
            except OSError as exc:
                raise ConnectionClosedError(f"send to {self.host}:{self.port} failed: {exc}") from exc
            view = view[sent:]

    def _recv_exactly(self, sock: socket.socket, size: int, deadline: float) -> bytes:
        buffer = bytearray(size)
        view = memoryview(buffer)
        received = 0
        while received < size:
            sock.settimeout(self._remaining(deadline))
            try:
                count = sock.recv_into(view[received:], size - received)
            except TimeoutError as exc:
                raise WireTimeoutError(
                    f"timed out waiting for {self.host}:{self.port} ({received} of {size} bytes)"
                ) from exc
            except OSError as exc:
                raise ConnectionClosedError(f"receive from {self.host}:{self.port} failed: {exc}") from exc
            if count == 0:
                raise ConnectionClosedError(
                    f"{self.host}:{self.port} closed the connection ({received} of {size} bytes received)"
                )
            received += count
        return bytes(buffer)

    def _remaining(self, deadline: float) -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WireTimeoutError(f"request to {self.host}:{self.port} timed out")
        return remaining


def _fmt(rng: VersionRange | None) -> str:
    return "none" if rng is None else f"{rng.min_version}..{rng.max_version}"
