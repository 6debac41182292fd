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
from isrcheck.conformance.generator.aimed_schedules import LAG_MS, AimedSchedules
from isrcheck.conformance.generator.controller_machine import bits
from isrcheck.conformance.generator.driver import MachineDriver
from isrcheck.conformance.generator.schedule import Generator, ScheduleConfig
from isrcheck.conformance.generator.targeting import TARGET
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
"""Partitions of the topic a run starts with unless the draw says otherwise (`PARTITION_COUNTS`)."""
PARTITION_COUNTS = (PARTITIONS, 1, 3, 4)
"""What `start_cluster` draws from, the old shape first (shrinking moves there): a controller or
leader that misbehaves only on a third or fourth partition is exercised too."""
MAX_PARTITIONS = 4
"""`create_partitions` grows the topic up to this many partitions."""
SET_UP_STEPS = 2 * len(BROKERS) + 2
"""The steps every run starts with (`start_cluster`): each broker registered and unfenced, the
topic created, its leaders settled."""
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
    ("events", 15), ("slow_follower", 1), ("produce", 4), ("tick", 4), ("drop", 1), ("duplicate", 1), ("hold", 3),
    ("release", 2), ("crash", 1), ("restart", 2), ("controlled_shutdown", 1), ("fail_over_controller", 1),
    ("lag_metadata", 1), ("sync_metadata", 1), ("flush", 1), ("fence", 1), ("elect_preferred", 1), ("window", 4),
    ("create_partitions", 1), ("diverge", 2), ("stale_metadata", 2),
    ("reboot_in_flight", 2), ("late_refusal", 2), ("behind_new_leader", 2), ("reassign", 1),
    ("stale_proposal", 2), ("held_expansion", 2), ("last_members_lost", 1),
)
"""Mostly progress (message delivery, produce, time), some faults: the proportions of the seeded
random schedules (conformance/generator/schedule.py), which find bugs that a uniform mix of
rules starves of progress. `events` delivers up to four messages, so it weighs a quarter.
`slow_follower` took the sixteenth of `events`' slots (index 15), so the tuple keeps its length and
every other index its action: a seed draws what it drew before except where it drew that slot."""
ACTIONS = tuple(name for name, weight in ACTION_WEIGHTS for _ in range(weight))
SWARM_KINDS = (
    "drop", "duplicate", "hold", "crash", "restart", "controlled_shutdown", "fail_over_controller",
    "lag_metadata", "fence", "elect_preferred", "window", "create_partitions", "diverge", "stale_metadata",
    "reboot_in_flight", "late_refusal", "behind_new_leader", "reassign", "stale_proposal", "held_expansion",
    "last_members_lost",
)
"""The fault kinds swarm testing switches off (Groce et al., "Swarm testing", ISSTA 2012): each run
draws a subset of them to leave out, and a left-out action delivers messages instead. A run without
drops, crashes and fencing keeps a held proposal in flight long enough for the rest to act on it;
a mix where every fault is always possible breaks most windows before anything uses them."""
AIMED = frozenset({"diverge", "stale_metadata", "reboot_in_flight", "late_refusal", "behind_new_leader",
                   "stale_proposal", "held_expansion", "last_members_lost", "slow_follower"})
"""The actions of conformance/generator/aimed_schedules.py."""
IN_WINDOW = ("lag_follower", "lag_follower", "catch_up_follower", "reboot_follower", "shutdown_follower",
             "fence_follower", "lag_leader_metadata", "produce")
"""What `window` does to the partition while its ISR proposal waits in flight (`in_window`)."""


def selector_args(chosen: Selector) -> dict[str, Any]:
    fields = {"kind": chosen.kind, "from": chosen.src, "to": chosen.dst}
    return {name: value for name, value in fields.items() if value is not None}


IDEAS = frozenset({"swarm", "window", "in_window", "aimed", TARGET})
"""The generation ideas beyond the weighted mix, each of which bench/detect.py can switch off to
measure it against the others on the same seeds: swarm testing (SWARM_KINDS), the `window` fault
schedule aimed at an in-flight AlterPartition, what it does inside that window (IN_WINDOW, with
later writes and crashes favouring the window's partition), the schedules aimed at rarer
interleavings (AIMED, conformance/generator/aimed_schedules.py), and targeted search on protocol
distances (conformance/generator/targeting.py, applied by the campaign; off unless switched on:
measured, it has not yet found a mutant sooner — README, "Generation ideas, measured")."""


class ClusterMachine(AimedSchedules, RuleBasedStateMachine):
    context: ClassVar[MachineDriver]
    ideas: ClassVar[frozenset[str]] = IDEAS - {TARGET}
    left_out: ClassVar[frozenset[str]] = frozenset()
    """Actions that always deliver messages instead (as a swarm leaves them out): a measurement
    switches one off to show what it finds that the rest does not (bench/mutated_reference.py
    --leave-out)."""

    def __init__(self) -> None:
        super().__init__()
        self.run = self.context.start_run()
        self.restart_on_heal = True
        self.disabled: frozenset[str] = frozenset()
        self.focus: int | None = None
        """The partition the last `window` aimed at: later writes and crashes favour it."""
        self.reference: Cluster = self.run.reference.cluster
        self.faults = Generator(self.reference, random.Random(0), ScheduleConfig(release=self.context.release))

    def alive(self) -> list[int]:
        return [b for b, p in sorted(self.reference.brokers.items()) if p.alive]

    def down(self) -> list[int]:
        return [b for b, p in sorted(self.reference.brokers.items()) if not p.alive]

    @initialize(restart_on_heal=st.booleans(), shape=st.integers(0, 2**(2 + len(SWARM_KINDS)) - 1))
    def start_cluster(self, restart_on_heal: bool, shape: int) -> None:
        """Three brokers, one topic; how the run will end is drawn here: a heal that restarts the
        stopped brokers, or one that leaves them down (a shut-down replica must not hold the HW
        back — B23 — which a restart would hide). `shape` packs the topic's partition count and
        the run's swarm: the fault kinds it leaves out (0: the old two partitions, every kind on)."""
        self.restart_on_heal = restart_on_heal
        partitions = PARTITION_COUNTS[bits(shape, 0, 2)]
        if "swarm" in self.ideas:
            self.disabled = frozenset(kind for i, kind in enumerate(SWARM_KINDS) if bits(shape, 2 + i, 1))
        if "window" not in self.ideas:
            self.disabled |= {"window"}
        if "aimed" not in self.ideas:
            self.disabled |= AIMED
        for broker in BROKERS:
            self.send("register_broker", {"broker": broker})
            self.send("unfence_broker", {"broker": broker})
        self.send("create_topic", {"topic": TOPIC, "assignment": [rotation(p) for p in range(partitions)]})
        self.send("events", {"seed": 0, "count": 200})

    @rule(action=st.sampled_from(ACTIONS), value=st.integers(0, 2**16 - 1))
    def act(self, action: str, value: int) -> None:
        """One action of the weighted mix, its parameters unpacked from `value`. A single rule
        carries the weights (Hypothesis chooses among rules uniformly, which made faults as common
        as progress and left most runs stalled); shrinking moves towards `events`, ACTIONS' first.
        An action the run's swarm left out delivers messages instead (same draws, so shrinking
        the swarm does not reshuffle the other actions)."""
        if (action in self.disabled or action in self.left_out
                or not self.context.supports(OPERATION.get(action, action))):
            action = "events"
        getattr(self, action)(value)

    def partition_count(self) -> int:
        return sum(1 for topic, _ in self.reference.controller.partitions if topic == TOPIC)

    def partition(self, value: int) -> int:
        return value % max(1, self.partition_count())

    def events(self, value: int) -> None:
        """1–4 scheduler events: mostly the oldest message, sometimes any, or the next timer."""
        self.send("events", {"seed": value, "count": 1 + bits(value, 0, 2)})

    def produce(self, value: int) -> None:
        """1–8 records, acks=all three times in four: more than one fetch response holds (four
        records with BrokerConfig.fast), so a lagging follower catches up over several fetches."""
        acks: int | str = 1 if bits(value, 1, 2) == 3 else "all"
        partition = self.partition(bits(value, 0, 1) | bits(value, 6, 2) << 1)
        if self.focus is not None and bits(value, 8, 1):
            partition = self.focus
        self.send("produce", {"topic": TOPIC, "partition": partition, "acks": acks, "records": 1 + bits(value, 3, 3)})

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
        self.send("elect_leaders", {"type": "preferred", "partitions": [[TOPIC, self.partition(value)]]})

    def create_partitions(self, value: int) -> None:
        """Grow the topic by one or two partitions (up to MAX_PARTITIONS): a partition created
        mid-run starts with whatever the brokers' state is then (fenced, shut down, lagging)."""
        existing = self.partition_count()
        count = min(MAX_PARTITIONS, existing + 1 + bits(value, 0, 1))
        if count <= existing or self.reference.zombie is not None:
            # A deposed controller still answering (fail_over_controller's zombie) does not know a
            # partition created after it was deposed and answers its leader UNKNOWN_TOPIC_ID, which
            # leaves the proposal pending until metadata changes (leader.md §9) — and after the
            # heal nothing changes: outside the fault model the reference survives (P-LIVE).
            return
        assignment = [rotation(p + bits(value, 1, 2)) for p in range(existing, count)]
        self.send("create_partitions", {"topic": TOPIC, "count": count, "assignment": assignment})

    def reassign(self, value: int) -> None:
        """Move a partition off one of its three replicas, or back onto the one it left
        (AlterPartitionReassignments): the removed replica keeps fetching until its metadata
        says otherwise and its leader, which no longer tracks it, tells it to retry (leader.md §4,
        KAFKA-13837); the ISR may hold a replica the assignment no longer lists (§6, KAFKA-9672);
        a replica added back starts from wherever its log was left."""
        partition = self.partition(value)
        current = self.reference.controller.partitions.get((TOPIC, partition))
        if current is None or self.reference.zombie is not None or current.adding or current.removing:
            # A deposed controller still answering (see create_partitions) would judge proposals
            # against the old assignment; a reassignment in progress is left to complete.
            return
        replicas = list(current.replicas)
        if len(replicas) < len(BROKERS):
            self.send("reassign", {"topic": TOPIC, "partition": partition,
                                   "replicas": [*replicas, next(b for b in BROKERS if b not in replicas)]})
            return
        removed = replicas.pop(bits(value, 2, 2) % len(replicas))
        self.send("reassign", {"topic": TOPIC, "partition": partition, "replicas": replicas})
        leader = self.reference.brokers.get(current.leader)
        if bits(value, 4, 1) and removed != current.leader and leader is not None and leader.alive:
            # half the time the replica comes straight back while its leader's metadata lags:
            # it learns of itself first and fetches from a leader that does not track it yet
            # (KAFKA-13837)
            self.send("tick", {"ms": TICKS[2]})
            self.send("lag_metadata", {"broker": current.leader})
            self.send("reassign", {"topic": TOPIC, "partition": partition, "replicas": list(current.replicas)})

    def window(self, value: int) -> None:
        """A fault schedule aimed at an in-flight AlterPartition: hold every ISR proposal (or every
        answer to one), then make one follower of a partition's leader leave the ISR (hold its
        fetches past the lag time: the leader proposes the shrink) or rejoin it (release them:
        the leader proposes the expansion; a follower still in the ISR is first made to leave it,
        unheld). The proposal then waits in flight while the actions that follow act around it —
        where B01, B08, D4, D9 and their kin hide, and where a machine stringing these steps
        together from single draws almost never arrives."""
        key = (TOPIC, self.partition(bits(value, 0, 2)))
        state = self.reference.controller.partitions.get(key)
        if state is None or state.leader < 0:
            return
        followers = [r for r in state.replicas if r != state.leader]
        if not followers:
            return
        follower = followers[bits(value, 2, 1) % len(followers)]
        if self.reference.network.holds or self.reference.metadata_holds:
            # from a clean network: a window behind older holds (the other follower's fetches
            # held too, the leader's metadata frozen) has nothing to race against
            self.send("release", {})
        held = HOLDS[-1] if bits(value, 3, 1) else HOLDS[-2]  # the answers, or the proposals
        fetches = selector_args(Selector(FETCH, follower, None))
        expand = follower not in state.isr or bits(value, 15, 1)
        if expand and follower in state.isr:  # out of the ISR first, its shrink committed
            self.fall_behind(key[1], fetches)
        self.send("hold", selector_args(held))
        if held.kind == ALTER_PARTITION_RESPONSE:
            # the leader learns a commit from the metadata log as well as from the answer (§10):
            # an answer held back keeps the proposal pending only while its metadata lags too
            self.send("lag_metadata", {"broker": state.leader})
        if expand:
            self.send("release", fetches)
            self.send("tick", {"ms": TICKS[1]})
        else:
            self.fall_behind(key[1], fetches)
        self.focus = key[1] if "in_window" in self.ideas else None
        if "in_window" in self.ideas:
            self.in_window(IN_WINDOW[bits(value, 4, 3)], state.leader, follower, held, value >> 7)

    def in_window(self, what: str | None, leader: int, follower: int, held: Selector, value: int) -> None:
        """What happens to the partition while its proposal waits (IN_WINDOW): the follower falls
        behind again (and a client writes what it lacks) or catches up, crashes (losing data where
        the fault model allows) and comes back as a new incarnation before the proposal arrives,
        shuts down, is fenced; the leader's metadata freezes; a client writes to the partition.
        The rest (the answer arriving, the leader crashing) the actions that follow provide."""
        fetches = selector_args(Selector(FETCH, follower, None))
        alive = self.reference.brokers.get(follower)
        if what == "lag_follower":  # long enough not to count as caught up any more (B25's rule)
            self.send("hold", fetches)
            self.send("tick", {"ms": LAG_MS})
            self.send("produce", {"topic": TOPIC, "partition": self.focus or 0, "acks": "all", "records": 2})
        elif what == "catch_up_follower":
            self.send("release", fetches)
        elif what == "reboot_follower" and alive is not None and alive.alive:
            lose = LOSE_NONE
            if self.faults.loss_allowed():  # mostly the whole disk: nothing of what it caught up survives
                lose = LOSE_UNFLUSHED if bits(value, 0, 2) == 0 else LOSE_DISK
                self.faults.lossy.add(follower)
            self.send("hold", fetches)
            self.send("crash", {"broker": follower, "lose": lose})
            self.send("tick", {"ms": TICKS[2]})
            self.send("restart", {"broker": follower})
            # the new incarnation registers and is unfenced, its fetches still held; then the
            # held proposal (or its answer), which named the old one, arrives (KIP-903, KAFKA-14139)
            self.send("tick", {"ms": TICKS[2]})
            self.send("release", selector_args(held))
        elif what == "shutdown_follower" and alive is not None and alive.status == "running":
            self.send("controlled_shutdown", {"broker": follower})
        elif what == "fence_follower":
            self.send("fence_broker", {"broker": follower})
        elif what == "lag_leader_metadata":
            self.send("lag_metadata", {"broker": leader})
        elif what == "produce":
            self.send("produce", {"topic": TOPIC, "partition": self.focus or 0, "acks": "all",
                                  "records": 1 + bits(value, 1, 2)})

    def crash(self, value: int) -> None:
        alive = self.alive()
        if len(alive) < 2:
            return
        broker = alive[value % len(alive)]
        focused = None if self.focus is None else self.reference.controller.partitions.get((TOPIC, self.focus))
        if focused is not None and focused.leader in alive and bits(value, 8, 1):
            broker = focused.leader  # the leader of the partition a window aimed at: its proposal's fate
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


OPERATION = {"events": "events", "fence": "fence_broker", "elect_preferred": "elect_leaders", "window": "hold",
             "diverge": "crash", "stale_metadata": "sync_metadata", "reboot_in_flight": "duplicate",
             "late_refusal": "fence_broker", "behind_new_leader": "deliver", "stale_proposal": "fence_broker",
             "held_expansion": "hold", "last_members_lost": "crash", "slow_follower": "deliver"}
"""The step operation an action sends, where the names differ (a target may refuse an operation)."""


def rotation(partition: int) -> list[int]:
    """Partition p's replicas: the brokers rotated by p, so that each broker leads some partition."""
    start = partition % len(BROKERS)
    return list(BROKERS[start:] + BROKERS[:start])
