"""Frame-level encoding and decoding of Kafka requests and responses, built on kio.

A Kafka frame is a 4-byte big-endian signed size followed by that many bytes: a request header
and a request body, or a response header and a response body.  The header version follows from
the (API key, version) pair: flexible versions use request header v2 / response header v1, older
ones request header v1 / response header v0, and ApiVersions responses always use header v0 so a
client can read the error before it knows the broker's versions (controller.md §9.1, KIP-511).
kio records the header class of every payload class in ``__header_schema__``; this module reads
it from the class found in :data:`isrcheck.adapters.wire.apis.API_TABLE` and never hard-codes it.

Client side: :func:`encode_request`, :func:`decode_response`.  Server side:
:func:`decode_request` (or :func:`decode_request_header` to look before decoding the body),
:func:`encode_response`.  All failures raise :class:`~isrcheck.adapters.wire.errors.WireError`.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Final

from kio.schema.errors import ErrorCode
from kio.serial.readers import read_int16, read_int32
from kio.static.primitive import i16, i32, i32Timedelta

from .apis import API_TABLE, API_VERSIONS, VersionRange, classes_of, lookup, nested_class
from .errors import FrameSizeError, UnsupportedApiError, WireError
from .guard import Buffer, read_entity, write_entity

#: Largest frame either side accepts by default.  Kafka's own limit is socket.request.max.bytes
#: (100 MiB); the fake controller in :mod:`isrcheck.adapters.reference_server.server` uses the same.
MAX_FRAME_BYTES: Final = 100 * 1024 * 1024

#: Bytes every request header starts with: api_key int16, api_version int16, correlation_id int32.
_HEADER_PREFIX_BYTES: Final = 8

#: ``client_id`` written by default: identifies this suite in a real controller's request log.
DEFAULT_CLIENT_ID: Final = "isrcheck"


@dataclass(frozen=True, slots=True)
class RequestHeaderInfo:
    """A decoded request header and where the request body starts in the payload."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int


@dataclass(frozen=True, slots=True)
class DecodedRequest:
    """What the server needs from one request frame: header fields plus the kio body entity."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    entity: Any


def frame(payload: bytes) -> bytes:
    """Prefix ``payload`` with its 4-byte big-endian size."""
    return len(payload).to_bytes(4, "big", signed=True) + payload


def parse_frame_size(prefix: Buffer, max_frame_bytes: int = MAX_FRAME_BYTES) -> int:
    """Size announced by a 4-byte prefix; :class:`FrameSizeError` if negative or over the limit."""
    if len(prefix) != 4:
        raise WireError(f"frame size prefix must be 4 bytes, got {len(prefix)}")
    size = int.from_bytes(prefix, "big", signed=True)
    if size < 0:
        raise FrameSizeError(f"negative frame size {size}")
    if size > max_frame_bytes:
        raise FrameSizeError(f"frame of {size} bytes exceeds the {max_frame_bytes}-byte limit")
    return size


def unframe(data: Buffer, max_frame_bytes: int = MAX_FRAME_BYTES) -> bytes:
    """Payload of one complete frame (prefix included in ``data``); checks the size matches."""
    size = parse_frame_size(bytes(data[:4]), max_frame_bytes)
    if len(data) - 4 != size:
        raise WireError(f"frame announces {size} bytes but carries {len(data) - 4}")
    return bytes(data[4:])


#: Zero throttle time, the value every response built by this suite carries.
NO_THROTTLE: Final = i32Timedelta.parse(datetime.timedelta(0))


# --------------------------------------------------------------------------------------------
# client side


def encode_request(entity: object, correlation_id: int, client_id: str | None = DEFAULT_CLIENT_ID) -> bytes:
    """Complete request frame (size prefix, header, body) for a kio request entity."""
    entry = classes_of(entity)
    header_cls = entry.request.__header_schema__
    if type(entity) is not entry.request:
        raise UnsupportedApiError(f"{type(entity).__qualname__} is a response, not a request")
    try:
        header = header_cls(
            request_api_key=i16(entry.api_key),
            request_api_version=i16(entry.api_version),
            correlation_id=i32(correlation_id),
            client_id=client_id,
        )
    except TypeError as exc:  # kio's phantom int types reject out-of-range values
        raise WireError(f"invalid request header field: {exc}") from exc
    return frame(write_entity(header) + write_entity(entity))


def decode_response(payload: Buffer, api_key: int, api_version: int) -> tuple[int, Any]:
    """``(correlation_id, response entity)`` from a response payload (size prefix removed).

    Responses do not name their API, so the caller passes the key and version it sent.  An
    ApiVersions response with ``UNSUPPORTED_VERSION`` is decoded as v0 whatever version was
    asked for: that is how brokers answer a version they do not know (KIP-511).
    """
    entry = lookup(api_key, api_version)
    header, offset = read_entity(entry.response.__header_schema__, payload, 0)
    response_cls = entry.response
    if api_key == API_VERSIONS and api_version > 0 and _peek_error_code(payload, offset) == 35:
        response_cls = lookup(API_VERSIONS, 0).response
    entity, end = read_entity(response_cls, payload, offset)
    if end != len(payload):
        raise WireError(f"{len(payload) - end} trailing bytes after {response_cls.__qualname__}")
    return int(header.correlation_id), entity


def _peek_error_code(payload: Buffer, offset: int) -> int | None:
    if len(payload) - offset < 2:
        return None
    value, _ = read_int16(payload, offset)
    return int(value)


# --------------------------------------------------------------------------------------------
# server side


def decode_request_header(payload: Buffer) -> RequestHeaderInfo:
    """Decode the header of a request payload (size prefix removed).

    Raises :class:`UnsupportedApiError` for an API key or version missing from the table, with
    ``correlation_id`` filled in.  For ApiVersions the whole header is still validated first,
    parsed as v2 for versions >= 3 and v1 below (Kafka's rule), so that the server can answer
    ``UNSUPPORTED_VERSION`` only to a well-formed request.
    """
    if len(payload) < _HEADER_PREFIX_BYTES:
        raise WireError(f"truncated request header: {len(payload)} bytes")
    api_key = int(read_int16(payload, 0)[0])
    api_version = int(read_int16(payload, 2)[0])
    correlation_id = int(read_int32(payload, 4)[0])
    spec = API_TABLE.get(api_key)
    if spec is None:
        raise UnsupportedApiError(
            f"unknown API key {api_key} (correlation id {correlation_id})",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    entry = spec.versions.get(api_version)
    if entry is None:
        if api_key == API_VERSIONS:
            header_cls = lookup(API_VERSIONS, 3 if api_version >= 3 else 0).request.__header_schema__
            read_entity(header_cls, payload, 0)
        supported = spec.version_range
        raise UnsupportedApiError(
            f"{spec.name} (key {api_key}) version {api_version} is not supported; "
            f"supported {supported.min_version}..{supported.max_version}",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    header, body_offset = read_entity(entry.request.__header_schema__, payload, 0)
    return RequestHeaderInfo(api_key, api_version, correlation_id, header.client_id, body_offset)


def decode_request(payload: Buffer) -> DecodedRequest:
    """Decode a whole request payload (size prefix removed); trailing bytes are an error."""
    header = decode_request_header(payload)
    request_cls = lookup(header.api_key, header.api_version).request
    entity, end = read_entity(request_cls, payload, header.body_offset)
    if end != len(payload):
        raise WireError(f"{len(payload) - end} trailing bytes after {request_cls.__qualname__}")
    return DecodedRequest(header.api_key, header.api_version, header.correlation_id, header.client_id, entity)


def encode_response(entity: object, correlation_id: int) -> bytes:
    """Complete response frame (size prefix, header, body) for a kio response entity."""
    entry = classes_of(entity)
    header_cls = entry.response.__header_schema__
    if type(entity) is not entry.response:
        raise UnsupportedApiError(f"{type(entity).__qualname__} is a request, not a response")
    try:
        header = header_cls(correlation_id=i32(correlation_id))
    except TypeError as exc:
        raise WireError(f"invalid correlation id {correlation_id}: {exc}") from exc
    return frame(write_entity(header) + write_entity(entity))


def unsupported_api_versions_response(supported: VersionRange) -> Any:
    """ApiVersions v0 response carrying ``UNSUPPORTED_VERSION`` and ApiVersions' own range.

    This is Kafka's answer to an ApiVersions request of a version it does not support
    (``ApiVersionsRequest.getErrorResponse``, KIP-511): a v0 body whose only ``api_keys`` entry
    is ApiVersions itself, so the client can retry with a version both sides know.
    """
    v0 = lookup(API_VERSIONS, 0).response
    api_version_cls = nested_class(v0, "ApiVersion")
    return v0(
        error_code=ErrorCode.unsupported_version,
        api_keys=(
            api_version_cls(
                api_key=i16(API_VERSIONS),
                min_version=i16(supported.min_version),
                max_version=i16(supported.max_version),
            ),
        ),
    )
