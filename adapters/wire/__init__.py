"""Kafka wire layer of isrcheck: kio-based codec and blocking client (the asyncio server that
puts a controller behind the protocol is `isrcheck.adapters.reference_server`).

Modules (controller.md §9 describes why the suite speaks the controller's protocol itself):

* :mod:`.apis` - the single (API key, version) → kio entity class table;
* :mod:`.kio_ext` - AlterPartition v0/v1 entities kio lacks (controller.md §2.1);
* :mod:`.guard` - bounded pre-pass protecting kio's native reader from hostile bytes;
* :mod:`.codec` - request/response frames, headers, KIP-511 ApiVersions fallback;
* :mod:`.connection` - :class:`KafkaConnection`, the blocking client a fake broker uses;
* :mod:`.errors` - :class:`WireError` and subclasses, the only exceptions the layer raises.
"""

from .apis import API_TABLE, ApiVersionClasses, VersionRange, lookup
from .codec import (
    MAX_FRAME_BYTES,
    DecodedRequest,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from .connection import KafkaConnection
from .errors import (
    ConnectionClosedError,
    FrameSizeError,
    UnsupportedApiError,
    WireError,
    WireTimeoutError,
)

__all__ = (
    "API_TABLE",
    "MAX_FRAME_BYTES",
    "ApiVersionClasses",
    "ConnectionClosedError",
    "DecodedRequest",
    "FrameSizeError",
    "KafkaConnection",
    "UnsupportedApiError",
    "VersionRange",
    "WireError",
    "WireTimeoutError",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "lookup",
)
