"""The single table mapping (API key, version) to kio request/response entity classes.

Only the APIs a fake broker or a fake controller needs are listed (controller.md §9.1, §9.2):
ApiVersions, BrokerRegistration, BrokerHeartbeat, UnregisterBroker, CreateTopics,
CreatePartitions, AlterPartition, ElectLeaders, AlterPartitionReassignments and DescribeCluster.
Version ranges are what kio 0.6.5 ships (its schemas come from a Kafka 4.x tree), plus
AlterPartition v0/v1 from :mod:`adapters.wire.kio_ext` because 3.3-3.9 controllers still serve
them (controller.md §2.1).  CreateTopics starts at v2 because kio has no v0/v1 (Kafka 4.0 removed
them); every controller since 3.3 accepts v2+.

The request and response header versions are not stored here: each kio class carries them in
``__header_schema__`` (flexible versions use request header v2 / response header v1;
ApiVersions responses always use header v0 - controller.md §9.1).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from kio.schema.alter_partition import v2 as alter_partition_v2
from kio.schema.alter_partition import v3 as alter_partition_v3
from kio.schema.alter_partition_reassignments import v0 as alter_partition_reassignments_v0
from kio.schema.alter_partition_reassignments import v1 as alter_partition_reassignments_v1
from kio.schema.api_versions import v0 as api_versions_v0
from kio.schema.api_versions import v1 as api_versions_v1
from kio.schema.api_versions import v2 as api_versions_v2
from kio.schema.api_versions import v3 as api_versions_v3
from kio.schema.api_versions import v4 as api_versions_v4
from kio.schema.broker_heartbeat import v0 as broker_heartbeat_v0
from kio.schema.broker_heartbeat import v1 as broker_heartbeat_v1
from kio.schema.broker_heartbeat import v2 as broker_heartbeat_v2
from kio.schema.broker_registration import v0 as broker_registration_v0
from kio.schema.broker_registration import v1 as broker_registration_v1
from kio.schema.broker_registration import v2 as broker_registration_v2
from kio.schema.broker_registration import v3 as broker_registration_v3
from kio.schema.broker_registration import v4 as broker_registration_v4
from kio.schema.create_partitions import v0 as create_partitions_v0
from kio.schema.create_partitions import v1 as create_partitions_v1
from kio.schema.create_partitions import v2 as create_partitions_v2
from kio.schema.create_partitions import v3 as create_partitions_v3
from kio.schema.create_topics import v2 as create_topics_v2
from kio.schema.create_topics import v3 as create_topics_v3
from kio.schema.create_topics import v4 as create_topics_v4
from kio.schema.create_topics import v5 as create_topics_v5
from kio.schema.create_topics import v6 as create_topics_v6
from kio.schema.create_topics import v7 as create_topics_v7
from kio.schema.describe_cluster import v0 as describe_cluster_v0
from kio.schema.describe_cluster import v1 as describe_cluster_v1
from kio.schema.describe_cluster import v2 as describe_cluster_v2
from kio.schema.elect_leaders import v0 as elect_leaders_v0
from kio.schema.elect_leaders import v1 as elect_leaders_v1
from kio.schema.elect_leaders import v2 as elect_leaders_v2
from kio.schema.unregister_broker import v0 as unregister_broker_v0

from .errors import UnsupportedApiError
from .kio_ext.alter_partition import v0 as alter_partition_v0
from .kio_ext.alter_partition import v1 as alter_partition_v1

#: A kio entity class (request or response payload).  kio's own ``Payload`` protocol cannot be
#: used as ``type[Payload]`` for concrete classes under mypy, so the table stays ``type[Any]``.
EntityClass = type[Any]

API_VERSIONS: Final = 18
CREATE_TOPICS: Final = 19
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


def _spec(api_key: int, name: str, modules: Mapping[int, Any], req: str, resp: str) -> ApiSpec:
    versions: dict[int, ApiVersionClasses] = {}
    for version, module in modules.items():
        request, response = getattr(module, req), getattr(module, resp)
        # Guard against a table typo: every class must describe exactly this key and version.
        for cls in (request, response):
            if (cls.__api_key__, cls.__version__) != (api_key, version):
                raise AssertionError(f"{cls.__module__}.{cls.__name__} is not ({api_key}, v{version})")
        versions[version] = ApiVersionClasses(api_key, version, request, response)
    if sorted(versions) != list(range(min(versions), max(versions) + 1)):
        raise AssertionError(f"{name}: versions must be contiguous, got {sorted(versions)}")
    return ApiSpec(api_key, name, MappingProxyType(versions))


#: The table: API key → :class:`ApiSpec`.  Everything else in the wire layer looks classes up here.
API_TABLE: Final[Mapping[int, ApiSpec]] = MappingProxyType(
    {
        spec.api_key: spec
        for spec in (
            _spec(
                API_VERSIONS,
                "api_versions",
                {0: api_versions_v0, 1: api_versions_v1, 2: api_versions_v2, 3: api_versions_v3,
                 4: api_versions_v4},
                "ApiVersionsRequest",
                "ApiVersionsResponse",
            ),
            _spec(
                CREATE_TOPICS,
                "create_topics",
                {2: create_topics_v2, 3: create_topics_v3, 4: create_topics_v4, 5: create_topics_v5,
                 6: create_topics_v6, 7: create_topics_v7},
                "CreateTopicsRequest",
                "CreateTopicsResponse",
            ),
            _spec(
                CREATE_PARTITIONS,
                "create_partitions",
                {0: create_partitions_v0, 1: create_partitions_v1, 2: create_partitions_v2,
                 3: create_partitions_v3},
                "CreatePartitionsRequest",
                "CreatePartitionsResponse",
            ),
            _spec(
                ELECT_LEADERS,
                "elect_leaders",
                {0: elect_leaders_v0, 1: elect_leaders_v1, 2: elect_leaders_v2},
                "ElectLeadersRequest",
                "ElectLeadersResponse",
            ),
            _spec(
                ALTER_PARTITION_REASSIGNMENTS,
                "alter_partition_reassignments",
                {0: alter_partition_reassignments_v0, 1: alter_partition_reassignments_v1},
                "AlterPartitionReassignmentsRequest",
                "AlterPartitionReassignmentsResponse",
            ),
            _spec(
                ALTER_PARTITION,
                "alter_partition",
                {0: alter_partition_v0, 1: alter_partition_v1, 2: alter_partition_v2,
                 3: alter_partition_v3},
                "AlterPartitionRequest",
                "AlterPartitionResponse",
            ),
            _spec(
                DESCRIBE_CLUSTER,
                "describe_cluster",
                {0: describe_cluster_v0, 1: describe_cluster_v1, 2: describe_cluster_v2},
                "DescribeClusterRequest",
                "DescribeClusterResponse",
            ),
            _spec(
                BROKER_REGISTRATION,
                "broker_registration",
                {0: broker_registration_v0, 1: broker_registration_v1, 2: broker_registration_v2,
                 3: broker_registration_v3, 4: broker_registration_v4},
                "BrokerRegistrationRequest",
                "BrokerRegistrationResponse",
            ),
            _spec(
                BROKER_HEARTBEAT,
                "broker_heartbeat",
                {0: broker_heartbeat_v0, 1: broker_heartbeat_v1, 2: broker_heartbeat_v2},
                "BrokerHeartbeatRequest",
                "BrokerHeartbeatResponse",
            ),
            _spec(
                UNREGISTER_BROKER,
                "unregister_broker",
                {0: unregister_broker_v0},
                "UnregisterBrokerRequest",
                "UnregisterBrokerResponse",
            ),
        )
    }
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
    class when the table uses a :mod:`adapters.wire.kio_ext` one) would be encoded with the wrong
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
            f"{cls.__module__}.{cls.__qualname__} is not the table's class for key {api_key} "
            f"v{api_version}",
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
