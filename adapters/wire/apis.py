"""The single table mapping (API key, version) to kio request/response entity classes.

Only the APIs a fake broker or a fake controller needs are listed (controller.md §9.1, §9.2):
ApiVersions, BrokerRegistration, BrokerHeartbeat, UnregisterBroker, CreateTopics, DeleteTopics,
CreatePartitions, AlterPartition, ElectLeaders, AlterPartitionReassignments and DescribeCluster.
Version ranges are what kio 0.6.5 ships (its schemas come from a Kafka 4.x tree), plus
AlterPartition v0/v1 from :mod:`isrcheck.adapters.wire.kio_ext` because 3.3-3.9 controllers still serve
them (controller.md §2.1).  CreateTopics starts at v2 because kio has no v0/v1 (Kafka 4.0 removed
them); every controller since 3.3 accepts v2+. DeleteTopics starts at v1 likewise (kio has no v0).

The request and response header versions are not stored here: each kio class carries them in
``__header_schema__`` (flexible versions use request header v2 / response header v1;
ApiVersions responses always use header v0 - controller.md §9.1).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from .errors import UnsupportedApiError

#: A kio entity class (request or response payload).  kio's own ``Payload`` protocol cannot be
#: used as ``type[Payload]`` for concrete classes under mypy, so the table stays ``type[Any]``.
EntityClass = type[Any]

API_VERSIONS: Final = 18
CREATE_TOPICS: Final = 19
DELETE_TOPICS: Final = 20
CREATE_PARTITIONS: Final = 37
ELECT_LEADERS: Final = 43
ALTER_PARTITION_REASSIGNMENTS: Final = 45
ALTER_PARTITION: Final = 56
DESCRIBE_CLUSTER: Final = 60
BROKER_REGISTRATION: Final = 62
BROKER_HEARTBEAT: Final = 63
UNREGISTER_BROKER: Final = 64


@dataclass(frozen=True, slots=True)
class VersionRange:
    """Inclusive range of API versions, as advertised in an ApiVersions response."""

    min_version: int
    max_version: int

    def __post_init__(self) -> None:
        if self.min_version > self.max_version:
            raise ValueError(f"empty version range {self.min_version}..{self.max_version}")

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.min_version <= version <= self.max_version

    def intersect(self, other: VersionRange) -> VersionRange | None:
        """The versions both ranges contain, or ``None`` when they are disjoint."""
        low = max(self.min_version, other.min_version)
        high = min(self.max_version, other.max_version)
        return VersionRange(low, high) if low <= high else None


@dataclass(frozen=True, slots=True)
class ApiVersionClasses:
    """The kio request and response classes of one (API key, version)."""

    api_key: int
    api_version: int
    request: EntityClass
    response: EntityClass


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """One API: its key, its snake_case name (the handler method suffix) and its versions."""

    api_key: int
    name: str
    versions: Mapping[int, ApiVersionClasses]

    @property
    def version_range(self) -> VersionRange:
        """The contiguous range of versions the codec can encode and decode."""
        return VersionRange(min(self.versions), max(self.versions))


#: The table's source: API key → (kio schema package name, versions).  Versions are read from
#: ``kio.schema.<name>.v<N>``, except where :data:`_EXTRA_MODULES` supplies a module.
_APIS: Final[Mapping[int, tuple[str, range]]] = {
    API_VERSIONS: ("api_versions", range(0, 5)),
    CREATE_TOPICS: ("create_topics", range(2, 8)),
    DELETE_TOPICS: ("delete_topics", range(1, 7)),
    CREATE_PARTITIONS: ("create_partitions", range(0, 4)),
    ELECT_LEADERS: ("elect_leaders", range(0, 3)),
    ALTER_PARTITION_REASSIGNMENTS: ("alter_partition_reassignments", range(0, 2)),
    ALTER_PARTITION: ("alter_partition", range(0, 4)),
    DESCRIBE_CLUSTER: ("describe_cluster", range(0, 3)),
    BROKER_REGISTRATION: ("broker_registration", range(0, 5)),
    BROKER_HEARTBEAT: ("broker_heartbeat", range(0, 3)),
    UNREGISTER_BROKER: ("unregister_broker", range(0, 1)),
}

#: (API key, version) → module defining the entities when kio lacks them (controller.md §2.1).
_EXTRA_MODULES: Final[Mapping[tuple[int, int], str]] = {
    (ALTER_PARTITION, 0): "isrcheck.adapters.wire.kio_ext.alter_partition.v0",
    (ALTER_PARTITION, 1): "isrcheck.adapters.wire.kio_ext.alter_partition.v1",
}


def _spec(api_key: int, name: str, versions: range) -> ApiSpec:
    camel = "".join(part.capitalize() for part in name.split("_"))
    entries: dict[int, ApiVersionClasses] = {}
    for version in versions:
        module_name = _EXTRA_MODULES.get((api_key, version), f"kio.schema.{name}.v{version}")
        module = importlib.import_module(module_name)
        request, response = getattr(module, f"{camel}Request"), getattr(module, f"{camel}Response")
        # Guard against a table typo: every class must describe exactly this key and version.
        for cls in (request, response):
            if (cls.__api_key__, cls.__version__) != (api_key, version):
                raise AssertionError(f"{cls.__module__}.{cls.__name__} is not ({api_key}, v{version})")
        entries[version] = ApiVersionClasses(api_key, version, request, response)
    return ApiSpec(api_key, name, MappingProxyType(entries))


#: The table: API key → :class:`ApiSpec`.  Everything else in the wire layer looks classes up here.
API_TABLE: Final[Mapping[int, ApiSpec]] = MappingProxyType(
    {key: _spec(key, name, versions) for key, (name, versions) in _APIS.items()}
)


def api_spec(api_key: int) -> ApiSpec:
    """The :class:`ApiSpec` of ``api_key``; :class:`UnsupportedApiError` if the table lacks it."""
    try:
        return API_TABLE[api_key]
    except KeyError:
        raise UnsupportedApiError(f"unknown API key {api_key}", api_key=api_key) from None


def lookup(api_key: int, api_version: int) -> ApiVersionClasses:
    """Classes for (key, version); :class:`UnsupportedApiError` for an unknown key or version."""
    spec = api_spec(api_key)
    try:
        return spec.versions[api_version]
    except KeyError:
        raise UnsupportedApiError(
            f"{spec.name} (key {api_key}) version {api_version} is not supported; "
            f"codec supports {spec.version_range.min_version}..{spec.version_range.max_version}",
            api_key=api_key,
            api_version=api_version,
        ) from None


def classes_of(entity_or_class: object) -> ApiVersionClasses:
    """Table entry of a kio payload instance or class, checking it *is* the table's class.

    Identity matters: a look-alike class with the same key and version (for instance kio's own
    class when the table uses a :mod:`isrcheck.adapters.wire.kio_ext` one) would be encoded with the wrong
    fields, so it is rejected with :class:`UnsupportedApiError`.
    """
    cls = entity_or_class if isinstance(entity_or_class, type) else type(entity_or_class)
    try:
        api_key, api_version = int(cls.__api_key__), int(cls.__version__)  # type: ignore[attr-defined]
    except AttributeError:
        raise UnsupportedApiError(f"{cls.__qualname__} is not a kio payload entity") from None
    entry = lookup(api_key, api_version)
    if cls is not entry.request and cls is not entry.response:
        raise UnsupportedApiError(
            f"{cls.__module__}.{cls.__qualname__} is not the table's class for key {api_key} v{api_version}",
            api_key=api_key,
            api_version=api_version,
        )
    return entry


def nested_class(payload_cls: EntityClass, name: str) -> EntityClass:
    """A nested entity class defined next to ``payload_cls`` in its kio module.

    kio names nested structs after the JSON schema (``ApiVersion``, ``TopicData``, ...) and
    defines them in the payload's module; request and response modules both have a
    ``TopicData``, so the payload class is what disambiguates.
    """
    nested = getattr(sys.modules[payload_cls.__module__], name, None)
    if not isinstance(nested, type):
        raise AttributeError(f"{payload_cls.__module__} defines no entity class {name!r}")
    return nested
