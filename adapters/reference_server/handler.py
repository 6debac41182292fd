"""The interface between :class:`~isrcheck.adapters.reference_server.server.KafkaProtocolServer` and the code that
answers requests (a dummy in tests, later the reference controller of controller.md).

A handler is any object with

* ``supported_versions() -> Mapping[int, VersionRange]`` - the (API key → min..max) table the
  server advertises in ApiVersions and enforces before calling the handler; and
* one method per API, named ``handle_<api name>`` after :data:`isrcheck.adapters.wire.apis.API_TABLE`
  (``handle_broker_registration``, ``handle_broker_heartbeat``, ``handle_unregister_broker``,
  ``handle_create_topics``, ``handle_create_partitions``, ``handle_alter_partition``,
  ``handle_elect_leaders``, ``handle_alter_partition_reassignments``,
  ``handle_describe_cluster``, optionally ``handle_api_versions``), each
  ``(request_entity, api_version) -> response_entity``, synchronous.

The server reads ``supported_versions()`` once, when it is constructed, and calls handler
methods on its single event-loop thread, one request at a time across
all connections, in arrival order per connection.  A handler therefore needs no locking, and its
state changes are serialised the way the KRaft controller's event queue serialises them
(controller.md §2.2, §4).  The response must be the kio response class of the same API key and
version (``isrcheck.adapters.wire.apis.lookup(key, version).response``); anything else, or an exception,
closes that one connection.

:class:`BaseHandler` derives ``supported_versions()`` from the ``handle_*`` methods a subclass
defines and answers ApiVersions itself, so a controller adapter only writes the API methods
(plus, for BrokerRegistration on 3.9+, the finalized features of controller.md §9.2 via
:meth:`BaseHandler.features`).
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from isrcheck.adapters.wire.apis import API_TABLE, API_VERSIONS, ApiSpec, VersionRange, lookup, nested_class
from isrcheck.adapters.wire.codec import NO_THROTTLE
from kio.schema.errors import ErrorCode
from kio.static.primitive import i16, i64

#: The type of a ``handle_<api>`` method: ``(request entity, api version) -> response entity``.
HandlerMethod = Callable[[Any, int], Any]


@runtime_checkable
class KafkaHandler(Protocol):
    """What the server requires of a handler besides its ``handle_<api>`` methods."""

    def supported_versions(self) -> Mapping[int, VersionRange]:
        """API key → advertised version range (ApiVersions may be omitted; the server adds it)."""
        ...


def method_name(spec: ApiSpec) -> str:
    """Name of the handler method serving ``spec`` (``handle_`` + kio's snake_case API name)."""
    return f"handle_{spec.name}"


def handler_method(handler: object, api_key: int) -> HandlerMethod | None:
    """The bound ``handle_<api>`` method of ``handler`` for ``api_key``, if it has one."""
    spec = API_TABLE.get(api_key)
    if spec is None:
        return None
    method = getattr(handler, method_name(spec), None)
    return method if callable(method) else None


@dataclass(frozen=True, slots=True)
class FeatureSet:
    """Feature levels advertised in ApiVersions v3+ (tagged fields; KIP-584).

    A fake broker reads ``finalized`` from a real controller to register with matching feature
    ranges on 3.9+ (controller.md §9.2); a fake controller fills it so brokers can do the same.
    ``finalized`` maps a feature name to (min_version_level, max_version_level).
    """

    supported: Mapping[str, VersionRange] = field(default_factory=lambda: types.MappingProxyType({}))
    finalized: Mapping[str, VersionRange] = field(default_factory=lambda: types.MappingProxyType({}))
    finalized_epoch: int = -1


def build_api_versions_response(
    api_version: int,
    supported: Mapping[int, VersionRange],
    features: FeatureSet | None = None,
) -> Any:
    """A successful ApiVersions response of ``api_version`` advertising ``supported``.

    ``supported`` must include ApiVersions itself; entries are sorted by key.  Features are only
    representable from v3 on and are dropped for older versions, as Kafka does.
    """
    response_cls = lookup(API_VERSIONS, api_version).response
    api_version_cls = nested_class(response_cls, "ApiVersion")
    api_keys = tuple(
        api_version_cls(api_key=i16(key), min_version=i16(rng.min_version), max_version=i16(rng.max_version))
        for key, rng in sorted(supported.items())
    )
    kwargs: dict[str, Any] = {"error_code": ErrorCode.none, "api_keys": api_keys}
    if api_version >= 1:
        kwargs["throttle_time"] = NO_THROTTLE
    if api_version >= 3 and features is not None:
        supported_cls = nested_class(response_cls, "SupportedFeatureKey")
        finalized_cls = nested_class(response_cls, "FinalizedFeatureKey")
        kwargs["supported_features"] = tuple(
            supported_cls(name=name, min_version=i16(rng.min_version), max_version=i16(rng.max_version))
            for name, rng in sorted(features.supported.items())
        )
        kwargs["finalized_features_epoch"] = i64(features.finalized_epoch)
        kwargs["finalized_features"] = tuple(
            finalized_cls(name=name, max_version_level=i16(rng.max_version), min_version_level=i16(rng.min_version))
            for name, rng in sorted(features.finalized.items())
        )
    return response_cls(**kwargs)


#: Kafka's pattern for ApiVersions v3+ ``client_software_name``/``version`` (KIP-511).
_SOFTWARE_PATTERN = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def answer_api_versions(
    request: Any,
    api_version: int,
    supported: Mapping[int, VersionRange],
    features: FeatureSet | None = None,
) -> Any:
    """Kafka's answer to a decoded ApiVersions request of a supported version.

    v3+ requests whose ``client_software_name``/``version`` do not match Kafka's pattern get
    ``INVALID_REQUEST`` with an empty list (``KafkaApis.handleApiVersionsRequest``); otherwise the
    advertised table.
    """
    if api_version >= 3 and not (
        _SOFTWARE_PATTERN.fullmatch(request.client_software_name)
        and _SOFTWARE_PATTERN.fullmatch(request.client_software_version)
    ):
        kwargs: dict[str, Any] = {"error_code": ErrorCode.invalid_request, "api_keys": (), "throttle_time": NO_THROTTLE}
        return lookup(API_VERSIONS, api_version).response(**kwargs)
    return build_api_versions_response(api_version, supported, features)


class BaseHandler:
    """Convenience base: subclass it and define ``handle_<api>`` methods.

    ``version_limits`` narrows the advertised range per API key, e.g. ``{56: (2, 3)}`` to behave
    like a 4.0/4.1 controller that dropped AlterPartition v0/v1 (controller.md §2.1, §7).
    """

    def __init__(self, version_limits: Mapping[int, tuple[int, int]] | None = None) -> None:
        limits = version_limits or {}
        self._version_limits = {key: VersionRange(low, high) for key, (low, high) in limits.items()}

    def supported_versions(self) -> Mapping[int, VersionRange]:
        """Codec range ∩ ``version_limits`` for ApiVersions and every API with a ``handle_`` method."""
        table: dict[int, VersionRange] = {}
        for key, spec in API_TABLE.items():
            if key != API_VERSIONS and handler_method(self, key) is None:
                continue
            limit = self._version_limits.get(key)
            rng = spec.version_range if limit is None else spec.version_range.intersect(limit)
            if rng is not None:
                table[key] = rng
        return types.MappingProxyType(table)

    def features(self) -> FeatureSet | None:
        """Features to advertise in ApiVersions v3+; none by default."""
        return None

    def handle_api_versions(self, request: Any, api_version: int) -> Any:
        """Answer ApiVersions from :meth:`supported_versions` and :meth:`features`."""
        return answer_api_versions(request, api_version, self.supported_versions(), self.features())
