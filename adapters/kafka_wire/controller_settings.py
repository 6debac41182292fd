"""The cluster-wide settings a controller process is started with, and whether a run can use it.

A run's `open(release, config)` names a release profile and scenario `config` keys
(scenario-format.md); the reference builds a `ClusterConfig` from them per run. A controller
over the wire cannot change its metadata.version, its ELR feature or its static defaults per
run (controller.md §6, §9.3 — they are fixed when the storage is formatted or the process
starts), so a wire target either starts a controller with matching settings or skips the run
with the difference as its reason. `broker.session.timeout.ms` is deliberately not part of
this: the reference never lets time pass, so no run depends on its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from isrcheck.adapters.base import UnsupportedConfiguration
from isrcheck.adapters.reference.controller_target import build_config
from isrcheck.reference_impl.release import ClusterConfig, profile_named


@dataclass(frozen=True)
class ControllerSettings:
    release: str
    """Release profile name (`3.9`), i.e. the controller's code version."""
    metadata_version: str
    eligible_leader_replicas: bool
    unclean_leader_election_enable: bool = False
    min_insync_replicas: int = 1

    @classmethod
    def for_run(cls, release: str, config: Mapping[str, Any]) -> ControllerSettings:
        """Settings a run of `release` with scenario `config` needs (UnsupportedConfiguration if none)."""
        cluster = build_config(profile_named(release).name, config)
        return cls.from_cluster_config(profile_named(release).name, cluster)

    @classmethod
    def from_cluster_config(cls, release: str, cluster: ClusterConfig) -> ControllerSettings:
        return cls(
            release, str(cluster.metadata_version), cluster.eligible_leader_replicas,
            cluster.unclean_leader_election_enable, cluster.min_insync_replicas,
        )

    def cluster_config(self, session_timeout_ms: int = 9000) -> ClusterConfig:
        try:
            return ClusterConfig.for_profile(
                profile_named(self.release), metadata_version=self.metadata_version,
                eligible_leader_replicas=self.eligible_leader_replicas,
                unclean_leader_election_enable=self.unclean_leader_election_enable,
                min_insync_replicas=self.min_insync_replicas, broker_session_timeout_ms=session_timeout_ms,
            )
        except ValueError as error:
            raise UnsupportedConfiguration(str(error)) from None

    def differences(self, wanted: ControllerSettings) -> list[str]:
        """Human-readable differences `self` (what runs) → `wanted` (what the run needs)."""
        return [
            f"{key} is {mine!r}, the run needs {theirs!r}"
            for key, mine in asdict(self).items()
            if mine != (theirs := asdict(wanted)[key])
        ]

    def require(self, wanted: ControllerSettings) -> None:
        """UnsupportedConfiguration naming every difference, if there is one."""
        diffs = self.differences(wanted)
        if diffs:
            raise UnsupportedConfiguration("the controller under test differs: " + "; ".join(diffs))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ControllerSettings:
        return cls(
            str(data["release"]), str(data["metadata_version"]), bool(data["eligible_leader_replicas"]),
            bool(data.get("unclean_leader_election_enable", False)), int(data.get("min_insync_replicas", 1)),
        )
