"""metadata.version names ↔ feature levels (KIP-778), the numbers a KRaft controller speaks.

The reference names metadata versions ("3.6-IV0", `isrcheck.reference_impl.release.MetadataVersion`);
the wire and the metadata log carry the feature level of `metadata.version` instead
(ApiVersions FinalizedFeatures, BrokerRegistration Features, FeatureLevelRecord —
controller.md §4.1 check 6, §9.2). controller.md §2.6 gives one anchor (3.6-IV0 = level 12) and
§4.9 another (4.1-IV1 = level 27); the table is Kafka's `MetadataVersion` enum in order.
"""

from __future__ import annotations

from isrcheck.reference_impl.release import MetadataVersion

METADATA_VERSION_FEATURE = "metadata.version"
ELR_FEATURE = "eligible.leader.replicas.version"

_NAMES = (
    "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
    "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1",
    "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
    "4.0-IV3", "4.1-IV0", "4.1-IV1",
)
LEVELS: dict[MetadataVersion, int] = {MetadataVersion.parse(name): level for level, name in enumerate(_NAMES, 1)}
BY_LEVEL: dict[int, MetadataVersion] = {level: mv for mv, level in LEVELS.items()}
HIGHEST_LEVEL = max(BY_LEVEL)


def level_of(mv: MetadataVersion | str) -> int:
    """Feature level of a metadata.version; ValueError for one this table does not know."""
    version = MetadataVersion.parse(mv) if isinstance(mv, str) else mv
    try:
        return LEVELS[version]
    except KeyError:
        raise ValueError(f"no feature level known for metadata.version {version}") from None
