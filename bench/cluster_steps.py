"""Scheduler events per second of the cluster model on one core (issue target: ≥ 20,000/s).

A 3-broker cluster (Kafka's timer ratios at a tenth of the scale, `BrokerConfig.fast()`), one
topic with 3 partitions of 3 replicas, min.insync.replicas 2. A seeded workload: mostly
scheduler events (`Cluster.step`: deliver a message — the oldest, a quarter of the time any —
or fire the next timer), with produce requests (acks=all and acks=1), dropped and duplicated
messages, and now and then a follower crash and restart. An *event* is one message delivery or
one timer firing (`Cluster.events`); produce calls and faults are not counted.

Usage: python bench/cluster_steps.py [--events N] [--seed S] [--repeat R]
"""

from __future__ import annotations

import argparse
import random
import time

from isrcheck.reference_impl.broker_config import BrokerConfig
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.release import ClusterConfig, profile_named
from isrcheck.reference_impl.rpc import HEARTBEAT, HEARTBEAT_RESPONSE, REGISTRATION, REGISTRATION_RESPONSE

TARGET = 20_000
ORDERED = {HEARTBEAT, HEARTBEAT_RESPONSE, REGISTRATION, REGISTRATION_RESPONSE}


def build() -> Cluster:
    profile = profile_named("4.1")
    config = ClusterConfig.for_profile(profile, min_insync_replicas=2, broker_session_timeout_ms=1000)
    cluster = Cluster(profile, config, BrokerConfig.fast())
    cluster.start([1, 2, 3])
    cluster.create_topic("bench", [[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    cluster.settle()
    return cluster


def workload(cluster: Cluster, rng: random.Random, events: int) -> int:
    """Run until `events` scheduler events have happened; returns the number of produce calls."""
    produced = 0
    goal = cluster.events + events
    down: int | None = None
    while cluster.events < goal:
        roll = rng.random()
        if roll < 0.04:
            cluster.produce("bench", rng.randrange(3), rng.choice((-1, -1, 1)), rng.randint(1, 5))
            produced += 1
        elif roll < 0.045 and cluster.network.inflight:
            cluster.drop(rng.choice(list(cluster.network.inflight.values())))
        elif roll < 0.048 and cluster.network.inflight:
            message = rng.choice(list(cluster.network.inflight.values()))
            if message.kind not in ORDERED:
                cluster.duplicate(message)
        elif roll < 0.0485:
            if down is None:
                down = rng.choice((2, 3))
                cluster.crash(down)
            else:
                cluster.restart(down)
                down = None
        elif not cluster.step(rng):
            break
    return produced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best = 0.0
    for run in range(args.repeat):
        cluster = build()
        rng = random.Random(args.seed + run)
        before, delivered_before = cluster.events, cluster.deliveries
        start = time.perf_counter()
        produced = workload(cluster, rng, args.events)
        elapsed = time.perf_counter() - start
        events = cluster.events - before
        deliveries = cluster.deliveries - delivered_before
        rate = events / elapsed
        best = max(best, rate)
        print(f"run {run + 1}: {events} events ({deliveries} deliveries, {events - deliveries} timers) in "
              f"{elapsed:.2f} s = {rate:,.0f} events/s ({produced} produce calls, {len(cluster.acked)} records "
              f"acked, logical time {cluster.now_ms} ms)")
    verdict = "meets" if best >= TARGET else "MISSES"
    print(f"best: {best:,.0f} scheduler events/s on one core — {verdict} the {TARGET:,}/s target")


if __name__ == "__main__":
    main()
