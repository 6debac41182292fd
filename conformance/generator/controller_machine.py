"""The controller-level interleaving generator: a Hypothesis `RuleBasedStateMachine` whose rules
are the controller RPCs and broker lifecycle of the scenario format (Jepsen's "generator").

Preconditions and drawn values read only the *reference's* state (landscape.md §2: reading the
target's answers makes Hypothesis flaky). Draws are small integers mapped onto the options the
reference state offers, so shrinking moves towards the first option.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RULE_MARKER, RuleBasedStateMachine, initialize, precondition, rule
from isrcheck.conformance.generator.driver import MachineDriver
from isrcheck.contract.operations.step import Step
from isrcheck.reference_impl.controller import Controller

BROKERS = (1, 2, 3, 4)
TOPICS = ("t0", "t1")
MAX_PARTITIONS = 4
"""Up to four partitions a topic: a controller that misbehaves on a third partition is exercised."""
small = st.integers(min_value=0, max_value=255)
UNKNOWN_PARTITION = 64
"""Partition indices from here on are never created (create_partitions stops at MAX_PARTITIONS)."""
UNKNOWN_TOPIC = "t-never-created"
"""A topic no rule creates (TOPICS are the ones that can exist)."""


def step(op: str, args: dict[str, Any], captures: dict[str, str] | None = None) -> Step:
    return Step(0, op, args, None, captures or {}, None)


class ControllerMachine(RuleBasedStateMachine):
    context: ClassVar[MachineDriver]
    ideas: ClassVar[frozenset[str]] = frozenset()
    """The generation ideas on; the controller level has one, targeted search (targeting.py,
    `TARGET`), off unless switched on (bench/detect.py --ideas)."""
    current_at_target: ClassVar[bool] = True
    """What an AlterPartition means as *current* — the partition's leader as its sender, its
    leader and partition epochs — is named as such (`broker: leader`, `current`) and resolved by
    each side against its own state (`Session.resolve`), not copied from the reference's. Draws
    still read the reference only, so Hypothesis stays deterministic; the reference resolves to
    the values it used to be given. It matters where a target's state may rightly differ from the
    reference's without the run judging that difference (`--no-differential`, or fields a plug-in
    does not declare observable): on 4.1, eligible leader replicas (KIP-966) are on by default,
    and a controller whose ELR differs — most third-party ones, and any that lacks it — elects
    other leaders and bumps other epochs from a last ISR member's first fencing on. Requests aimed
    at the reference's leader and epochs then reach it stale and are refused on that count
    (NOT_LEADER, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION) before the check the request was
    drawn to exercise — the eligibility of its members, where a same-tick re-admission race lives.
    Values meant as wrong (another requester, an epoch off by one, an older broker epoch) are still
    computed from the reference. False: every value from the reference (bench/same_tick.py
    --current-at reference)."""

    def __init__(self) -> None:
        super().__init__()
        self.run = self.context.start_run()
        controller = getattr(self.run.reference, "controller", None)
        assert isinstance(controller, Controller)
        self.reference = controller
        self.incarnations: dict[int, int] = {}
        self.epoch_captures: dict[int, list[str]] = {b: [] for b in BROKERS}

    # -- reference state (the only thing draws may depend on) ------------------------------------

    def registered(self) -> list[int]:
        return sorted(self.reference.brokers)

    def partitions(self) -> list[tuple[str, int]]:
        return self.reference.partition_keys()

    def isr_item(self, broker: int, back: int = 1) -> Any:
        """An ISR member as a request names it: with the broker epoch of its `back`-th latest
        registration (1: the current one, 2: the incarnation before), or the bare id when it has
        not registered that often."""
        captures = self.epoch_captures.get(broker, [])
        return [broker, "$" + captures[-back]] if len(captures) >= back else broker

    def sender(self, chosen: int, leader: int, known: bool = True) -> int | str:
        """The AlterPartition's sender: `leader` (each side's own) when the draw chose the leader
        of the partition the request names."""
        at_target = self.current_at_target and known and self.context.observes("leader")
        return "leader" if at_target and chosen == leader else chosen

    def epoch(self, field: str, reference_value: int, delta: int = 0, known: bool = True) -> int | str:
        """An epoch `delta` off the reference's; the current one (each side's own) when 0, the
        request names that partition and the target observes `field` (a broker's Metadata answer
        has no partition epoch: kafka-cluster's, or a plug-in's that says so)."""
        if delta == 0 and known and self.current_at_target and self.context.observes(field):
            return "current"
        return max(0, reference_value + delta)

    def send(self, op: str, args: dict[str, Any], captures: dict[str, str] | None = None) -> None:
        self.context.execute(self.run, step(op, args, captures))

    # -- the starting cluster (the scenario format's `brokers:` plus one topic) ------------------

    @initialize()
    def live_cluster(self) -> None:
        for broker in BROKERS[:3]:
            self.register_broker(broker, same=False, clean=False)
            self.send("unfence_broker", {"broker": broker})
        self.create_topic("t0", replication=3, count=1, order=0)

    # -- broker lifecycle ------------------------------------------------------------------------

    @rule(broker=st.sampled_from(BROKERS), same=st.booleans(), clean=st.booleans())
    def register_broker(self, broker: int, same: bool, clean: bool) -> None:
        if not same or broker not in self.incarnations:
            self.incarnations[broker] = self.incarnations.get(broker, 0) + 1
        name = f"e{broker}_{len(self.epoch_captures[broker]) + 1}"
        label = f"{broker}.{self.incarnations[broker]}"
        args: dict[str, Any] = {"broker": broker, "incarnation": label}
        if clean and self.epoch_captures[broker]:
            args["previous_broker_epoch"] = "$" + self.epoch_captures[broker][-1]
        self.send("register_broker", args, {"broker_epoch": name})
        registration = self.reference.brokers.get(broker)
        if registration is not None and registration.incarnation == f"label-{label}":
            self.epoch_captures[broker].append(name)

    @precondition(lambda self: self.reference.brokers)
    @rule(pick=small)
    def restart_broker(self, pick: int) -> None:
        """A broker process restarts: its session expires, a new incarnation registers and
        catches up (three steps, as a real restart produces them)."""
        brokers = self.registered()
        self.restart(brokers[pick % len(brokers)])

    def restart(self, broker: int) -> None:
        self.send("fence_broker", {"broker": broker})
        self.register_broker(broker, same=False, clean=False)
        self.send("unfence_broker", {"broker": broker})

    @precondition(lambda self: self.reference.brokers)
    @rule(pick=small)
    def unfence_broker(self, pick: int) -> None:
        brokers = self.registered()
        self.send("unfence_broker", {"broker": brokers[pick % len(brokers)]})

    @precondition(lambda self: self.reference.brokers)
    @rule(choice=st.integers(0, 2**10 - 1))
    def heartbeat(self, choice: int) -> None:
        """Packed: broker, WantFence, WantShutDown, not caught up, an older incarnation's epoch."""
        pick, flags, stale = bits(choice, 0, 5), bits(choice, 5, 3), bits(choice, 8, 2)
        brokers = self.registered()
        broker = brokers[pick % len(brokers)]
        args: dict[str, Any] = {
            "broker": broker, "want_fence": bool(flags & 1), "want_shut_down": bool(flags & 2),
            "caught_up": not flags & 4,
        }
        older = self.epoch_captures[broker][:-1]
        if stale == 3 and older:
            args["broker_epoch"] = "$" + older[-1]
        self.send("heartbeat", args)

    @precondition(lambda self: self.reference.brokers)
    @rule(pick=small)
    def fence_broker(self, pick: int) -> None:
        brokers = self.registered()
        self.send("fence_broker", {"broker": brokers[pick % len(brokers)]})

    @precondition(lambda self: self.reference.brokers)
    @rule(pick=small)
    def controlled_shutdown(self, pick: int) -> None:
        brokers = self.registered()
        self.send("controlled_shutdown", {"broker": brokers[pick % len(brokers)]})

    @rule(broker=st.sampled_from(BROKERS))
    def unregister_broker(self, broker: int) -> None:
        self.send("unregister_broker", {"broker": broker})

    @precondition(lambda self: self.context.supports("fail_over_controller"))
    @rule()
    def fail_over_controller(self) -> None:
        self.send("fail_over_controller", {})

    # -- topics, elections, reassignment -------------------------------------------------------

    @rule(topic=st.sampled_from(TOPICS), replication=st.integers(1, 3), count=st.integers(1, MAX_PARTITIONS),
          order=small)
    def create_topic(self, topic: str, replication: int, count: int, order: int) -> None:
        assignment = [rotated(BROKERS, order + p, replication) for p in range(count)]
        self.send("create_topic", {"topic": topic, "assignment": assignment})
        self.observe_partitions(topic, count)

    @precondition(lambda self: self.context.supports("create_partitions"))
    @rule(topic=st.sampled_from(TOPICS), more=st.integers(0, 2), replication=st.integers(0, 3), order=small)
    def create_partitions(self, topic: str, more: int, replication: int, order: int) -> None:
        """Grow a topic (controller.md §5): usually by one or two partitions with the topic's
        replication factor, on registered brokers where there are enough (an unregistered one, or
        none active, is INVALID_REPLICA_ASSIGNMENT, which was then most of what was reached);
        `more` 0 asks for no new partition (INVALID_PARTITIONS), and `replication` 3 for a
        different factor than the topic's (INVALID_REPLICA_ASSIGNMENT)."""
        existing = sum(1 for t, _ in self.partitions() if t == topic)
        first = self.reference.partition(topic, 0)
        factor = len(first.replicas) if first is not None else 1
        if replication == 3:
            factor = factor % len(BROKERS) + 1
        count = existing + more
        registered = tuple(self.registered())
        brokers = registered if len(registered) >= factor else BROKERS
        assignment = [rotated(brokers, order + p, factor) for p in range(existing, count)]
        self.send("create_partitions", {"topic": topic, "count": count, "assignment": assignment})
        self.observe_partitions(topic, count)

    def observe_partitions(self, topic: str, count: int) -> None:
        """Observe the partitions a request names from now on, created or not (a target that
        creates what the reference refused shows it there)."""
        for p in range(count):
            if (topic, p) not in self.run.partitions:
                self.run.partitions.append((topic, p))

    @precondition(lambda self: self.reference.partitions)
    @rule(pick=small, unclean=st.booleans())
    def elect_leaders(self, pick: int, unclean: bool) -> None:
        topic, partition = self.named_partition(pick)
        self.send("elect_leaders", {"type": "unclean" if unclean else "preferred",
                                    "partitions": [[topic, partition]]})

    @precondition(lambda self: self.reference.partitions)
    @rule(pick=small, replication=st.integers(1, 3), order=small)
    def reassign(self, pick: int, replication: int, order: int) -> None:
        topic, partition = self.named_partition(pick)
        self.send("reassign", {"topic": topic, "partition": partition,
                               "replicas": rotated(BROKERS, order, replication)})

    def named_partition(self, pick: int) -> tuple[str, int]:
        """A partition to name in a request: one that exists, or for the top sixteenth of `pick`
        an index past any the topic can have (controller.md §2.4 row 1, §3.2, §3.4: the request
        is answered UNKNOWN_TOPIC_OR_PARTITION and changes nothing)."""
        topic, partition = self.partitions()[pick % len(self.partitions())]
        return (topic, UNKNOWN_PARTITION + pick % 4) if pick >= 240 else (topic, partition)

    # -- AlterPartition, valid and adversarial ---------------------------------------------------

    @precondition(lambda self: self.reference.partitions)
    @rule(choice=st.integers(0, 2**26 - 1), unknown=st.integers(0, 31))
    def alter_partition(self, choice: int, unknown: int) -> None:
        """One packed draw (Hypothesis pays per draw; shrinking a packed integer towards 0 moves
        every field towards its plain value): 0 is a well-formed request from the leader with the
        current epochs and the full replica set. Non-zero fields add the adversarial variants:
        another requester, older or newer epochs, missing or foreign members, the leader left
        out, stale KIP-903 member epochs or -1, RECOVERING, and (one draw in sixteen) a partition
        the controller does not have: an index past the topic's (UNKNOWN_TOPIC_OR_PARTITION) or
        a topic never created (by name before v2: UNKNOWN_TOPIC_OR_PARTITION; by ID from v2:
        UNKNOWN_TOPIC_ID), controller.md §2.3 and §2.4 row 1. That one is a draw of its own:
        Hypothesis draws a wide integer's high bits rarely (it picks a small size most of the
        time), and packed into bits 26-30 it was reached by about one request in two hundred."""
        pick, version, requester = bits(choice, 0, 4), bits(choice, 4, 2), bits(choice, 6, 3)
        members, epochs = bits(choice, 9, 6), bits(choice, 15, 4)
        member_epochs, recovery = bits(choice, 19, 4), bits(choice, 23, 3)
        keys = self.partitions()
        topic, partition = keys[pick % len(keys)]
        state = self.reference.partition(topic, partition)
        assert state is not None
        low, high = self.reference.profile.alter_partition_versions
        chosen_version = max(low, high - version)
        sender = state.leader
        if requester == 6:
            sender = next(b for b in BROKERS if b != state.leader)
        elif requester == 7:
            sender = BROKERS[0]
        replicas = list(state.replicas)
        isr: list[int] = [r for i, r in enumerate(replicas) if not members & (1 << i)]
        if members & 8 and sender in isr:
            isr.remove(sender)
        elif sender not in isr and not members & 16:
            isr.insert(0, sender)
        if members & 32:
            isr.append(next(b for b in (*BROKERS, 5) if b not in replicas))
        deltas = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 1, 0, 0, -1, 1)
        known = unknown < 30  # a partition the controller does not have has no current values of its own
        leader_epoch = self.epoch("leader_epoch", state.leader_epoch, deltas[epochs], known)
        partition_epoch = self.epoch("partition_epoch", state.partition_epoch, deltas[(epochs * 7) % 16], known)
        isr_items: list[Any] = []
        for position, broker in enumerate(isr):
            if member_epochs >= 12 and position == member_epochs % max(1, len(isr)):
                isr_items.append(self.isr_item(broker, back=2))
            elif member_epochs in (10, 11):
                isr_items.append([broker, -1])
            else:
                isr_items.append(broker)
        if unknown == 30:
            partition = UNKNOWN_PARTITION + pick % 4
        elif unknown == 31:
            topic = UNKNOWN_TOPIC
        self.send("alter_partition", {
            "version": chosen_version, "broker": self.sender(sender, state.leader, known), "topic": topic,
            "partition": partition,
            "leader_epoch": leader_epoch, "partition_epoch": partition_epoch, "isr": isr_items,
            "leader_recovery_state": "RECOVERING" if recovery == 7 else "RECOVERED",
        })

    @precondition(lambda self: self.reference.partitions)
    @rule(choice=st.integers(0, 2**12 - 1))
    def leader_proposes(self, choice: int) -> None:
        """The common, well-formed case: the current leader, current epochs, the replica set
        (an expansion back to full) or the replica set minus one member (a shrink). With
        `remembered`, members carry the broker epoch the leader last saw from their fetches —
        an older incarnation's when they re-registered since (the KAFKA-14139 shape)."""
        pick, shrink, version = bits(choice, 0, 4), bits(choice, 4, 3), bits(choice, 7, 1)
        remembered = bits(choice, 8, 2)
        topic, partition = self.partitions()[pick % len(self.partitions())]
        state = self.reference.partition(topic, partition)
        assert state is not None
        low, high = self.reference.profile.alter_partition_versions
        isr: list[Any] = [r for i, r in enumerate(state.replicas) if i != shrink or r == state.leader]
        if remembered == 3:
            isr = [self.isr_item(b, back=2) for b in isr]
        self.send("alter_partition", {
            "version": max(low, high - version), "broker": self.sender(state.leader, state.leader), "topic": topic,
            "partition": partition, "leader_epoch": self.epoch("leader_epoch", state.leader_epoch),
            "partition_epoch": self.epoch("partition_epoch", state.partition_epoch), "isr": isr,
        })

    def rejoinable(self) -> list[tuple[str, int]]:
        """Partitions with a leader and a registered follower that could restart and rejoin."""
        keys = []
        for topic, partition in self.partitions():
            state = self.reference.partition(topic, partition)
            if state is not None and state.leader >= 0 and any(
                    r != state.leader and r in self.reference.brokers for r in state.replicas):
                keys.append((topic, partition))
        return keys

    @precondition(lambda self: self.rejoinable())
    @rule(pick=small, remembered=st.booleans())
    def restart_and_rejoin(self, pick: int, remembered: bool) -> None:
        """KAFKA-14139's shape (KIP-903): a follower restarts (its session ends, a new incarnation
        registers and is unfenced) and the leader asks to put it back in the ISR. With
        `remembered` the proposal carries the broker epoch the leader last saw the follower fetch
        with, the old incarnation's, which a 3.5+ controller refuses (INELIGIBLE_REPLICA,
        `ReplicationControlManager.validateAlterPartitionData`); otherwise the new one, which it
        accepts. The other members carry their current epochs and the request the current
        leader and partition epochs at the highest version, so that the broker epoch is the one
        thing that decides. Without this rule the shape was rare: by mid-run most brokers are
        fenced or shutting down, and a proposal naming one is refused for that first."""
        keys = self.rejoinable()
        topic, partition = keys[pick % len(keys)]
        state = self.reference.partition(topic, partition)
        assert state is not None
        followers = [r for r in state.replicas if r != state.leader and r in self.reference.brokers]
        follower = followers[pick // len(keys) % len(followers)]
        self.restart(follower)
        state = self.reference.partition(topic, partition)
        assert state is not None
        back = 2 if remembered and len(self.epoch_captures[follower]) > 1 else 1
        isr = [self.isr_item(b) for b in state.isr if b != follower] + [self.isr_item(follower, back)]
        self.send("alter_partition", {
            "version": self.reference.profile.alter_partition_versions[1],
            "broker": self.sender(state.leader, state.leader), "topic": topic, "partition": partition,
            "leader_epoch": self.epoch("leader_epoch", state.leader_epoch),
            "partition_epoch": self.epoch("partition_epoch", state.partition_epoch),
            "isr": isr,
        })

    def teardown(self) -> None:
        self.context.finish_run(self.run)


RULE_OPERATIONS: dict[str, tuple[str, ...]] = {
    "restart_broker": ("fence_broker", "register_broker", "unfence_broker"),
    "leader_proposes": ("alter_partition",),
    "restart_and_rejoin": ("fence_broker", "register_broker", "unfence_broker", "alter_partition"),
}
"""The operations a rule sends, where they are not just the operation of the rule's own name."""


def target_accepts_all(operations: tuple[str, ...]) -> Any:
    return lambda self: all(self.context.supports(op) for op in operations)


def honour_unsupported_operations(machine: type[RuleBasedStateMachine]) -> None:
    """Give every rule of `machine` the precondition that the target accepts the operations it
    sends: an adapter's declared `unsupported_operations` (e.g. kafka-jvm's `without=reassign`)
    are never generated, and neither is a rule that would send one among others. The one place
    where that is decided, so a rule added later is covered without a precondition of its own."""
    for name in dir(machine):
        member = getattr(machine, name)
        if getattr(member, RULE_MARKER, None) is not None:
            setattr(machine, name, precondition(target_accepts_all(RULE_OPERATIONS.get(name, (name,))))(member))


honour_unsupported_operations(ControllerMachine)


def bits(value: int, offset: int, width: int) -> int:
    return (value >> offset) & ((1 << width) - 1)


def rotated(brokers: tuple[int, ...], offset: int, length: int) -> list[int]:
    start = offset % len(brokers)
    ordered = brokers[start:] + brokers[:start]
    if offset // len(brokers) % 2:
        ordered = ordered[:1] + tuple(reversed(ordered[1:]))
    return list(ordered[:length])
