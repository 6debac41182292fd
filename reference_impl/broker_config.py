"""Broker-side settings of the cluster model (leader.md §14), separate from the controller's
`ClusterConfig` (controller.md §6). Defaults are Kafka's; `fast()` shrinks every timer by the
same proportions so random schedules cover many lag windows in few events.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    replica_lag_time_max_ms: int = 30000
    """§4 caught-up window; the isr-expiration task runs every half of it (§6)."""
    replica_fetch_wait_max_ms: int = 500
    """§14: a follower's fetch that brought no data is followed by the next one this much later
    (the model's stand-in for the long poll parked at the leader)."""
    replica_fetch_backoff_ms: int = 1000
    """§14: delay after a fetch error or a lost fetch."""
    replica_fetch_max_records: int = 1_000_000
    """Records per partition per fetch response (the model's `replica.fetch.max.bytes`)."""
    broker_heartbeat_interval_ms: int = 2000
    """controller.md §6 `broker.heartbeat.interval.ms`."""
    alter_partition_retry_backoff_ms: int = 50
    """§12: the one-shot `send-alter-partition` retry after a top-level error."""
    request_timeout_ms: int = 30000
    """§8: an acks=all produce request still waiting this long fails with REQUEST_TIMED_OUT."""
    log_flush_interval_ms: int | None = None
    """How often a broker flushes its logs (None: only on clean shutdown and explicit `flush`).
    `crash` with `lose: unflushed` loses what was appended since the last flush."""
    alter_partition_max_version: int | None = None
    """Highest AlterPartition version the broker sends (None: the newest the controller serves, §12)."""
    fetch_broker_epochs: bool | None = None
    """Whether Fetch carries the follower's broker epoch (Fetch v15, KIP-903; §13). None: when
    metadata.version ≥ 3.5-IV1."""

    def __post_init__(self) -> None:
        if self.replica_lag_time_max_ms < 2:
            raise ValueError("replica_lag_time_max_ms must be at least 2")
        if self.broker_heartbeat_interval_ms < 1 or self.replica_fetch_wait_max_ms < 1:
            raise ValueError("intervals must be positive")

    @property
    def isr_expiration_interval_ms(self) -> int:
        """§6: the shrink task's period, `replica.lag.time.max.ms / 2`."""
        return self.replica_lag_time_max_ms // 2

    def with_lag(self, replica_lag_time_max_ms: int) -> BrokerConfig:
        return replace(self, replica_lag_time_max_ms=replica_lag_time_max_ms)

    @classmethod
    def fast(cls) -> BrokerConfig:
        """Kafka's timer ratios at a tenth of the scale (pair it with a ~1000 ms session timeout), and
        small fetch responses so a lagging follower catches up over several fetches."""
        return cls(
            replica_lag_time_max_ms=3000, replica_fetch_wait_max_ms=250, replica_fetch_backoff_ms=100,
            broker_heartbeat_interval_ms=250, request_timeout_ms=3000, log_flush_interval_ms=500,
            replica_fetch_max_records=4,
        )
