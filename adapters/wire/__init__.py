"""Kafka wire layer of isrcheck: kio-based codec, blocking client, asyncio server.

Modules (controller.md §9 describes why the suite speaks the controller's protocol itself):

* :mod:`.apis` - the single (API key, version) → kio entity class table;
* :mod:`.kio_ext` - AlterPartition v0/v1 entities kio lacks (controller.md §2.1);
* :mod:`.guard` - bounded pre-pass protecting kio's native reader from hostile bytes;
* :mod:`.codec` - request/response frames, headers, KIP-511 ApiVersions fallback;
* :mod:`.connection` - :class:`KafkaConnection`, the blocking client a fake broker uses;
* :mod:`.handler` - the handler interface and :class:`BaseHandler`;
* :mod:`.server` - :class:`KafkaProtocolServer`, where a fake controller plugs in;
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
from .handler import BaseHandler, FeatureSet, KafkaHandler
from .server import KafkaProtocolServer

__all__ = (
    "API_TABLE",
    "MAX_FRAME_BYTES",
    "ApiVersionClasses",
    "BaseHandler",
    "ConnectionClosedError",
    "DecodedRequest",
    "FeatureSet",
    "FrameSizeError",
    "KafkaConnection",
    "KafkaHandler",
    "KafkaProtocolServer",
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
