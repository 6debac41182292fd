"""Exceptions of the Kafka wire layer.

Every failure the wire layer detects — bytes that are not a Kafka frame, an API key or version
that the codec table (``isrcheck.adapters.wire.apis``) does not know, a peer that closed the socket, a
request that timed out — is raised as a :class:`WireError` (or a subclass).  Callers driving a
KRaft controller as fake brokers (controller.md §9.2) can therefore tell "the wire broke" apart
from "the controller answered with an error code", which arrives as a normal response entity.
Nothing in this package lets an ``IndexError``, ``struct.error`` or a kio decoding exception
escape unwrapped.
"""

from __future__ import annotations


class WireError(Exception):
    """Base class: malformed, truncated or unexpected bytes, or a broken connection."""


class UnsupportedApiError(WireError):
    """An API key, or a version of a known key, that the codec or the peer does not support.

    ``correlation_id`` is set when it could be read from the request header; the server needs it
    to answer an unsupported ApiVersions request with ``UNSUPPORTED_VERSION`` (KIP-511) instead of
    closing the connection.
    """

    def __init__(
        self,
        message: str,
        *,
        api_key: int | None = None,
        api_version: int | None = None,
        correlation_id: int | None = None,
    ) -> None:
        super().__init__(message)
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


class FrameSizeError(WireError):
    """A 4-byte size prefix that is negative or larger than the configured limit."""


class ConnectionClosedError(WireError):
    """The peer closed the connection, or it was closed locally after an earlier failure."""


class WireTimeoutError(WireError):
    """No complete response arrived within the per-request timeout.

    The connection is closed when this is raised: a late response would otherwise be read as the
    answer to the next request.
    """
