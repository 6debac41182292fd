"""Fault schedules aimed at interleavings that a machine stringing single draws together almost
never builds (issue 16: reach the rare interleavings by design): each is one action of the
cluster machine (`ClusterMachine`), a short fixed sequence of ordinary steps whose targets
(partition, broker, what happens in the window it opens) are drawn relative to the reference's
current state, so that shrinking can delete it whole.

* `diverge` — a leader's records that no follower has, then a new leader: the old leader's first
  Fetch is answered with a diverging epoch (truncation on fetch, KIP-279 / KAFKA-10554), and
  something happens to it while that answer is in flight (`DIVERGE_WINDOW`).
* `reboot_in_flight` — a follower is brought one answer with a write and crashes at once, its
  next Fetch still on the wire; that Fetch of the old incarnation arrives after the new
  incarnation's (KIP-903 / KAFKA-15221).
* `stale_metadata` — a leader whose metadata lags learns its ISR changes from AlterPartition
  answers, then applies the metadata log only up to an older change of the partition
  (leader.md §10: the partition epoch, not the log position, decides what is current).
* `behind_new_leader` — every Fetch answer is held; the leader's records reach one follower
  without the HW that acknowledges them, the third replica stops at the HW and leaves the ISR,
  the leader crashes and that follower leads with a HW behind its log end, then meets the third
  replica at the old HW (leader.md §5 condition 3: in sync needs the leader-epoch start offset
  too, KAFKA-7128).
* `late_refusal` — a proposal is refused (its new member was fenced after the leader's metadata
  froze) and the refusal is held while newer metadata replaces the proposal: another member
  leaves the ISR and the leader catches up; then the refusal arrives, alone in its step
  (leader.md §9 step 1: an answer for a replaced proposal is ignored; reverting to the
  proposal's base would leave the leader with an ISR its partition epoch never had, P-LEAD, and
  bring back the member that left).
* `stale_proposal` — a proposal waits in flight while the controller removes another member
  (fenced) and the leader's HW moves past that member's log end; the member is unfenced again,
  and then the old proposal, which still names it, arrives (controller.md §2: the partition-epoch
  compare-and-set refuses it; bugs.md appendix 1).
* `held_expansion` — the leader proposes a follower back into the ISR and the proposal waits
  while the follower falls behind again and writes come; it arrives with the follower below
  the HW unless the pending member held the HW back (KIP-497: an expansion counts at once) —
  and no shrink may be proposed while it waits (leader.md §6, bugs.md B08b and appendix 9).
* `shutdown_across_failover` (half of `stale_metadata`'s runs) — a follower in controlled
  shutdown, its heartbeats held, is proposed back by a leader whose metadata never showed the
  shutdown, after the controller failed over (KIP-841 part 1: the refusal must survive it, B04).
* `last_members_lost` — a replica falls out of the ISR and stays behind while an acks=all write
  is acknowledged; then every ISR member crashes, the leader last, and the replica behind is the
  only one alive (an election outside the ISR nobody allowed loses the write: bugs.md B14).
* `slow_follower` — a follower keeps fetching but never reaches the leader's log end: writes
  come faster than its fetches bring them, for longer than the lag time (leader.md §4, §6:
  lastCaughtUpTime, KAFKA-4485). Every other schedule stops a follower's fetches outright, and
  a fetching follower otherwise reaches the end in the same millisecond.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.generator.controller_machine import bits, step
from isrcheck.conformance.generator.driver import MachineDriver
from isrcheck.conformance.generator.schedule import Generator
from isrcheck.reference_impl.cluster import LOSE_DISK, LOSE_NONE, LOSE_UNFLUSHED, Cluster
from isrcheck.reference_impl.partition import Partition
from isrcheck.reference_impl.rpc import ALTER_PARTITION, ALTER_PARTITION_RESPONSE, FETCH, FETCH_RESPONSE, HEARTBEAT
from isrcheck.reference_impl.state import PartitionChangeRecord, PartitionState

TOPIC = "t"
SESSION_EXPIRY_MS = 3000
"""Past the machine's broker session timeout (1000 ms) and the election it causes."""
SETTLE_MS = 1000
"""A restarted broker registers, catches up on metadata, is unfenced and sends its first Fetch."""
LAG_MS = 5000
"""Past BrokerConfig.fast()'s replica.lag.time.max.ms (3000) plus the period of the leader's
isr-expiration task (half of it, leader.md §6): a follower whose fetches are held this long is out
of sync and its leader has proposed the shrink."""
DIVERGE_WINDOW = ("rolling_restart", "rolling_restart", "crash", "lag_metadata", "answer")
"""What happens to the deposed leader while the diverging answer to its first Fetch is on the
wire: a controlled shutdown and restart (KAFKA-14704: a broker that stops fetching never gets to
truncate), a crash, frozen metadata, or nothing (the answer simply arrives)."""

STALE_WINDOW = ("lag_follower", "lag_follower", "produce", "nothing")
"""What follows the stale delivery: the follower that left and rejoined falls behind again
(while its leader may believe it out of the ISR already), a client writes, or nothing."""

LEAVE = ("fence", "fence", "controlled_shutdown", "crash")
"""How `late_refusal`'s other member leaves the ISR while the refusal is held: fenced (it keeps
heartbeating, so it is back at once, its fetches still held), shut down, or crashed."""

SLOW_ROUNDS = 12
SLOW_ROUND_MS = 500
"""`slow_follower`: one Fetch of the follower every half second for six seconds — past
BrokerConfig.fast()'s replica.lag.time.max.ms (3000) plus one isr-expiration period (1500)."""
SLOW_RECORDS = 8
"""Records written each round: twice what one Fetch answer carries (BrokerConfig.fast()'s
replica_fetch_max_records, 4), so the follower's fetch offset falls further behind every round."""

FETCH_WAIT_MS = 250
"""Time for what is in flight to arrive and for every follower to fetch once: BrokerConfig.fast()
fetches every 250 ms when idle and answers replica fetches within 250 ms."""


def fetches_from(broker: int) -> dict[str, Any]:
    return {"kind": FETCH, "from": broker}


class AimedSchedules:
    """The schedules; `ClusterMachine` supplies the driver, the run and the reference cluster."""

    context: MachineDriver
    run: Any
    reference: Cluster
    faults: Generator

    def send(self, op: str, args: dict[str, Any]) -> None:
        self.context.execute(self.run, step(op, args))

    def running(self, broker: int) -> bool:
        process = self.reference.brokers.get(broker)
        return process is not None and process.status == "running"

    def clean_network(self) -> None:
        """Start from no holds and no metadata lag: a schedule behind older holds has nothing to
        race against."""
        if self.reference.network.holds or self.reference.metadata_holds:
            self.send("release", {})

    def fall_behind(self, partition: int, fetches: dict[str, Any]) -> None:
        """A follower stops fetching while the leader appends one record (acks=1: nothing waits on
        it), then the lag time passes: a follower whose log ends where the leader's does stays in
        sync however long it is silent (KAFKA-7152, leader.md §4), so without the record no
        shrink would come."""
        self.send("hold", fetches)
        self.send("produce", {"topic": TOPIC, "partition": partition, "acks": 1, "records": 1})
        self.send("tick", {"ms": LAG_MS})

    def partition_on(self, broker: int, key: tuple[str, int]) -> Partition | None:
        """`key`'s replica on `broker`, if its process is alive and holds one."""
        process = self.reference.brokers.get(broker)
        return None if process is None or not process.alive else process.partitions.get(key)

    def partition_key(self, value: int) -> tuple[str, int]:
        count = sum(1 for topic, _ in self.reference.controller.partitions if topic == TOPIC)
        return TOPIC, value % max(1, count)

    def led_partition(self, value: int) -> tuple[tuple[str, int], PartitionState, list[int]] | None:
        """The partition `value` picks, its controller state and its running ISR followers; None
        unless its leader and at least one ISR follower are running (every schedule here races
        a leader against a follower)."""
        key = self.partition_key(bits(value, 0, 2))
        state = self.reference.controller.partitions.get(key)
        if state is None or state.leader < 0 or not self.running(state.leader):
            return None
        followers = [b for b in state.isr if b != state.leader and self.running(b)]
        return (key, state, followers) if followers else None

    # ------------------------------------------------------------------ diverging epoch

    def diverge(self, value: int) -> None:
        """The leader of a partition appends records (acks=1) that its followers do not fetch,
        crashes, and another ISR member is elected and commits records of its own; the old
        leader restarts with its first Fetch held — that Fetch's answer carries a diverging epoch
        and the new leader's HW, and the old leader must truncate before it believes that HW
        (leader.md §7, §13). Then `DIVERGE_WINDOW` decides what the old leader does while the
        answer is on its way. Half the time the controller first fails over leaving a zombie,
        which every running broker still asks: the new leader's proposals carry a leader epoch
        the zombie never saw, and its partition-level NOT_CONTROLLER must send the leader to the
        active controller (§12, KAFKA-14154; B21L takes it for an ordinary error)."""
        picked = self.led_partition(value)
        if picked is None:
            return
        key, state, _ = picked
        old = state.leader
        self.clean_network()
        if bits(value, 11, 1) and self.context.supports("fail_over_controller"):
            self.send("fail_over_controller", {"zombie": True})
        # no scheduler event runs between the two steps: no follower fetches the records
        self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": 1, "records": 1 + bits(value, 2, 2)})
        self.send("crash", {"broker": old, "lose": LOSE_NONE})
        self.send("tick", {"ms": SESSION_EXPIRY_MS})
        self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": "all", "records": 1 + bits(value, 4, 2)})
        self.send("hold", fetches_from(old))
        self.send("restart", {"broker": old})
        self.send("tick", {"ms": SETTLE_MS})
        what = DIVERGE_WINDOW[bits(value, 6, 3) % len(DIVERGE_WINDOW)]
        if what == "rolling_restart" and self.running(old):
            self.send("controlled_shutdown", {"broker": old})
            self.send("release", fetches_from(old))
            self.send("tick", {"ms": SETTLE_MS})
            process = self.reference.brokers.get(old)
            if process is not None and not process.alive:
                self.send("restart", {"broker": old})
                self.send("tick", {"ms": SETTLE_MS})
            return
        if what == "crash" and self.running(old):
            self.send("release", fetches_from(old))
            self.send("events", {"seed": value, "count": 1 + bits(value, 9, 2)})
            if self.running(old):
                self.send("crash", {"broker": old, "lose": LOSE_NONE})
            return
        if what == "lag_metadata":
            self.send("lag_metadata", {"broker": old})
        self.send("release", fetches_from(old))

    # ------------------------------------------------------------------ stale metadata

    def stale_metadata(self, value: int) -> None:
        """A leader's metadata freezes; one of its followers falls behind (the leader commits the
        shrink through the AlterPartition answer) and catches up again (the expansion, likewise):
        the leader's partition epoch is now two changes ahead of its metadata. The metadata then
        arrives only up to the older of those changes (`older_change`): a leader that applied it
        would take back the ISR without the follower (leader.md §10). `STALE_WINDOW` decides
        what follows. Half the time, when the follower leads a partition elsewhere, the frozen
        metadata serves `shutdown_across_failover` instead."""
        picked = self.led_partition(value)
        if picked is None:
            return
        key, state, followers = picked
        leader = state.leader
        follower = followers[bits(value, 2, 1) % len(followers)]
        fetches = fetches_from(follower)
        if bits(value, 7, 1) and self.leads_with_successor(follower) and self.context.supports("fail_over_controller"):
            self.shutdown_across_failover(key[1], leader, follower)
            return
        self.clean_network()
        self.send("lag_metadata", {"broker": leader})
        self.fall_behind(key[1], fetches)
        self.send("release", fetches)
        self.send("tick", {"ms": SETTLE_MS})
        offset = self.older_change(leader, key)
        if offset is None:
            return
        self.send("sync_metadata", {"broker": leader, "offset": offset})
        what = STALE_WINDOW[bits(value, 3, 2)]
        if what == "lag_follower":
            self.send("hold", fetches)
            self.send("tick", {"ms": LAG_MS})
            self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": 1, "records": 1 + bits(value, 5, 2)})
            self.send("tick", {"ms": SETTLE_MS})
        elif what == "produce":
            self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": "all", "records": 1 + bits(value, 5, 2)})
            self.send("tick", {"ms": SETTLE_MS})
        # The rest of the log arrives. A leader left behind the partition epoch it learned from
        # answers would apply the next record of *equal* epoch over whatever it proposes next,
        # and admit that member below the HW — Kafka's own behaviour (docs/real-kafka.md,
        # "equal-epoch admission"), which P-HWV flags on the reference too: not this schedule's aim.
        self.send("sync_metadata", {"broker": leader})

    def leads_with_successor(self, broker: int) -> bool:
        """Whether `broker` leads a partition another ISR member can take over: its controlled
        shutdown then waits for that move (a broker leading nothing is let go at once, §4.2)."""
        return any(state.leader == broker and len(state.isr) > 1
                   for state in self.reference.controller.partitions.values())

    def shutdown_across_failover(self, partition: int, leader: int, follower: int) -> None:
        """The follower's metadata freezes (so it goes on fetching for an ISR it believes it is
        in), it falls out of the ISR, and the leader's metadata freezes too (so the leader will
        not learn of the shutdown). The follower asks for a controlled shutdown, which waits
        while a broker's metadata lags; its heartbeats are held, and the controller fails over.
        The follower fetches and catches up, and the leader proposes it back: a controller must
        refuse a broker in controlled shutdown even after a fail-over (KIP-841 part 1: 3.3.0
        writes InControlledShutdown into the log; B04 forgets it, the new controller admits the
        broker until its next heartbeat)."""
        fetches = fetches_from(follower)
        self.clean_network()
        self.send("lag_metadata", {"broker": follower})
        self.fall_behind(partition, fetches)
        self.send("lag_metadata", {"broker": leader})
        self.send("controlled_shutdown", {"broker": follower})
        self.send("tick", {"ms": FETCH_WAIT_MS})
        self.send("hold", {"kind": HEARTBEAT, "from": follower})
        self.send("fail_over_controller", {"zombie": False})
        self.send("release", fetches)
        self.send("tick", {"ms": FETCH_WAIT_MS})
        self.send("release", {})
        self.send("tick", {"ms": SETTLE_MS})

    def log_end(self, broker: int, key: tuple[str, int]) -> int:
        partition = self.partition_on(broker, key)
        return -1 if partition is None else partition.log.leo

    def fetched_from(self, leader: int, follower: int, key: tuple[str, int]) -> bool:
        """Whether `leader` has had a Fetch of `key` from `follower` (knows its LEO)."""
        partition = self.partition_on(leader, key)
        state = None if partition is None else partition.remote.get(follower)
        return state is not None and state.log_end_offset >= 0

    def older_change(self, broker: int, key: tuple[str, int]) -> int | None:
        """The offset of the first change of `key` in the metadata `broker` has not applied yet,
        if a later one follows it (else there is nothing older to deliver)."""
        process = self.reference.brokers.get(broker)
        if process is None or not process.alive:
            return None
        reference = self.reference
        changes = [
            offset for offset, record in reference.metadata_records(process.cache.offset, reference.metadata_end())
            if isinstance(record, PartitionChangeRecord) and (record.topic, record.partition) == key
        ]
        return changes[0] if len(changes) > 1 else None

    # ------------------------------------------------------------------ a previous incarnation's Fetch

    def reboot_in_flight(self, value: int) -> None:
        """The answers to a follower are held; it is brought one answer with a write, and its next
        Fetch is held; it crashes at once (losing what it had not flushed, where the fault model
        allows) and restarts as a new incarnation, whose first Fetch is held too. On the wire the
        old incarnation's Fetch goes behind the new one's (a late copy; the original lost): the
        leader sees the new incarnation, then the old one's higher offset (KIP-903, KAFKA-15221:
        a Fetch from an older broker epoch must not count). Optionally another member lags
        meanwhile, holding the HW where the new incarnation can rejoin at once; then everything
        is released. Delivering the one answer and crashing straight after it needs no clock:
        the crash finds the write unflushed whatever the flush timer's phase."""
        picked = self.led_partition(value)
        if picked is None:
            return
        key, state, followers = picked
        leader = state.leader
        follower = followers[bits(value, 2, 1) % len(followers)]
        others = [r for r in state.replicas if r not in (leader, follower)]
        self.clean_network()
        if others and bits(value, 3, 1) == 0:
            self.send("hold", fetches_from(others[0]))
        self.send("hold", {"kind": FETCH_RESPONSE, "to": follower})
        self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": 1, "records": 1 + bits(value, 4, 2)})
        self.send("tick", {"ms": FETCH_WAIT_MS})
        self.send("hold", fetches_from(follower))
        for _ in range(3):  # until the follower has the write: its next Fetch, held, names the offset past it
            self.send("deliver", {"kind": FETCH_RESPONSE, "to": follower, "count": 1})
            if self.log_end(follower, key) >= self.log_end(leader, key) or not self.holds_answer_to(follower):
                break
        lose = LOSE_NONE
        if self.faults.loss_allowed():
            lose = LOSE_UNFLUSHED
            self.faults.lossy.add(follower)
        self.send("crash", {"broker": follower, "lose": lose})
        self.send("restart", {"broker": follower})
        self.send("tick", {"ms": SESSION_EXPIRY_MS + SETTLE_MS})
        self.send("duplicate", {"kind": FETCH, "from": follower, "count": 1})
        self.send("drop", {"kind": FETCH, "from": follower, "count": 1})
        self.send("release", fetches_from(follower))
        self.send("tick", {"ms": FETCH_WAIT_MS})
        self.send("release", {})
        self.send("tick", {"ms": SETTLE_MS})

    def holds_answer_to(self, broker: int) -> bool:
        """Whether a Fetch answer to `broker` is in flight."""
        return any(m.kind == FETCH_RESPONSE and m.dst == broker for m in self.reference.network.inflight.values())

    # ------------------------------------------------------------------ an answer for a replaced proposal

    def late_refusal(self, value: int) -> None:
        """A follower out of the ISR is fenced while its leader's metadata is frozen (its
        heartbeats held, so it stays fenced), then catches up: the leader proposes it and the
        controller refuses (INELIGIBLE_REPLICA); the answer is held. Meanwhile another ISR
        member stops fetching and leaves the ISR (`LEAVE`), the leader applies the whole
        metadata log (its proposal replaced by the newer ISR) and appends records; only then
        does the refusal arrive, alone, and the fenced follower's heartbeats resume."""
        picked = self.led_partition(value)
        if picked is None:
            return
        key, state, followers = picked
        leader = state.leader
        newcomer = next((r for r in state.replicas if r != leader and r not in state.isr and self.running(r)), None)
        if newcomer is None:
            if len(followers) < 2:
                return
            newcomer = followers[bits(value, 2, 1)]
        others = [b for b in followers if b != newcomer]
        if not others:
            return
        member = others[0]
        self.clean_network()
        if newcomer in state.isr:  # out of the ISR first, its shrink committed
            self.fall_behind(key[1], fetches_from(newcomer))
        self.send("lag_metadata", {"broker": leader})
        self.send("hold", {"kind": HEARTBEAT, "from": newcomer})
        self.send("fence_broker", {"broker": newcomer})
        self.send("hold", {"kind": ALTER_PARTITION_RESPONSE, "to": leader})
        self.send("release", fetches_from(newcomer))
        self.send("tick", {"ms": FETCH_WAIT_MS})
        how = LEAVE[bits(value, 3, 2)]
        self.send("hold", fetches_from(member))
        if how == "fence":
            self.send("fence_broker", {"broker": member})
        elif how == "controlled_shutdown":
            self.send("controlled_shutdown", {"broker": member})
            self.send("tick", {"ms": FETCH_WAIT_MS})
        else:
            self.send("crash", {"broker": member, "lose": LOSE_NONE})
            self.send("tick", {"ms": SESSION_EXPIRY_MS // 2})
        self.send("sync_metadata", {"broker": leader})
        self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": 1, "records": 1 + bits(value, 5, 2)})
        # the refusal alone, nothing else moving in the step: a leader that reverts to the
        # proposal's base holds an ISR the controller never committed at its partition epoch
        # (P-LEAD), before its next proposal can replace it
        self.send("deliver", {"kind": ALTER_PARTITION_RESPONSE, "to": leader})
        self.send("release", {"kind": ALTER_PARTITION_RESPONSE, "to": leader})
        self.send("release", {"kind": HEARTBEAT, "from": newcomer})
        self.send("tick", {"ms": FETCH_WAIT_MS})

    # ------------------------------------------------------------------ a new leader whose HW lags

    def behind_new_leader(self, value: int) -> None:
        """Every Fetch answer is held, so no follower hears from a leader unless one is delivered.
        An acks=all write comes and one answer brings the successor the records, not the HW that
        will expose them; the lag time passes, the third replica (stopped at the HW) leaves the
        ISR and the HW passes the write (acknowledged if that came within the request timeout,
        exposed either way). The leader crashes and the successor is elected with its HW behind
        its log end (its leader-epoch start offset). An answer from it reaches the third replica,
        whose next Fetch names the partition at the old HW, and the answer to that is held too,
        so it does not catch up. Then (three times in four) the new leader crashes as well."""
        picked = self.led_partition(value)
        if picked is None or len(picked[2]) < 2:
            return
        key, state, followers = picked
        leader = state.leader
        successor = followers[bits(value, 2, 1)]
        third = followers[1 - bits(value, 2, 1)]
        self.clean_network()
        self.send("hold", {"kind": FETCH_RESPONSE})
        self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": "all", "records": 1 + bits(value, 3, 2)})
        for _ in range(3):  # until the successor has the records: one answer at a time, none with their HW
            self.send("tick", {"ms": FETCH_WAIT_MS})
            self.send("deliver", {"kind": FETCH_RESPONSE, "to": successor, "count": 1})
            if self.log_end(successor, key) >= self.log_end(leader, key):
                break
        self.send("tick", {"ms": LAG_MS})
        self.send("crash", {"broker": leader, "lose": LOSE_NONE})
        self.send("tick", {"ms": SESSION_EXPIRY_MS})
        for _ in range(3):  # until the successor has had a Fetch of the partition from the third replica
            self.send("deliver", {"kind": FETCH_RESPONSE, "from": successor, "to": third, "count": 1})
            self.send("tick", {"ms": FETCH_WAIT_MS})
            if self.fetched_from(successor, third, key):
                break
        if bits(value, 5, 2) and self.running(successor):
            self.send("crash", {"broker": successor, "lose": LOSE_NONE})
            self.send("tick", {"ms": SESSION_EXPIRY_MS})

    def answer_past_the_hw(self, partition: int, value: int) -> None:
        """The end of `stale_proposal` and `held_expansion`: an acks=all write, the lag time, a
        write more, then the held ISR proposals arrive. A follower that was caught up holds the HW
        back until the lag time has passed (KAFKA-4485), and the leader moves its HW on a
        follower's progress or an append (leader.md §7): by the time the proposals arrive, the HW
        has passed the member that stopped fetching, unless something held it back."""
        self.send("produce", {"topic": TOPIC, "partition": partition, "acks": "all", "records": 1 + bits(value, 3, 2)})
        self.send("tick", {"ms": LAG_MS})
        self.send("produce", {"topic": TOPIC, "partition": partition, "acks": 1, "records": 1})
        self.send("tick", {"ms": SETTLE_MS})
        self.send("release", {"kind": ALTER_PARTITION})
        self.send("tick", {"ms": FETCH_WAIT_MS})

    # ------------------------------------------------------------------ a proposal older than the ISR

    def stale_proposal(self, value: int) -> None:
        """Every ISR proposal is held; one follower falls behind, so the leader proposes the ISR
        without it. The controller fences the other follower (removing it from the ISR: the
        partition epoch moves past the proposal's); that follower's fetches are held, its next
        heartbeat unfences it. The first follower catches up, a write is acknowledged, the lag
        time passes and another write moves the HW past the unfenced follower's log end; then the
        proposal arrives, naming it as a member."""
        picked = self.led_partition(value)
        if picked is None or len(picked[2]) < 2:
            return
        key, _, followers = picked
        lagging = followers[bits(value, 2, 1)]
        removed = followers[1 - bits(value, 2, 1)]
        self.clean_network()
        self.send("hold", {"kind": ALTER_PARTITION})
        self.fall_behind(key[1], fetches_from(lagging))
        self.send("hold", fetches_from(removed))
        self.send("fence_broker", {"broker": removed})
        self.send("release", fetches_from(lagging))
        self.send("tick", {"ms": SETTLE_MS})
        self.answer_past_the_hw(key[1], value)

    # ------------------------------------------------------------------ an expansion that waits

    def held_expansion(self, value: int) -> None:
        """A follower out of the ISR (or one made to fall out of it) catches up while every ISR
        proposal is held, so the expansion waits in flight; the follower stops fetching again, an
        acks=all write comes, the lag time passes, another write comes (the leader moves its HW
        on an append, leader.md §7); then the proposal arrives, the follower still behind.
        Half the time, where the fault model lets a disk be lost, the follower instead reboots
        with an empty disk while the proposal waits, and the proposal arrives for the new
        incarnation: KIP-903's case, refused by the broker epoch the proposal carries for it
        (`AlterPartition` v3; without it, B01L)."""
        picked = self.led_partition(value)
        if picked is None:
            return
        key, state, followers = picked
        outside = [r for r in state.replicas if r != state.leader and r not in state.isr and self.running(r)]
        self.clean_network()
        if outside:
            follower = outside[bits(value, 2, 1) % len(outside)]
        else:
            follower = followers[bits(value, 2, 1) % len(followers)]
            self.fall_behind(key[1], fetches_from(follower))
        self.send("hold", {"kind": ALTER_PARTITION})
        self.send("release", fetches_from(follower))
        self.send("tick", {"ms": FETCH_WAIT_MS})
        self.send("hold", fetches_from(follower))
        if bits(value, 5, 1) and self.context.supports("crash") and self.faults.loss_allowed():
            self.faults.lossy.add(follower)
            self.send("crash", {"broker": follower, "lose": LOSE_DISK})
            self.send("restart", {"broker": follower})
            self.send("tick", {"ms": SETTLE_MS})
            self.send("release", {"kind": ALTER_PARTITION})
            self.send("tick", {"ms": FETCH_WAIT_MS})
            return
        self.answer_past_the_hw(key[1], value)

    # ------------------------------------------------------------------ the ISR lost, a replica behind alive

    def last_members_lost(self, value: int) -> None:
        """A replica outside the ISR (or a follower made to fall out of it) stops fetching; an
        acks=all write is acknowledged by the ISR; then each ISR member crashes, the leader last,
        each fenced before the next goes, so the replica behind is the only one left."""
        picked = self.led_partition(value)
        if picked is None:
            return
        key, state, followers = picked
        leader = state.leader
        outside = [r for r in state.replicas if r not in state.isr and self.running(r)]
        self.clean_network()
        if outside:
            survivor = outside[bits(value, 2, 1) % len(outside)]
            self.send("hold", fetches_from(survivor))
        elif len(followers) >= 2:
            survivor = followers[bits(value, 2, 1)]
            self.fall_behind(key[1], fetches_from(survivor))
        else:
            return
        self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": "all", "records": 1 + bits(value, 3, 2)})
        self.send("tick", {"ms": SETTLE_MS})
        current = self.reference.controller.partitions.get(key)
        members = [] if current is None else [m for m in current.isr if m not in (leader, survivor)]
        for member in [*members, leader]:
            if self.running(member):
                self.send("crash", {"broker": member, "lose": LOSE_NONE})
                self.send("tick", {"ms": SESSION_EXPIRY_MS})
        self.send("release", fetches_from(survivor))
        self.send("tick", {"ms": SETTLE_MS})

    # ------------------------------------------------------------------ a follower that fetches but falls behind

    def slow_follower(self, value: int) -> None:
        """An ISR follower's Fetches are held and let through one a round; each round writes more
        records (acks=1: nothing waits on them) than one Fetch answer carries, then time passes
        (the rest of the cluster runs meanwhile: `tick` delivers what is not held). The follower
        fetches on, every Fetch below the leader's log end and below the end its previous Fetch
        saw, so its lastCaughtUpTime stops moving (Kafka 3.9.0 `Replica.updateFetchStateOrThrow`:
        a Fetch at the leader's end counts as caught up now, one at or past the end the previous
        Fetch saw as caught up as of that Fetch, anything else not at all; KAFKA-4485) and its
        leader must drop it within the lag time plus one isr-expiration period (leader.md §6,
        P-SHRINK). A leader that counts such Fetches as progress keeps it in the ISR, holding
        acks=all writes back for as long as the follower stays slow."""
        picked = self.led_partition(value)
        if picked is None:
            return
        key, _, followers = picked
        follower = followers[bits(value, 2, 1) % len(followers)]
        self.clean_network()
        self.send("hold", fetches_from(follower))
        for _ in range(SLOW_ROUNDS):
            self.send("produce", {"topic": TOPIC, "partition": key[1], "acks": 1, "records": SLOW_RECORDS})
            self.send("deliver", {"kind": FETCH, "from": follower, "count": 1})
            self.send("tick", {"ms": SLOW_ROUND_MS})
        self.send("release", fetches_from(follower))
