"""The cluster-level interleaving generator: workload (produce), the network (scheduler events in
an order Hypothesis draws, drops, duplicates, holds), faults (crashes with and without data loss,
restarts, controlled shutdown, controller fail-over, metadata lag) and time, then a heal phase
that checks liveness (P-LIVE).

Draws read the *reference* cluster only. The fault model is the one the reference promises to
survive (conformance/generator/schedule.py): data-losing crashes only with eligible leader
replicas on, and only while no other broker that lost data is still missing acknowledged records.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule
from isrcheck.conformance.generator.controller_machine import bits, step
from isrcheck.conformance.generator.driver import MachineDriver
from isrcheck.conformance.generator.schedule import Generator, ScheduleConfig
from isrcheck.reference_impl.cluster import LOSE_DISK, LOSE_NONE, LOSE_UNFLUSHED, ORDERED_KINDS, Cluster
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.rpc import (
    ALTER_PARTITION,
    ALTER_PARTITION_RESPONSE,
    FETCH,
    FETCH_RESPONSE,
    HEARTBEAT,
)

BROKERS = (1, 2, 3)
TOPIC = "t"
PARTITIONS = 2
CLUSTER_CONFIG: dict[str, Any] = {"min_insync_replicas": 2, "broker_session_timeout_ms": 1000}
"""Short sessions and min.insync.replicas 2 of 3: fencing and the acks=all promise both in play."""
TICKS = (50, 250, 1000, 3000, 6000)
HOLDS: tuple[Selector, ...] = (
    *(Selector(FETCH, broker, None) for broker in BROKERS),
    *(Selector(FETCH_RESPONSE, None, broker) for broker in BROKERS),
    *(Selector(HEARTBEAT, broker, None) for broker in BROKERS),
    Selector(ALTER_PARTITION, None, None),
    Selector(ALTER_PARTITION_RESPONSE, None, None),
)
"""What a fault holds back: one follower's fetches, the answers to one follower, one broker's
heartbeats, or every ISR proposal or every answer to one. Few choices, each meaningful: the bugs
in bugs.md hide in a follower that stops fetching while its leader's proposal waits, and a
machine choosing among every directed link almost never builds that."""
ACTION_WEIGHTS = (
    ("events", 16), ("produce", 4), ("tick", 4), ("drop", 1), ("duplicate", 1), ("hold", 3), ("release", 2),
    ("crash", 1), ("restart", 2), ("controlled_shutdown", 1), ("fail_over_controller", 1), ("lag_metadata", 1),
    ("sync_metadata", 1), ("flush", 1), ("fence", 1), ("elect_preferred", 1),
)
"""Mostly progress (message delivery, produce, time), some faults: the proportions of the seeded
random schedules (conformance/generator/schedule.py), which find bugs that a uniform mix of
rules starves of progress. `events` delivers up to four messages, so it weighs a quarter."""
ACTIONS = tuple(name for name, weight in ACTION_WEIGHTS for _ in range(weight))


def selector_args(chosen: Selector) -> dict[str, Any]:
    fields = {"kind": chosen.kind, "from": chosen.src, "to": chosen.dst}
    return {name: value for name, value in fields.items() if value is not None}


class ClusterMachine(RuleBasedStateMachine):
    context: ClassVar[MachineDriver]

    def __init__(self) -> None:
        super().__init__()
        self.run = self.context.start_run()
        self.restart_on_heal = True
        self.reference: Cluster = self.run.reference.cluster
        self.faults = Generator(self.reference, random.Random(0), ScheduleConfig(release=self.context.release))

    def send(self, op: str, args: dict[str, Any]) -> None:
        self.context.execute(self.run, step(op, args))

    def alive(self) -> list[int]:
        return [b for b, p in sorted(self.reference.brokers.items()) if p.alive]

    def down(self) -> list[int]:
        return [b for b, p in sorted(self.reference.brokers.items()) if not p.alive]

    @initialize(restart_on_heal=st.booleans())
    def start_cluster(self, restart_on_heal: bool) -> None:
        """Three brokers, one topic; how the run will end is drawn here: a heal that restarts the
        stopped brokers, or one that leaves them down (a shut-down replica must not hold the HW
        back — B23 — which a restart would hide)."""
        self.restart_on_heal = restart_on_heal
        for broker in BROKERS:
            self.send("register_broker", {"broker": broker})
            self.send("unfence_broker", {"broker": broker})
        assignment = [list(BROKERS[p:] + BROKERS[:p]) for p in range(PARTITIONS)]
        self.send("create_topic", {"topic": TOPIC, "assignment": assignment})
        self.send("events", {"seed": 0, "count": 200})

    @rule(action=st.sampled_from(ACTIONS), value=st.integers(0, 2**16 - 1))
    def act(self, action: str, value: int) -> None:
        """One action of the weighted mix, its parameters unpacked from `value`. A single rule
        carries the weights (Hypothesis chooses among rules uniformly, which made faults as common
        as progress and left most runs stalled); shrinking moves towards `events`, ACTIONS' first."""
        getattr(self, action)(value)

    def events(self, value: int) -> None:
        """1–4 scheduler events: mostly the oldest message, sometimes any, or the next timer."""
        self.send("events", {"seed": value, "count": 1 + bits(value, 0, 2)})

    def produce(self, value: int) -> None:
        """1–8 records, acks=all three times in four: more than one fetch response holds (four
        records with BrokerConfig.fast), so a lagging follower catches up over several fetches."""
        acks: int | str = 1 if bits(value, 1, 2) == 3 else "all"
        self.send("produce", {"topic": TOPIC, "partition": bits(value, 0, 1) % PARTITIONS, "acks": acks,
                              "records": 1 + bits(value, 3, 3)})

    def tick(self, value: int) -> None:
        self.send("tick", {"ms": TICKS[value % len(TICKS)]})

    def drop(self, value: int) -> None:
        self.lose_or_repeat(value, duplicate=False)

    def duplicate(self, value: int) -> None:
        self.lose_or_repeat(value, duplicate=True)

    def lose_or_repeat(self, value: int, duplicate: bool) -> None:
        """Drop (or duplicate) one in-flight message, chosen by its position."""
        messages = list(self.reference.network.inflight.values())
        if duplicate:
            messages = [m for m in messages if m.kind not in ORDERED_KINDS]
        if not messages:
            return
        message = messages[value % len(messages)]
        self.send("duplicate" if duplicate else "drop",
                  {"kind": message.kind, "from": message.src, "to": message.dst, "count": 1})

    def hold(self, value: int) -> None:
        self.send("hold", selector_args(HOLDS[value % len(HOLDS)]))

    def release(self, value: int) -> None:
        """Release one hold, or (one time in four) all of them."""
        holds = self.reference.network.holds
        if holds:
            everything = bits(value, 0, 2) == 0
            self.send("release", {} if everything else selector_args(holds[(value >> 2) % len(holds)]))

    def fence(self, value: int) -> None:
        """The controller fences a broker (as on a missed session); its next heartbeat unfences it."""
        self.send("fence_broker", {"broker": BROKERS[value % len(BROKERS)]})

    def elect_preferred(self, value: int) -> None:
        self.send("elect_leaders", {"type": "preferred", "partitions": [[TOPIC, value % PARTITIONS]]})

    def crash(self, value: int) -> None:
        alive = self.alive()
        if len(alive) < 2:
            return
        broker = alive[value % len(alive)]
        lose = LOSE_NONE
        if bits(value, 2, 1) and self.faults.loss_allowed():
            lose = LOSE_DISK if bits(value, 3, 1) else LOSE_UNFLUSHED
            self.faults.lossy.add(broker)
        self.send("crash", {"broker": broker, "lose": lose})

    def restart(self, value: int) -> None:
        down = self.down()
        if down:
            self.send("restart", {"broker": down[value % len(down)]})

    def controlled_shutdown(self, value: int) -> None:
        running = [b for b in self.alive() if self.reference.brokers[b].status == "running"]
        if len(running) > 1:
            self.send("controlled_shutdown", {"broker": running[value % len(running)]})

    def fail_over_controller(self, value: int) -> None:
        self.send("fail_over_controller", {"zombie": bool(value % 2)})

    def lag_metadata(self, value: int) -> None:
        """Stop a broker's metadata replication: its cache falls behind the controller."""
        alive = self.alive()
        if alive:
            self.send("lag_metadata", {"broker": alive[value % len(alive)]})

    def sync_metadata(self, value: int) -> None:
        """Let a lagging broker catch up: fully (half the time), or a few metadata records only, so
        it applies an old state of the log after the leader has moved on (appendix D4, D6)."""
        lagging = sorted(self.reference.metadata_holds)
        if not lagging:
            return
        broker = lagging[value % len(lagging)]
        process = self.reference.brokers.get(broker)
        if bits(value, 2, 1) or process is None or not process.alive:
            self.send("sync_metadata", {"broker": broker})
            return
        offset = min(process.cache.offset + 1 + bits(value, 3, 2), self.reference.metadata_end())
        self.send("sync_metadata", {"broker": broker, "offset": offset})

    def flush(self, value: int) -> None:
        alive = self.alive()
        if alive:
            self.send("flush", {"broker": alive[value % len(alive)]})

    def teardown(self) -> None:
        try:
            if not self.run.stopped:
                self.send("heal", {"restart": self.restart_on_heal, "probe": True})
        finally:
            self.context.finish_run(self.run)
