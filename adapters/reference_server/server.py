"""An asyncio server speaking the Kafka protocol, answering with a pluggable handler.

Purpose: let the suite stand a Python model (the reference controller) where a KRaft
controller's listener would be, so the fake brokers of controller.md §9.2 - and real Kafka
clients - can drive either one over the same wire.  The handler interface is described in
:mod:`isrcheck.adapters.reference_server.handler`.

Robustness rules, following what Kafka's ``SocketServer``/``RequestContext`` do:

* a size prefix that is negative or above ``max_frame_bytes`` (default 100 MiB, Kafka's
  ``socket.request.max.bytes``), a truncated frame, a header or body kio cannot decode, trailing
  bytes, an unknown API key or an unsupported version: the connection is closed;
* except ApiVersions of an unsupported version, which is answered with a v0 response carrying
  ``UNSUPPORTED_VERSION`` and ApiVersions' own supported range (KIP-511), connection kept;
* an exception in the handler, or a response of the wrong class, closes only that connection.

What one peer can cost is bounded (issue 15): a connection silent for ``idle_timeout_s`` between
requests is closed (Kafka's ``connections.max.idle.ms``, 10 minutes); a request whose first byte
has arrived must be complete within ``frame_timeout_s``; frames being read may together declare at
most ``max_inflight_bytes`` (a peer declaring 100 MiB and sending it slowly holds that much); and
beyond ``max_connections`` open connections a new one is closed at once (Kafka's
``max.connections``).

Every other connection carries on.  The server advertises in ApiVersions exactly the handler's
``supported_versions()`` table (plus ApiVersions itself) and refuses versions outside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import Any

from isrcheck.adapters.reference_server.handler import HandlerMethod, KafkaHandler, answer_api_versions, handler_method
from isrcheck.adapters.wire.apis import API_TABLE, API_VERSIONS, VersionRange, lookup
from isrcheck.adapters.wire.codec import (
    MAX_FRAME_BYTES,
    decode_request,
    encode_response,
    parse_frame_size,
    unsupported_api_versions_response,
)
from isrcheck.adapters.wire.errors import UnsupportedApiError, WireError

log = logging.getLogger(__name__)

DEFAULT_IDLE_TIMEOUT_S = 600.0
"""Kafka's connections.max.idle.ms default (10 minutes)."""
DEFAULT_FRAME_TIMEOUT_S = 30.0
"""Kafka's request.timeout.ms default: a request that has begun and is not complete by then never will be."""
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_MAX_INFLIGHT_BYTES = 256 << 20


@dataclass(frozen=True, slots=True)
class ServerStats:
    """Counters, mainly for tests: how many connections ended and why."""

    connections_accepted: int
    requests_answered: int
    closed_bad_input: int
    closed_handler_error: int
    closed_timeout: int = 0
    refused_over_limit: int = 0


class _Close(Exception):
    """Internal: end this connection; the message says why."""


class _Timeout(_Close):
    """Internal: the peer was too slow (idle, or a request that does not complete)."""


class KafkaProtocolServer:
    """Kafka-protocol TCP server on ``host:port`` (port 0 picks a free one).

    Use :meth:`start`/:meth:`stop` (or ``with``) to run it in a background thread - what the
    tests do - or :meth:`serve_forever` to run it in the calling thread.  ``announce`` is called
    with ``"listening on HOST:PORT"`` once the socket is bound (pass ``print`` to get the line a
    wrapping process can wait for).
    """

    def __init__(
        self,
        handler: KafkaHandler,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_frame_bytes: int = MAX_FRAME_BYTES,
        announce: Callable[[str], None] | None = None,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        frame_timeout_s: float = DEFAULT_FRAME_TIMEOUT_S,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        max_inflight_bytes: int = DEFAULT_MAX_INFLIGHT_BYTES,
    ) -> None:
        self._handler = handler
        self._host = host
        self._port = port
        self._max_frame_bytes = max_frame_bytes
        self._announce = announce
        self._idle_timeout_s = idle_timeout_s
        self._frame_timeout_s = frame_timeout_s
        self._max_connections = max_connections
        self._max_inflight_bytes = max_inflight_bytes
        self._inflight_bytes = 0
        self._timeouts = self._refused = 0
        self._supported, self._dispatch = _validate_handler(handler)
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._address: tuple[str, int] | None = None
        self._accepted = self._answered = self._bad_input = self._handler_errors = 0

    # ---------------------------------------------------------------------------------- public

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` actually bound; only valid once started."""
        if self._address is None:
            raise RuntimeError("server is not listening")
        return self._address

    @property
    def supported_versions(self) -> Mapping[int, VersionRange]:
        """The table advertised in ApiVersions (handler's table plus ApiVersions)."""
        return self._supported

    def stats(self) -> ServerStats:
        """Snapshot of the connection and request counters."""
        return ServerStats(self._accepted, self._answered, self._bad_input, self._handler_errors, self._timeouts,
                           self._refused)

    def start(self, timeout_s: float = 5.0) -> tuple[str, int]:
        """Run the server on a background daemon thread; return the bound address."""
        if self._thread is not None:
            raise RuntimeError("server already started")
        self._thread = threading.Thread(target=self._thread_main, name="kafka-protocol-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise RuntimeError(f"server did not bind within {timeout_s} s")
        if self._startup_error is not None:
            self._thread.join(timeout_s)
            raise RuntimeError(f"server failed to start: {self._startup_error}") from self._startup_error
        return self.address

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop a server started with :meth:`start`: close all connections, join the thread."""
        thread, loop, event = self._thread, self._loop, self._stop_requested
        if thread is None:
            return
        if loop is not None and event is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # loop already finished
                loop.call_soon_threadsafe(event.set)
        thread.join(timeout_s)
        if thread.is_alive():
            raise RuntimeError(f"server thread did not stop within {timeout_s} s")
        self._thread = None

    def serve_forever(self) -> None:
        """Run in the calling thread until interrupted (Ctrl-C)."""
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self._main())

    def __enter__(self) -> KafkaProtocolServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------------------ lifecycle

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to start() if it happened before binding
            if not self._ready.is_set():
                self._startup_error = exc
                self._ready.set()
            else:
                log.exception("kafka protocol server stopped with an error")

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_requested = asyncio.Event()
        self._server = await asyncio.start_server(self._on_connection, self._host, self._port)
        sockname = self._server.sockets[0].getsockname()
        self._address = (str(sockname[0]), int(sockname[1]))
        if self._announce is not None:
            self._announce(f"listening on {self._address[0]}:{self._address[1]}")
        self._ready.set()
        try:
            await self._stop_requested.wait()
        finally:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self._server.wait_closed()
            self._address = None

    # ----------------------------------------------------------------------------- connections

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(self._connections) >= self._max_connections:
            self._refused += 1
            log.info("refusing a connection: %d open (the limit)", len(self._connections))
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            return
        self._connections.add(task)
        self._accepted += 1
        peer = writer.get_extra_info("peername")
        try:
            await self._serve_connection(reader, writer)
        except _Timeout as reason:
            self._timeouts += 1
            log.info("closing connection from %s: %s", peer, reason)
        except _Close as reason:
            self._bad_input += 1
            log.info("closing connection from %s: %s", peer, reason)
        except _HandlerFailure as failure:
            self._handler_errors += 1
            log.error("closing connection from %s: %s", peer, failure, exc_info=failure.__cause__)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.info("connection from %s ended: %s", peer, exc)
        except asyncio.CancelledError:
            pass  # server stopping
        except Exception:  # a bug in this module: still only this connection goes
            self._handler_errors += 1
            log.exception("internal error on connection from %s", peer)
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:  # between requests the peer may be silent for idle_timeout_s
                first = await asyncio.wait_for(reader.readexactly(1), self._idle_timeout_s)
            except TimeoutError:
                raise _Timeout(f"idle for {self._idle_timeout_s:g} s") from None
            except asyncio.IncompleteReadError:
                return  # clean EOF between frames
            started = asyncio.get_running_loop().time()
            prefix = first + await self._read_within(reader, 3, started, "size prefix")
            try:
                size = parse_frame_size(prefix, self._max_frame_bytes)
            except WireError as exc:
                raise _Close(str(exc)) from None
            if self._inflight_bytes + size > self._max_inflight_bytes:
                raise _Close(f"frame of {size} bytes: frames being read would exceed {self._max_inflight_bytes} bytes")
            self._inflight_bytes += size
            try:
                payload = await self._read_within(reader, size, started, f"frame of {size} bytes")
            finally:
                self._inflight_bytes -= size
            response = self._respond(payload)
            self._answered += 1  # before writing, so a client that got the answer sees the count
            writer.write(response)
            await writer.drain()

    async def _read_within(self, reader: asyncio.StreamReader, size: int, started: float, what: str) -> bytes:
        """The rest of a request that has begun: all of it within frame_timeout_s of its first byte."""
        remaining = started + self._frame_timeout_s - asyncio.get_running_loop().time()
        try:
            return await asyncio.wait_for(reader.readexactly(size), max(remaining, 0.001))
        except TimeoutError:
            raise _Timeout(f"{what} incomplete after {self._frame_timeout_s:g} s") from None
        except asyncio.IncompleteReadError as exc:
            raise _Close(f"truncated {what}: {len(exc.partial)} of {size} bytes") from None

    def _respond(self, payload: bytes) -> bytes:
        """Response frame for one request payload; raises _Close / _HandlerFailure to hang up."""
        try:
            request = decode_request(payload)
        except UnsupportedApiError as exc:
            if exc.api_key == API_VERSIONS and exc.correlation_id is not None:
                return self._unsupported_api_versions(exc.correlation_id)
            raise _Close(str(exc)) from None
        except WireError as exc:
            raise _Close(str(exc)) from None

        advertised = self._supported.get(request.api_key)
        if advertised is None or request.api_version not in advertised:
            if request.api_key == API_VERSIONS:
                return self._unsupported_api_versions(request.correlation_id)
            raise _Close(f"API key {request.api_key} v{request.api_version} is not served by this handler")

        method = self._dispatch[request.api_key]
        try:
            response = method(request.entity, request.api_version)
        except Exception as exc:
            raise _HandlerFailure(
                f"handler raised {type(exc).__name__} on key {request.api_key} v{request.api_version}"
            ) from exc
        expected = lookup(request.api_key, request.api_version).response
        if type(response) is not expected:
            raise _HandlerFailure(
                f"handler returned {type(response).__qualname__} for key {request.api_key} "
                f"v{request.api_version}; expected {expected.__module__}.{expected.__qualname__}"
            )
        try:
            return encode_response(response, request.correlation_id)
        except WireError as exc:
            raise _HandlerFailure(f"cannot encode handler response: {exc}") from exc

    def _unsupported_api_versions(self, correlation_id: int) -> bytes:
        response = unsupported_api_versions_response(self._supported[API_VERSIONS])
        return encode_response(response, correlation_id)


class _HandlerFailure(Exception):
    """Internal: the handler misbehaved; close the connection and log with the cause."""


def _validate_handler(
    handler: KafkaHandler,
) -> tuple[Mapping[int, VersionRange], Mapping[int, HandlerMethod]]:
    """Check the handler's table against the codec table and resolve its methods once.

    Fails fast (``ValueError``) at construction rather than on the first request: an unknown
    key, a range the codec cannot encode, or a declared API without its ``handle_`` method.
    """
    declared = dict(handler.supported_versions())
    codec_api_versions = API_TABLE[API_VERSIONS].version_range
    declared.setdefault(API_VERSIONS, codec_api_versions)
    dispatch: dict[int, HandlerMethod] = {}
    for key, rng in declared.items():
        spec = API_TABLE.get(key)
        if spec is None:
            raise ValueError(f"handler declares API key {key}, which the codec table does not know")
        if rng.intersect(spec.version_range) != rng:
            raise ValueError(
                f"handler declares {spec.name} {rng.min_version}..{rng.max_version}; the codec supports "
                f"{spec.version_range.min_version}..{spec.version_range.max_version}"
            )
        method = handler_method(handler, key)
        if method is None:
            if key != API_VERSIONS:
                raise ValueError(f"handler declares {spec.name} but has no handle_{spec.name} method")
            supported = MappingProxyType(declared)
            method = _default_api_versions(supported)
        dispatch[key] = method
    return MappingProxyType(declared), MappingProxyType(dispatch)


def _default_api_versions(supported: Mapping[int, VersionRange]) -> HandlerMethod:
    def handle_api_versions(request: Any, api_version: int) -> Any:
        return answer_api_versions(request, api_version, supported)

    return handle_api_versions


def serve(handler: KafkaHandler, host: str = "127.0.0.1", port: int = 0) -> None:
    """Serve in the foreground, printing ``listening on HOST:PORT`` once bound."""
    KafkaProtocolServer(handler, host, port, announce=lambda line: print(line, flush=True)).serve_forever()
