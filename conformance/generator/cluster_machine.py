"""The cluster-level interleaving generator: workload (produce), the network (scheduler events in
an order Hypothesis draws, drops, duplicates, holds), faults (crashes with and without data loss,
restarts, controlled shutdown, controller fail-over, metadata lag) and time, then a heal phase
that checks liveness (P-LIVE).

Draws read the *reference* cluster only. The fault model is the one the reference promises to
survive (conformance/properties/schedule.py): data-losing crashes only with eligible leader
replicas on, and only while no other broker that lost data is still missing acknowledged records.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from adapters.reference_cluster import ReferenceClusterTarget
from conformance.engine.run_context import RunContext
from conformance.generator.controller_machine import bits, step
from conformance.properties.schedule import Generator, ScheduleConfig
from reference_impl.broker_config import BrokerConfig
from reference_impl.cluster import LOSE_DISK, LOSE_NONE, LOSE_UNFLUSHED, ORDERED_KINDS, Cluster
from reference_impl.rpc import CONTROLLER_NODE

BROKERS = (1, 2, 3)
TOPIC = "t"
PARTITIONS = 2
CLUSTER_CONFIG: dict[str, Any] = {"min_insync_replicas": 2, "broker_session_timeout_ms": 1000}
"""Short sessions and min.insync.replicas 2 of 3: fencing and the acks=all promise both in play."""


def engine_cluster(**options: Any) -> ReferenceClusterTarget:
    """The simulated cluster as the engine drives it: unsettled (the machine moves the network),
    with the 1/10-scale broker timings that fit CLUSTER_CONFIG's one-second sessions, and a
    livelock declared after 20,000 events without quiet (a healthy heal needs a few hundred)."""
    return ReferenceClusterTarget(settle=False, broker_config=BrokerConfig.fast(), quiescence_limit=20_000, **options)


class ClusterMachine(RuleBasedStateMachine):
    context: ClassVar[RunContext]

    def __init__(self) -> None:
        super().__init__()
        self.run = self.context.start_run()
        reference = self.run.reference
        assert isinstance(reference, ReferenceClusterTarget)
        self.reference: Cluster = reference.cluster
        self.faults = Generator(self.reference, random.Random(0), ScheduleConfig(release=self.context.release))

    def send(self, op: str, args: dict[str, Any]) -> None:
        self.context.execute(self.run, step(op, args))

    def alive(self) -> list[int]:
        return [b for b, p in sorted(self.reference.brokers.items()) if p.alive]

    def down(self) -> list[int]:
        return [b for b, p in sorted(self.reference.brokers.items()) if not p.alive]

    @initialize()
    def start_cluster(self) -> None:
        for broker in BROKERS:
            self.send("register_broker", {"broker": broker})
            self.send("unfence_broker", {"broker": broker})
        assignment = [list(BROKERS[p:] + BROKERS[:p]) for p in range(PARTITIONS)]
        self.send("create_topic", {"topic": TOPIC, "assignment": assignment})
        self.send("events", {"seed": 0, "count": 200})

    @rule(seed=st.integers(0, 2**16 - 1), count=st.integers(1, 24))
    def events(self, seed: int, count: int) -> None:
        """`count` scheduler events: mostly the oldest message, sometimes any, or the next timer."""
        self.send("events", {"seed": seed, "count": count})

    @rule(choice=st.integers(0, 2**6 - 1))
    def produce(self, choice: int) -> None:
        partition, acks, records = bits(choice, 0, 1), bits(choice, 1, 2), bits(choice, 3, 2) + 1
        self.send("produce", {"topic": TOPIC, "partition": partition, "acks": 1 if acks == 3 else "all",
                              "records": records})

    @rule(ms=st.sampled_from((10, 50, 200, 500, 1000, 2500)))
    def tick(self, ms: int) -> None:
        self.send("tick", {"ms": ms})

    @precondition(lambda self: self.reference.network.inflight)
    @rule(pick=st.integers(0, 255), duplicate=st.booleans())
    def lose_or_repeat_a_message(self, pick: int, duplicate: bool) -> None:
        """Drop (or duplicate) one in-flight message, chosen by its position."""
        messages = list(self.reference.network.inflight.values())
        if duplicate:
            messages = [m for m in messages if m.kind not in ORDERED_KINDS]
            if not messages:
                return
        message = messages[pick % len(messages)]
        self.send("duplicate" if duplicate else "drop",
                  {"kind": message.kind, "from": message.src, "to": message.dst, "count": 1})

    @rule(pair=st.integers(0, 11), release=st.booleans())
    def partition_the_network(self, pair: int, release: bool) -> None:
        """Hold (or release) every message on one directed link, brokers and controller."""
        nodes: list[int | str] = [*BROKERS, CONTROLLER_NODE]
        links = [(a, b) for a in nodes for b in nodes if a != b]
        src, dst = links[pair % len(links)]
        self.send("release" if release else "hold", {"from": src, "to": dst})

    @precondition(lambda self: len([p for p in self.reference.brokers.values() if p.alive]) > 1)
    @rule(pick=st.integers(0, 2), lossy=st.integers(0, 3))
    def crash(self, pick: int, lossy: int) -> None:
        alive = self.alive()
        broker = alive[pick % len(alive)]
        lose = LOSE_NONE
        if lossy and self.faults.loss_allowed():
            lose = LOSE_UNFLUSHED if lossy < 3 else LOSE_DISK
            self.faults.lossy.add(broker)
        self.send("crash", {"broker": broker, "lose": lose})

    @precondition(lambda self: any(not p.alive for p in self.reference.brokers.values()))
    @rule(pick=st.integers(0, 2))
    def restart(self, pick: int) -> None:
        down = self.down()
        self.send("restart", {"broker": down[pick % len(down)]})

    @rule(pick=st.integers(0, 2))
    def controlled_shutdown(self, pick: int) -> None:
        running = [b for b in self.alive() if self.reference.brokers[b].status == "running"]
        if len(running) > 1:
            self.send("controlled_shutdown", {"broker": running[pick % len(running)]})

    @rule(zombie=st.booleans())
    def fail_over_controller(self, zombie: bool) -> None:
        self.send("fail_over_controller", {"zombie": zombie})

    @rule(pick=st.integers(0, 2), sync=st.booleans())
    def metadata_lag(self, pick: int, sync: bool) -> None:
        """Stop (or resume) a broker's metadata replication: its cache falls behind the controller."""
        alive = self.alive()
        if not alive:
            return
        broker = alive[pick % len(alive)]
        self.send("sync_metadata" if sync else "lag_metadata", {"broker": broker})

    @rule(pick=st.integers(0, 2))
    def flush(self, pick: int) -> None:
        alive = self.alive()
        if alive:
            self.send("flush", {"broker": alive[pick % len(alive)]})

    def teardown(self) -> None:
        try:
            if not self.run.stopped:
                self.send("heal", {"restart": True, "probe": True})
        finally:
            self.context.finish_run(self.run)
