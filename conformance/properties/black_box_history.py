"""What the black-box forms of the properties read of a cluster history (the shape
`isrcheck.conformance.engine.cluster_history` records; Jepsen's checker role): the cluster's
configuration, the operations and observations, the points past which data is no longer protected
(every in-sync copy lost its disk) and the periods a broker was down. They need no ground truth —
only what a client and an operator see — so they apply to any cluster target, and re-judge a run
offline from its record (`isrcheck check`).

Faults that legitimately lose data are exempt: a record (and a high watermark) is no longer
protected once every in-sync copy may be gone (Kafka promises nothing past that): every broker of
the last ISR observed lost its log directory, or one did while the others were down; with
eligible leader replicas, every replica that may be in the ISR or the ELR shut down uncleanly or
lost its log directory (`exposure_points`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DOWN_OPS = {"crash", "pause", "shutdown"}
UP_OPS = {"restart", "resume", "clean_restart", "heal"}
KILLED_AS = {"shutdown": "crash", "clean_restart": "restart"}
"""What a clean shutdown or restart was when its result says `killed`: the broker had not stopped
within the terminate timeout and was SIGKILLed (kafka-cluster's `RealKafkaCluster.terminate`,
60 s; the simulated cluster waits as long)."""


@dataclass(frozen=True)
class HistoryConfig:
    """What the judge needs to know about the cluster (Kafka configuration, not its state)."""

    session_timeout_ms: int = 6000
    settle_ms: int = 4000
    """Metadata settles within this after the session timeout expired (heartbeat interval,
    controller processing, Metadata propagation to the broker answering)."""
    min_insync_replicas: int = 2
    elr: int = 0
    """1: eligible leader replicas are on (KIP-966; 4.1's default): an ISR member fenced out of an
    ISR below min.insync.replicas keeps its claim to leadership unless it shuts down uncleanly
    (`exposure_points`)."""

    def to_json(self) -> dict[str, int]:
        return {"session_timeout_ms": self.session_timeout_ms, "settle_ms": self.settle_ms,
                "min_insync_replicas": self.min_insync_replicas, "elr": self.elr}

    @staticmethod
    def from_json(data: dict[str, Any]) -> HistoryConfig:
        return HistoryConfig(**{k: int(v) for k, v in data.items() if k in HistoryConfig.__dataclass_fields__})


def judged_op(entry: dict[str, Any]) -> str:
    """The operation an op entry performed, as the exposure rules read it: a shutdown or a clean
    restart whose result says `killed` is a crash or a (SIGKILL) restart. Its controlled shutdown
    never completed — a broker waits up to 5 minutes for the controller's approval
    (`BrokerServer.shutdown`, 4.1.1), so it is killed before `LogManager.shutdown` writes the
    clean-shutdown file with its broker epoch; restarted, it reads none
    (`LogManager.readBrokerEpochFromCleanShutdownFiles`) and registers with PreviousBrokerEpoch
    -1, which `ClusterControlManager.registerBroker` takes for an unclean shutdown (the stored
    epoch differs): `ReplicationControlManager.handleBrokerShutdown` then takes it out of the ISR
    and the ELR (4.1.1). A history that called it clean kept a copy electable that Kafka had
    dropped (SimulatedCluster 4.1 run 9ca63220-w0-014410: broker 1's controller link held, its
    clean restart killed, and the emptied last known leader elected)."""
    op, result = str(entry["op"]), entry.get("result")
    if op in KILLED_AS and isinstance(result, dict) and result.get("killed") is True:
        return KILLED_AS[op]
    return op


def ops(history: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e["type"] == "op"]


def observations(history: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e["type"] == "observe"]


def broker_id(args: dict[str, Any]) -> int:
    b = int(args.get("broker", 1))
    return b if b > 100 else 100 + b


def topic_min_isr(history: list[dict[str, Any]], topic: str, config: HistoryConfig) -> int:
    for e in ops(history):
        if e["op"] == "create_topic" and e["args"].get("topic") == topic:
            value = (e["args"].get("configs") or {}).get("min.insync.replicas")
            if value is not None:
                return int(value)
    return config.min_insync_replicas


def exposure_points(history: list[dict[str, Any]], config: HistoryConfig) -> dict[str, list[int]]:
    """Per partition, the history indices after which every in-sync copy of what was committed
    before may be gone: from there on, it is not protected. Three ways, the first two without
    eligible leader replicas in play, the third with:

    1. Every broker of the last observed non-empty ISR has lost its log directory (disk-loss
       restarts) since being observed in it.

    2. A member loses it while every other member is down (crashed, paused or shut down since it
       was observed in the ISR; `DOWN_OPS`). Fenced,
       those others leave the ISR, often before any observation can show it, and the member with
       the empty log is what is left — the last in-sync replica, which the controller elects
       (`PartitionChangeBuilder` at 3.9.0: a clean election takes the ISR's live member): two
       failures against min.insync.replicas, outside the guarantee. ELR is not in play when it is
       off, nor with the topic's min.insync.replicas 1: the ELR is only kept while the ISR is
       below it (`PartitionChangeBuilder.maybePopulateTargetElr` clears it otherwise, 4.1.1).
       A member whose controller link is cut or held counts as down: alive, with its copy, it
       sends no heartbeat the controller receives, is fenced one session timeout later
       (`ReplicationControlManager.handleBrokerFenced`, 4.1.1) and leaves the ISR the same way
       (SimulatedCluster 4.1 run af3c0495-w0-006275: 102's controller link cut, 103 restarted
       with an empty disk; 102 was fenced while 103's new registration waited for its old
       session to expire, and 103, the last ISR member, was elected with an empty log).

    3. With ELR in play (4.1's default, min.insync.replicas ≥ 2) the last ISR is not all there is:
       a member fenced out of an ISR below min.insync.replicas stays electable from the ELR with
       its copy, even when every ISR member lost its disk. Exposed once every replica that may be in
       the ISR or the ELR — the last observed ISR of at least min.insync.replicas members and
       every member of the ISRs observed since (a member that leaves an ISR below it moves to the
       ELR, `maybePopulateTargetElr`) — has shut down uncleanly (crashed, or restarted: both are a
       SIGKILL, as is a clean shutdown killed for hanging, `judged_op`) or lost its log directory
       since it was last observed in an ISR, and at least one
       lost it. KIP-966 keeps no promise past that: a SIGKILLed broker finds no clean-shutdown
       file (`LogManager.readBrokerEpochFromCleanShutdownFiles`, passed by `BrokerServer
       .startup`), registers with PreviousBrokerEpoch -1, and `ClusterControlManager
       .registerBroker` runs the unclean path of `ReplicationControlManager.handleBrokerShutdown`,
       which takes it out of the ISR and the ELR (4.1.1). With both empty the controller falls
       back to the last known leader (`PartitionChangeBuilder.canElectLastKnownLeader`: the
       leader when the partition last went leaderless, `maybeUpdateLastKnownLeader`), which may
       be the emptied one (a simulated 4.1 cluster lost records so, SimulatedCluster seed 1 runs
       280, 450, 533, 870, 1183). A member that goes down cleanly while the rest of the ISR makes
       min.insync.replicas, and is past the session timeout before another member goes down,
       left without joining the ELR: it is not counted (run 282). When a view shows the ISR at or
       above min.insync.replicas and the next one below it, the members gone in between left in
       separate changes no view shows (`Partition.maybeShrinkIsr` removes at each check the
       followers then past replica.lag.time.max.ms, `getOutOfSyncReplicas`, 4.1.1; each fence is
       a change of its own), and only those whose removal took the ISR below min ISR joined
       the ELR: at least min ISR less the ISR seen, any of them; exposed once that many of them
       and every other candidate are gone (run af3c0495-w0-022063). A paused (SIGSTOP) or cleanly
       shut down member keeps its registration, or registers with its previous broker epoch, and
       stays electable from the ELR: a loss then is judged. So is one where no disk was lost: a
       SIGKILL keeps the log.

       The last known leader can also be an emptied broker through a dead incarnation's held
       heartbeat (run 54): a broker whose controller link is held restarts with an empty log; at
       the release its old incarnation's heartbeat, held in the link, still reaches the
       controller (a proxy forwards what it held of a closed connection, a kernel retransmits an
       orphaned socket's bytes, `Selector.close` keeps a closing channel's received requests);
       it carries no incarnation id and the epoch of the registration the controller still holds
       (the new incarnation's registration was held too), so `ClusterControlManager
       .checkBrokerEpoch` accepts it and `BrokerHeartbeatManager.calculateNextBrokerState`
       unfences that registration — still in the ELR, it is elected, becomes the last known
       leader, and its empty new incarnation is elected as such once registered. Kafka 4.1.1 does
       this; it is within rule 3 when the copies' other holders went down uncleanly, and judged
       (a loss Kafka makes within its guarantee) when one of them only paused.

    An empty ISR does not replace the last non-empty one. Without ELR the ISR never empties (the
    last member stays when it is fenced). With ELR on (4.x; KIP-966) it does: when its last member
    is fenced the ISR becomes empty and that member moves to the ELR
    (`PartitionChangeBuilder.maybePopulateTargetElr` and `build`, "the ISR is allowed to be
    empty", 4.0.1 and 4.1.1), so the copies a clean election can still use are those of the last
    non-empty ISR. A disk-loss restart of that member then leaves nothing electable with the data:
    its registration is an unclean shutdown that takes it out of the ELR
    (`ReplicationControlManager.handleBrokerShutdown`), and the last-known-leader election
    (`PartitionChangeBuilder.canElectLastKnownLeader`) accepts it only once its recorded log
    directory is online again (`ReplicationControlManager.LeaderAcceptor.test`) — i.e. after the
    broker reassigned the partition to its new, empty directory (`ReplicaManager
    .maybeUpdateTopicAssignment` → AssignReplicasToDirs). Offline, or led by the empty replica:
    either is Kafka's answer once every in-sync copy is gone."""
    tracker = ExposureTracker(history, config)
    for e in history:
        if e["type"] == "observe" and e["view"].get("exists"):
            tracker.observed(e["partition"], set(e["view"].get("isr", [])))
        elif e["type"] == "op":
            tracker.operated(e)
    return tracker.points


class ExposureTracker:
    """What `exposure_points` knows of the cluster at one point of a history, and the points found
    so far: one method per kind of event (an observation, a tick, a heal, a broker going down,
    resumed, coming back, any other operation naming a broker), each doing what the rules above
    say that event does, in the order they say it."""

    def __init__(self, history: list[dict[str, Any]], config: HistoryConfig) -> None:
        self.history = history
        self.config = config
        self.points: dict[str, list[int]] = {}
        """Per partition, the history indices where its records stop being protected."""
        self.min_isr_of: dict[str, int] = {}
        """Per partition, its topic's min.insync.replicas (`topic_min_isr`, read once)."""

        # What is down (rules 2 and 3).
        self.down: set[int] = set()
        """Crashed or shut down, not restarted since."""
        self.paused: set[int] = set()
        """SIGSTOPped, not resumed (nor restarted) since."""
        self.down_ms: dict[int, int] = {}
        """Per broker down (crashed, paused, shut down), the ms ticked since it went down."""
        self.isolated: set[int] = set()
        """Brokers whose controller link is cut or held (rule 2): fenced one session timeout later."""

        # Whose copy may be gone (rules 1 to 3).
        self.wiped: set[int] = set()
        """Restarted with an empty log directory since last observed in an ISR."""
        self.unclean: set[int] = set()
        """SIGKILLed (crashed or restarted) since last observed in an ISR."""

        # The ISRs seen (rules 1 to 3).
        self.last_isr: dict[str, set[int]] = {}
        """Per partition, the last non-empty ISR observed."""
        self.electable: dict[str, set[int]] = {}
        """With ELR in play: the replicas that may be in the ISR or the ELR (rule 3)."""
        self.optional: dict[str, set[int]] = {}
        self.needed: dict[str, int] = {}
        """With ELR in play, after an ISR seen at or above min.insync.replicas is next seen below
        it: the members gone between the two views (`optional`), of which only `needed` surely
        joined the ELR (rule 3)."""
        self.all_gone: set[str] = set()
        """Partitions whose rule-3 condition holds (a point is where it starts to)."""

        # Members that left an ISR without joining the ELR (rules 2 and 3).
        self.leaving: dict[str, dict[int, int]] = {}
        """Per partition, members gone down cleanly (paused, shut down) while the rest of the last
        ISR still made min.insync.replicas, with the ms ticked since (rule 3)."""
        self.left: dict[str, set[int]] = {}
        """Per partition, such members past the session timeout, still down: out of the ISR, not in
        the ELR (an observation may still list one, a moment before the controller fences it)."""
        self.shut_out: dict[str, set[int]] = {}
        """Without ELR in play (rule 2): per partition, members that left its ISR by a controlled
        shutdown while other members may have remained in it, not yet seen back in it."""

    # ------------------------------------------------------------------ the topic's settings

    def min_isr(self, partition: str) -> int:
        if partition not in self.min_isr_of:
            self.min_isr_of[partition] = topic_min_isr(self.history, partition.rsplit("-", 1)[0], self.config)
        return self.min_isr_of[partition]

    def elr_in_play(self, partition: str) -> bool:
        """Rule 3 applies, not rules 1 and 2: ELR on and min.insync.replicas at least 2."""
        return bool(self.config.elr) and self.min_isr(partition) >= 2

    # ------------------------------------------------------------------ events

    def observed(self, partition: str, isr: set[int]) -> None:
        """A view of the partition (rules 1 to 3). A broker seen in the ISR holds a copy again (as
        far as anyone can see): no longer wiped, shut out, or SIGKILLed — unless it is down, still
        listed a moment before it is fenced. A non-empty ISR is the last one (an empty one is not,
        see above); rule 3's candidates follow it: an ISR at or above min.insync.replicas is all
        of them, one below it adds its members to those already candidates, and after one at or
        above it the members gone between the two views are `optional`, `needed` of them surely
        in the ELR. A copy back ends a rule-3 exposure: the next time all are gone is a new
        point."""
        self.wiped -= isr
        self.shut_out[partition] = self.shut_out.get(partition, set()) - isr
        self.unclean -= isr - self.down
        if isr:
            before, known = self.last_isr.get(partition, set()), self.electable.get(partition, set())
            self.last_isr[partition] = isr
            at_least_min = len(isr) >= self.min_isr(partition)
            if at_least_min:
                self.optional[partition], self.needed[partition] = set(), 0
            elif len(before) >= self.min_isr(partition):
                gone_between = (before - isr) & known  # which left first is not seen
                self.optional[partition] = gone_between
                self.needed[partition] = self.min_isr(partition) - len(isr)
                known = known - gone_between
            self.electable[partition] = (isr if at_least_min else known | isr) - self.left.get(partition, set())
        if not self.copies_gone(partition):
            self.all_gone.discard(partition)

    def operated(self, entry: dict[str, Any]) -> None:
        """An operation, as the rules read it (`judged_op`: a killed shutdown is a crash), then
        rule 3's check: where every copy is gone, a point."""
        op, args = judged_op(entry), entry["args"]
        if op == "tick":
            self.ticked(int(args.get("ms", 0)))
        elif op == "heal":
            self.healed()
        elif op in DOWN_OPS:
            self.went_down(op, args)
        elif op == "resume":
            self.resumed(args)
        elif op in UP_OPS:
            self.came_up(op, args, entry["i"])
        else:
            self.acted_on(op, args)
        self.mark_copies_gone(entry["i"])

    def ticked(self, ms: int) -> None:
        """Time passes (rules 2 and 3): a member leaving cleanly (`leaving`) is fenced once past
        the session timeout and left the ISR without joining the ELR — no longer a candidate."""
        for down_broker in self.down_ms:
            self.down_ms[down_broker] += ms
        for partition, pending in self.leaving.items():
            for broker in list(pending):
                pending[broker] += ms
                if pending[broker] >= self.config.session_timeout_ms:
                    self.electable.get(partition, set()).discard(broker)
                    self.optional.get(partition, set()).discard(broker)
                    self.left.setdefault(partition, set()).add(broker)
                    del pending[broker]

    def healed(self) -> None:
        """Every fault ends: nothing is down, paused, cut off or shut out any more (rule 2), and no
        member is known to have left without joining the ELR (rule 3)."""
        self.down.clear()
        self.paused.clear()
        self.down_ms.clear()
        self.isolated.clear()
        self.shut_out.clear()
        self.left.clear()

    def went_down(self, op: str, args: dict[str, Any]) -> None:
        """A crash, a pause or a clean shutdown (rules 2 and 3): the broker is down (paused for a
        pause), and from now on its time down counts; a crash is a SIGKILL (rule 3). A clean
        shutdown leaves the ISR at once (`controlled_shutdown`); a pause or a clean shutdown while
        the rest of the ISR makes min.insync.replicas may leave without joining the ELR
        (`start_leaving`)."""
        broker = broker_id(args)
        (self.paused if op == "pause" else self.down).add(broker)
        self.down_ms.setdefault(broker, 0)
        if op == "crash":
            self.unclean.add(broker)
        if "broker" not in args:
            return
        self.void_leaving_order(broker)
        if op == "shutdown":
            self.controlled_shutdown(broker)
        if op in ("pause", "shutdown"):
            self.start_leaving(broker)

    def resumed(self, args: dict[str, Any]) -> None:
        """SIGCONT: a paused broker is back (a crashed broker stays down when "resumed")."""
        broker = broker_id(args)
        self.paused.discard(broker)
        if broker not in self.down | self.paused:
            self.down_ms.pop(broker, None)
        if "broker" in args:
            self.void_leaving_order(broker)

    def came_up(self, op: str, args: dict[str, Any], i: int) -> None:
        """A restart (a SIGKILL, then a start: rule 3; with `lose: disk` an empty log: rules 1 to 3)
        or a clean restart (a controlled shutdown first, `controlled_shutdown`): the broker is up."""
        broker = broker_id(args)
        self.down.discard(broker)
        self.paused.discard(broker)
        self.down_ms.pop(broker, None)
        if op == "restart":
            self.unclean.add(broker)
        if "broker" in args:
            self.void_leaving_order(broker)
            if op == "clean_restart":
                self.controlled_shutdown(broker)
        if op == "restart" and args.get("lose") == "disk":
            self.lost_disk(broker, i)

    def acted_on(self, op: str, args: dict[str, Any]) -> None:
        """Any other operation (rule 2: a cut or held controller link isolates the broker until
        passed again); one naming a broker voids the order of clean departures
        (`void_leaving_order`)."""
        if op == "net" and args.get("link") == "controller":
            (self.isolated.add if args.get("mode") in ("cut", "hold") else self.isolated.discard)(broker_id(args))
        if "broker" in args:
            self.void_leaving_order(broker_id(args))

    # ------------------------------------------------------------------ what an event implies

    def void_leaving_order(self, broker: int) -> None:
        """Rule 3: a member that goes down cleanly while the rest of the ISR still makes
        min.insync.replicas is fenced one session timeout later and leaves the ISR without joining
        the ELR (`maybePopulateTargetElr` clears the ELR while the ISR is not below it) — unless
        another member left first, which an observation may not show: then it stays a candidate.
        Whatever happens to a broker ends its own clean departure, and to a member of the last ISR
        the others' (the order is unknown)."""
        for partition, pending in self.leaving.items():
            pending.pop(broker, None)
            self.left.get(partition, set()).discard(broker)
            if broker in self.last_isr.get(partition, set()):
                pending.clear()  # another member may leave first: the order is unknown

    def start_leaving(self, broker: int) -> None:
        """Rule 3: a member paused or shut down while the rest of the last ISR makes
        min.insync.replicas, none of them down, paused, SIGKILLed or wiped, starts leaving
        cleanly (`ticked` ends it past the session timeout)."""
        for partition, isr in self.last_isr.items():
            rest = isr - {broker}
            if (broker in isr and self.elr_in_play(partition) and len(rest) >= self.min_isr(partition)
                    and not rest & (self.down | self.paused | self.unclean | self.wiped)):
                self.leaving.setdefault(partition, {})[broker] = 0

    def controlled_shutdown(self, broker: int) -> None:
        """A controlled shutdown takes a member out of the ISR at once
        (`ReplicationControlManager.handleBrokerInControlledShutdown`, 4.1.1); it joins the ELR
        only if the ISR it leaves is then below min.insync.replicas (`PartitionChangeBuilder
        .maybePopulateTargetElr` clears the ELR otherwise). Whether a member that went down shortly
        before is still in that ISR depends on whether the controller fenced it yet — up to the
        session timeout and the settle time after it went down — which a history cannot tell. So
        the member is not counted once it may have left an ISR that still made min.insync.replicas:
        the others of the last ISR, less those restarted since (their re-registration took them
        out) and those down past the session timeout and the settle time (surely fenced), are at
        least min.insync.replicas (SimulatedCluster 4.1 run af3c0495-w0-000586: 102 crashed, 6 s
        later 103 shut down cleanly a moment before 102 was fenced, left ISR [102, 101] without an
        ELR place; 101 then lost its disk and was elected as the last known leader). With ELR on
        and min.insync.replicas 1 the ELR is filled only when the ISR empties, which a view shows
        as an empty ISR, not who is left: such a member counts as gone for rule 2 until seen back
        in the ISR (run af3c0495-w0-002703: 101 shut down while the paused 103 was not yet fenced,
        the ISR emptied into an ELR of 103 alone, and 103's disk-loss restart made it, empty, the
        last known leader)."""
        fenced_after_ms = self.config.session_timeout_ms + self.config.settle_ms
        for partition, isr in self.last_isr.items():
            if broker not in isr or not (self.elr_in_play(partition) or self.config.elr):
                continue
            may_remain = {m for m in isr - {broker} if not (m in self.unclean and m not in self.down)
                          and self.down_ms.get(m, 0) < fenced_after_ms}
            if len(may_remain) >= self.min_isr(partition):
                self.electable.get(partition, set()).discard(broker)
                self.optional.get(partition, set()).discard(broker)
                self.shut_out.setdefault(partition, set()).add(broker)

    def lost_disk(self, broker: int, i: int) -> None:
        """Rules 1 and 2 (without ELR in play): a point where every member of the last ISR lost its
        log directory, or this one did while every other member is without its copy — down,
        paused, cut off from the controller or shut out by a controlled shutdown."""
        self.wiped.add(broker)
        for partition, isr in self.last_isr.items():
            if self.elr_in_play(partition):
                continue  # rule 3
            without_copy = self.wiped | self.down | self.paused | self.isolated | self.shut_out.get(partition, set())
            if isr and (isr <= self.wiped or (broker in isr and isr <= without_copy)):
                self.points.setdefault(partition, []).append(i)

    def copies_gone(self, partition: str) -> bool:
        """Rule 3's condition. It holds with min.insync.replicas 1 too: with ELR on the ISR may
        empty (a SIGKILLed last member's re-registration takes it out, `handleBrokerShutdown`),
        and the last-known-leader fallback applies as with a larger min ISR (SimulatedCluster 4.1
        run 642b69eb-w0-010078: replicas [1, 2], 1 SIGKILLed, 2 restarted empty and elected)."""
        replicas, maybe = self.electable.get(partition, set()), self.optional.get(partition, set())
        without_copy = self.wiped | self.unclean
        return (bool(self.config.elr) and bool((replicas | maybe) & self.wiped) and replicas <= without_copy
                and len(maybe & without_copy) >= min(self.needed.get(partition, 0), len(maybe)))

    def mark_copies_gone(self, i: int) -> None:
        """Rule 3: a point where a partition's copies become all gone (not again while they stay
        so, nor twice at one index)."""
        for partition in self.electable:
            gone = self.copies_gone(partition)
            if gone and partition not in self.all_gone and i not in self.points.get(partition, []):
                self.points.setdefault(partition, []).append(i)
            (self.all_gone.add if gone else self.all_gone.discard)(partition)


def down_periods(history: list[dict[str, Any]], config: HistoryConfig) -> list[tuple[dict[str, Any], dict[int, float],
                                                                                 dict[int, bool]]]:
    """For every observation that may be judged (no broker's metadata held back, not within the
    quiet time after a release or a controller fail-over): the brokers down at that point, with
    when they went down (SIGKILL/SIGSTOP/SIGTERM, controller links cut or held, heartbeats held;
    not restarted since) and whether the last observation before that listed them as unfenced."""
    bound_s = (config.session_timeout_ms + config.settle_ms) / 1000
    down_since: dict[int, float] = {}
    listed_when_down: dict[int, bool] = {}
    listed: set[int] | None = None
    blocked: set[int] = set()
    quiet_until = 0.0
    judged = []

    def went_down(broker: int, t: float) -> None:
        if broker not in down_since:
            down_since[broker] = t
            listed_when_down[broker] = listed is not None and broker in listed

    for e in history:
        if e["type"] == "op":
            op, args = e["op"], e["args"]
            was_blocked = bool(blocked)
            if op in DOWN_OPS:
                went_down(broker_id(args), e["t_end"])
            elif op == "net" and args.get("link") == "controller":
                if args.get("mode") in ("cut", "hold"):
                    went_down(broker_id(args), e["t_end"])
                    blocked.add(broker_id(args))
                else:
                    down_since.pop(broker_id(args), None)
                    blocked.discard(broker_id(args))
            elif op == "hold_api" and args.get("api") in ("Fetch", "BrokerHeartbeat"):
                blocked.add(broker_id(args))
                if args.get("api") == "BrokerHeartbeat":
                    went_down(broker_id(args), e["t_end"])
            elif op == "release_api" and args.get("api") in ("Fetch", "BrokerHeartbeat"):
                blocked.discard(broker_id(args))
                if args.get("api") == "BrokerHeartbeat":
                    down_since.pop(broker_id(args), None)
            elif op in UP_OPS:
                if op == "heal":
                    down_since.clear()
                    blocked.clear()
                else:
                    down_since.pop(broker_id(args), None)
            elif op == "fail_over_controller":
                quiet_until = e["t_end"] + bound_s
            if was_blocked and not blocked:
                quiet_until = max(quiet_until, e["t_end"] + config.settle_ms / 1000)
            continue
        if e["type"] != "observe":
            continue  # every replica's log after the heal (P-LOG's): no view of the partition
        if "brokers" in e["view"]:
            listed = set(e["view"]["brokers"])
        if blocked or not e["view"].get("exists") or e["t"] < quiet_until:
            continue  # a broker's metadata is held back: whatever answers Metadata may be stale
        judged.append((e, dict(down_since), {b: listed_when_down.get(b, False) for b in down_since}))
    return judged
