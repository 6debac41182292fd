"""The one interface every system under test implements (Jepsen's "client" role).

An operation is a name and a mapping of JSON-able arguments, answered with a mapping of result
fields — the same shape the scenario runner, the Hypothesis machines, the checkers, the records
and the `exec:` JSON-lines protocol use. Errors are Kafka error *names* (`"INELIGIBLE_REPLICA"`).

Arguments arrive resolved to concrete values with one exception: broker epochs are
implementation-defined (scenario-format.md, Values), so the caller resolves them per target
(through `observe`) before calling `execute`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from isrcheck.contract.history.black_box_json import REPLICA_LOGS as REPLICA_LOGS  # the target contract

if TYPE_CHECKING:
    from isrcheck.contract.history.ground_truth import ClusterObservation

Result = dict[str, Any]
Args = Mapping[str, Any]

CONTROLLER = "controller"
CLUSTER = "cluster"

PARTITION_FIELDS = (
    "leader", "isr", "replicas", "leader_epoch", "partition_epoch", "leader_recovery_state",
    "elr", "last_known_elr", "adding", "removing",
)
BROKER_FIELDS = ("registered", "fenced", "in_controlled_shutdown", "broker_epoch")
# REPLICA_LOGS, the optional observation of a black-box cluster (`Target.observes_replica_logs`):
# `observe(REPLICA_LOGS, {topic, partition})` → ``{"replicas": {"<node id>": [[offset, leader_epoch,
# key, value], ...], ...}}``, every replica's log of the partition as that replica holds it (key
# and value strings or null). P-LOG's black-box form is judged on it (docs/exec-protocol.md).


class UnsupportedConfiguration(Exception):
    """The target cannot run this release/config combination; the caller skips with the reason."""


class TargetUnavailable(UnsupportedConfiguration):
    """The system under test could not be started here — a Kafka node that did not come up, an
    engine that would not run a container: the environment's problem, not a verdict on the target.
    The run is skipped with this reason (which names where the node logs were kept), so a campaign
    that tested nothing ends in exit 2 (docs/exit-codes.md)."""


class TargetFailure(Exception):
    """The target misbehaved (crashed, hung, spoke nonsense): recorded as an outcome, never fatal."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Target(ABC):
    """A system under test. One instance drives one fresh system at a time (`open` … `close`)."""

    name: str = "target"
    levels: frozenset[str] = frozenset({CONTROLLER})
    releases: frozenset[str] | None = None
    """Release profiles it can run; None = any."""
    unsupported_operations: frozenset[str] = frozenset()
    """Operations the generator must not send it (e.g. `fail_over_controller` on one controller)."""
    black_box_history: bool = False
    """Cluster level without a reference alongside: the engine records its operations and
    observations and judges the black-box properties on that history (docs/real-kafka.md;
    operations as in `isrcheck.adapters.real_kafka.kafka_cluster`)."""
    observes_replica_logs: bool = False
    """A black-box cluster that answers `observe(REPLICA_LOGS, ...)`: the engine reads every
    replica's log after the heal and judges P-LOG on it; without it P-LOG is unknown for its runs."""
    observable_fields: frozenset[str] | None = None
    """PARTITION_FIELDS / BROKER_FIELDS its observations report truthfully; None = all of them.
    The differential compares nothing else (a real broker's Metadata shows no partition epoch)."""

    @abstractmethod
    def open(self, release: str, config: Mapping[str, Any]) -> None:
        """Start a fresh system for `release` with cluster settings `config` (scenario `config` keys);
        raise UnsupportedConfiguration when it cannot."""

    @abstractmethod
    def execute(self, op: str, args: Args) -> Result:
        """Run one operation; return its result fields."""

    @abstractmethod
    def observe(self, what: str, args: Args) -> Result:
        """Read state without changing it: `partition` {topic, partition} → PARTITION_FIELDS plus
        `exists`; `broker` {broker} → BROKER_FIELDS."""

    heal_until: Callable[[ClusterObservation], bool] | None = None
    """Set through `stop_heal_when` by the checker that owns the run (cluster level): `heal` may
    stop once this holds of the ground truth. Targets never judge properties themselves."""

    def stop_heal_when(self, condition: Callable[[ClusterObservation], bool]) -> None:
        self.heal_until = condition

    def ground_truth(self) -> ClusterObservation | None:
        """The whole system as it is after the last operation, replicas' logs included, for the
        properties only a simulation can be judged on (cluster level). A black box answers None."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release whatever `open` started."""

    def shutdown(self) -> None:  # noqa: B027 - optional hook
        """After the last run: release what outlives runs (controller processes, connections), so
        that a campaign ending leaves nothing running."""
