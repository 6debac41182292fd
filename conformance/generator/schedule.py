"""Seeded random schedules for the cluster model: a plain `random.Random(seed)` picks, action by
action, a scheduler event (deliver a message — usually the oldest, sometimes any — or fire the
next timer) or a workload/fault action. Same seed and configuration → same actions, same events.
`isrcheck.conformance.engine.random_schedules` runs them and checks the properties.

Data-loss crashes are generated only where Kafka promises durability despite them: with
eligible leader replicas on (KIP-966) and at most one broker at a time that lost data and has not
caught up again (more copies lost than min.insync.replicas - 1 is outside the guarantee).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from isrcheck.reference_impl.broker_config import BrokerConfig
from isrcheck.reference_impl.cluster import (
    LOSE_DISK,
    LOSE_NONE,
    LOSE_UNFLUSHED,
    ORDERED_KINDS,
    Cluster,
)
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.release import ClusterConfig, profile_named
from isrcheck.reference_impl.rpc import CONTROLLER_NODE

TOPIC = "t"


@dataclass(frozen=True)
class ScheduleConfig:
    release: str = "4.1"
    brokers: tuple[int, ...] = (1, 2, 3)
    partitions: int = 2
    min_insync_replicas: int = 2
    actions: int = 120
    session_timeout_ms: int = 1000
    broker_config: BrokerConfig = field(default_factory=BrokerConfig.fast)
    lossy_crashes: bool = True
    """Allowed only where the guarantee covers them (see the module docstring)."""
    faults: bool = True
    liveness: bool = True
    cluster_options: dict[str, Any] = field(default_factory=dict)
    """Passed to `Cluster` (e.g. `leader_rules=` for a mutant)."""


def build_cluster(config: ScheduleConfig) -> Cluster:
    profile = profile_named(config.release)
    cluster_config = ClusterConfig.for_profile(
        profile, min_insync_replicas=config.min_insync_replicas, broker_session_timeout_ms=config.session_timeout_ms
    )
    cluster = Cluster(profile, cluster_config, config.broker_config, **config.cluster_options)
    cluster.start(config.brokers)
    replicas = list(config.brokers)
    assignment = [replicas[i % len(replicas):] + replicas[:i % len(replicas)] for i in range(config.partitions)]
    cluster.create_topic(TOPIC, assignment)
    cluster.settle()
    return cluster


class Generator:
    """Chooses the next action from the cluster's state and the seeded generator."""

    WEIGHTS = (
        ("event", 64), ("produce", 8), ("tick", 8), ("drop", 3), ("duplicate", 2), ("hold", 2), ("release", 2),
        ("crash", 2), ("restart", 3), ("controlled_shutdown", 1), ("fail_over", 1), ("lag_metadata", 1),
        ("sync_metadata", 1), ("elect_preferred", 1), ("flush", 2),
    )

    def __init__(self, cluster: Cluster, rng: random.Random, config: ScheduleConfig) -> None:
        self.cluster = cluster
        self.rng = rng
        self.config = config
        self.lossy: set[int] = set()
        names = [name for name, _ in self.WEIGHTS if config.faults or name in ("event", "produce", "tick", "flush")]
        self.names = names
        self.weights = [weight for name, weight in self.WEIGHTS if name in names]
        self.elr = cluster.config.eligible_leader_replicas

    def alive(self) -> list[int]:
        return [b for b, p in sorted(self.cluster.brokers.items()) if p.alive]

    def down(self) -> list[int]:
        return [b for b, p in sorted(self.cluster.brokers.items()) if not p.alive]

    def recovered(self, broker: int) -> bool:
        """A broker that lost data holds every acknowledged record again."""
        disk = self.cluster.disks[broker]
        for acked in self.cluster.acked:
            log = disk.logs.get((acked.topic, acked.partition))
            if log is None or acked.offset >= log.leo or log.records[acked.offset][1] != acked.record:
                return False
        return True

    def loss_allowed(self) -> bool:
        if not (self.config.lossy_crashes and self.elr):
            return False
        self.lossy = {b for b in self.lossy if not self.recovered(b)}
        return not self.lossy

    def next(self) -> str:
        rng = self.rng
        cluster = self.cluster
        name = rng.choices(self.names, self.weights)[0]
        alive = self.alive()
        if name == "event":
            return "event" if cluster.step(rng) else "idle"
        if name == "produce":
            partition = rng.randrange(self.config.partitions)
            acks = rng.choice((-1, -1, -1, 1))
            state = cluster.produce(TOPIC, partition, acks, rng.randint(1, 3))
            return f"produce p{partition} acks={acks} -> {state.status}"
        if name == "tick":
            ms = rng.choice((10, 50, 200, 500, 1000, 2500))
            cluster.advance(ms)
            return f"tick {ms}"
        if name == "flush" and alive:
            broker = rng.choice(alive)
            cluster.flush(broker)
            return f"flush {broker}"
        if name == "drop" and cluster.network.inflight:
            message = rng.choice(list(cluster.network.inflight.values()))
            cluster.drop(message)
            return f"drop {message.kind} {message.src}->{message.dst}"
        if name == "duplicate":
            candidates = [m for m in cluster.network.inflight.values() if m.kind not in ORDERED_KINDS]
            if candidates:
                message = rng.choice(candidates)
                cluster.duplicate(message)
                return f"duplicate {message.kind} {message.src}->{message.dst}"
        if name == "hold":
            nodes: list[int | str] = [*self.config.brokers, CONTROLLER_NODE]
            src, dst = rng.sample(nodes, 2)
            cluster.hold(Selector(None, src, dst))
            return f"hold {src}->{dst}"
        if name == "release" and cluster.network.holds:
            rule = rng.choice(cluster.network.holds)
            cluster.release(rule)
            return f"release {rule.src}->{rule.dst}"
        if name == "crash" and len(alive) > 1:
            broker = rng.choice(alive)
            lose = LOSE_NONE
            if self.loss_allowed() and rng.random() < 0.5:
                lose = rng.choice((LOSE_UNFLUSHED, LOSE_DISK))
                self.lossy.add(broker)
            cluster.crash(broker, lose)
            return f"crash {broker} lose={lose}"
        if name == "restart" and self.down():
            broker = rng.choice(self.down())
            cluster.restart(broker)
            return f"restart {broker}"
        if name == "controlled_shutdown":
            running = [b for b in alive if cluster.brokers[b].status == "running"]
            if len(running) > 1:
                broker = rng.choice(running)
                cluster.controlled_shutdown(broker)
                return f"controlled_shutdown {broker}"
        if name == "fail_over":
            zombie = rng.random() < 0.5
            cluster.fail_over_controller(zombie)
            return f"fail_over zombie={zombie}"
        if name == "lag_metadata" and alive:
            broker = rng.choice(alive)
            cluster.lag_metadata(broker)
            return f"lag_metadata {broker}"
        if name == "sync_metadata" and cluster.metadata_holds:
            broker = rng.choice(sorted(cluster.metadata_holds))
            cluster.sync_metadata(broker)
            return f"sync_metadata {broker}"
        if name == "elect_preferred":
            partition = rng.randrange(self.config.partitions)
            cluster.controller.elect_leaders(Election.PREFERRED, [(TOPIC, partition)])
            cluster.controller_changed()
            return f"elect_preferred p{partition}"
        return "event" if cluster.step(rng) else "idle"
