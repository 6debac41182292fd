"""A black-box cluster run as a history (Jepsen's history/checker split): the engine executes each
operation on the target, then observes every partition it knows of, and appends both — with the
wall time since the run started — to one list of plain JSON values. The properties are judged on
that list by `isrcheck.conformance.properties.black_box_history`, here or offline from a record
(`isrcheck check`). Every run ends the same way: `heal`, an observation, and a `consume` of every
topic (what P-ACK and P-LIVE are judged on).

History entries:
* ``{"type": "op", "i", "t", "op", "args", "result"}`` (``result`` has ``"exception"`` when the
  target raised);
* ``{"type": "observe", "i", "t", "partition": "topic-p", "view": {exists, leader, isr, replicas,
  leader_epoch, hw, brokers?, metadata_after_s?}, "t_end"}`` — ``t`` is when the Metadata in the view
  was answered, ``t_end`` when the observation returned (records before this change have only
  ``t``, the end).
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from isrcheck.adapters.base import Target
from isrcheck.conformance.generator.black_box_faults import COMPOSITES
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.catalogue import judge_views as check_history
from isrcheck.conformance.properties.checker import Violation

History = list[dict[str, Any]]

FINAL_STEPS = ("heal", "consume")


@dataclass
class HistoryRun:
    target: Target
    release: str
    history: History = field(default_factory=list)
    topics: set[str] = field(default_factory=set)
    started: float = field(default_factory=time.monotonic)

    def now(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def op(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        t = self.now()
        try:
            result = dict(self.target.execute(op, args))
        except Exception as error:  # a real system answers in many ways; the history keeps what happened
            result = {"exception": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=3)}
        self.history.append({"type": "op", "i": len(self.history), "t": t, "op": op, "args": dict(args),
                             "result": result, "t_end": self.now()})
        if op == "create_topic":
            self.topics.add(str(args["topic"]))
        return result

    def observe_all(self) -> None:
        """One observation per topic. ``t`` is when the view's Metadata was answered — the start of
        the observation plus the target's ``metadata_after_s``, or the start when it does not say —
        not when the observation returned: a ListOffsets to a paused leader waits its request
        timeout after the Metadata answer, and the ISR seen is as old as that answer."""
        for topic in sorted(self.topics):
            started = self.now()
            view = dict(self.target.observe("partition", {"topic": topic, "partition": 0}))
            seen = round(started + float(view.get("metadata_after_s", 0.0)), 3)
            self.history.append({"type": "observe", "i": len(self.history), "t": seen,
                                 "partition": f"{topic}-0", "view": view, "t_end": self.now()})

    def step(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        result = self.op(op, args)
        self.observe_all()
        return result

    def finish(self, heal_timeout_ms: int = 60000) -> None:
        """The ending every run shares: heal, observe, read every topic back."""
        self.op("heal", {"timeout_ms": heal_timeout_ms})
        self.observe_all()
        for topic in sorted(self.topics):
            self.op("consume", {"topic": topic})

    def last_view(self, topic: str) -> dict[str, Any] | None:
        for e in reversed(self.history):
            if e["type"] == "observe" and e["partition"] == f"{topic}-0" and e["view"].get("exists"):
                return e["view"]
        return None


STALE_EXPANSION = "stale_expansion"
"""A composite fault (KIP-903's family; docs/real-kafka.md, "Found by generation"): its roles are
bound when it runs, from the last observation, and it runs as the primitive operations of
`stale_expansion_steps` — which are what the history records (each with ``"by": STALE_EXPANSION``)."""


def stale_expansion_steps(args: dict[str, Any], view: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """A member rejoins while the leader's AlterPartition is held, something happens to the member
    while the expansion is in flight, the expansion is delivered, then something happens to the
    leader. Drawn (`args`): which follower (`member`, an index into the followers in replica
    order), what happens to it (`lose`: restart with its log directory kept or emptied), whether
    the leader's replication listener is cut meanwhile (`isolate`), what happens to the leader
    after (`leader_fault`: crash, pause, clean_restart or none), how many records are acknowledged
    while the member is out (`records`), and how long the delivered expansion stands first
    (`after_ms`). Bound at run time: the leader and the followers of the last observed view (no
    leader: nothing to do). KIP-903's interleaving is the point lose=disk, isolate, leader_fault≠none."""
    if view is None or int(view.get("leader", -1)) < 100:
        return []
    topic = str(args["topic"])
    leader = int(view["leader"]) - 100
    followers = [int(r) - 100 for r in view.get("replicas", []) if int(r) - 100 != leader]
    if not followers:
        return []
    member = followers[int(args.get("member", 0)) % len(followers)]
    by = {"by": STALE_EXPANSION}
    steps: list[tuple[str, dict[str, Any]]] = [
        ("pause", {"broker": member, **by}),
        ("produce", {"topic": topic, "records": 1, "acks": "1", **by}),  # a follower at the leader's end never lags
        ("wait_isr", {"topic": topic, "without": [member], "timeout_ms": 20000, **by}),
        ("produce", {"topic": topic, "records": int(args.get("records", 3)), "acks": "all", **by}),
        ("hold_api", {"broker": leader, "api": "AlterPartition", **by}),
        ("resume", {"broker": member, **by}),
        ("wait_held", {"broker": leader, "api": "AlterPartition", "timeout_ms": 20000, **by}),
    ]
    if args.get("isolate"):
        steps.append(("net", {"broker": leader, "link": "replication", "mode": "cut", **by}))
    steps += [
        ("restart", {"broker": member, "lose": str(args.get("lose", "none")), **by}),
        ("tick", {"ms": 3000, **by}),
        ("release_api", {"broker": leader, "api": "AlterPartition", **by}),
        ("tick", {"ms": int(args.get("after_ms", 3000)), **by}),
    ]
    fault = str(args.get("leader_fault", "none"))
    if fault != "none":
        steps += [(fault, {"broker": leader, **by}), ("tick", {"ms": 6000, **by})]
    return steps


def run_history(target: Target, release: str, steps: list[tuple[str, dict[str, Any]]],
                config: HistoryConfig, heal_timeout_ms: int = 60000) -> tuple[History, list[Violation]]:
    """Open a fresh system, run `steps` (each followed by an observation; a composite fault as its
    primitive operations, roles bound from the last observation), finish, close; judge."""
    target.open(release, {})
    run = HistoryRun(target, release)
    failed = True
    try:
        for op, args in steps:
            if op == STALE_EXPANSION or op in COMPOSITES:
                expand = stale_expansion_steps if op == STALE_EXPANSION else COMPOSITES[op]
                for inner_op, inner_args in expand(args, run.last_view(str(args["topic"]))):
                    run.step(inner_op, inner_args)
                continue
            run.step(op, args)
        run.finish(heal_timeout_ms)
        violations = check_history(run.history, config)
        failed = bool(violations)
        return run.history, violations
    finally:
        if failed and hasattr(target, "keep_logs"):
            target.keep_logs = True  # a launcher keeps a failed run's logs (and prints where)
        target.close()


def kip903_steps(hold_timeout_ms: int = 30000) -> list[tuple[str, dict[str, Any]]]:
    """KIP-903's motivating interleaving (KAFKA-14139, bugs.md B01) on real brokers: leader 1
    (replicas [1, 2], min.insync.replicas=1), follower 2 falls out of the ISR (SIGSTOP) and
    records are acknowledged with ISR {1}; 1's AlterPartition adding 2 is held in flight; 2 is
    cut off from 1, loses its disk and restarts (new broker epoch, empty log); the held request is
    released (accepted before KIP-903: 2 is a registered, unfenced broker); 1 fails, so 2 — if in
    the ISR — is elected with an empty log."""
    topic = "kip903"
    return [
        ("create_topic", {"topic": topic, "replicas": [1, 2], "configs": {"min.insync.replicas": "1"}}),
        ("produce", {"topic": topic, "records": 3, "acks": "all"}),
        ("pause", {"broker": 2}),
        ("wait_isr", {"topic": topic, "isr": [1], "timeout_ms": 20000}),
        ("produce", {"topic": topic, "records": 5, "acks": "all"}),
        ("hold_alter_partition", {"broker": 1}),
        ("resume", {"broker": 2}),
        ("wait_held", {"broker": 1, "timeout_ms": hold_timeout_ms}),
        ("net", {"broker": 1, "link": "replication", "mode": "cut"}),
        ("restart", {"broker": 2, "lose": "disk"}),
        ("tick", {"ms": 3000}),
        ("net", {"broker": 1, "link": "controller", "mode": "pass"}),
        ("tick", {"ms": 3000}),
        ("crash", {"broker": 1}),
        ("tick", {"ms": 3000}),
        ("net", {"broker": 1, "link": "replication", "mode": "pass"}),
    ]


def equal_epoch_steps() -> list[tuple[str, dict[str, Any]]]:
    """conformance/scenarios/cluster/equal_epoch_metadata_replaces_pending_expansion.yaml on real
    brokers (leader.md §5, §7, §10), for a cluster with a long session timeout (60 s, so paused
    followers stay unfenced): A=1 leads [1, 2, 3]; B=2 and C=3 fall out of the ISR (SIGSTOP, then
    an acks=1 record: a follower at the leader's end offset is never out of sync); A's
    metadata log is held (its Fetch to the controller); B rejoins (A learns the commit from the
    AlterPartition response); A's next AlterPartition is held; C catches up and is proposed; C stops
    again; A's metadata is released — the ChangeRecord of B's admission has A's partition epoch and,
    per leader.md §10, replaces the pending expansion; C's lag window passes; records are acknowledged
    with ISR {A, B}; the held expansion is released. If the controller accepts it, C (stopped since
    before those records) is in the ISR below the high watermark; A and B are then killed at once
    (before A's shrink task removes C), C is resumed and, once A and B are fenced, is the ISR
    member left to elect; the heal shows whether the acknowledged records survived."""
    topic = "eqepoch"
    return [
        ("create_topic", {"topic": topic, "replicas": [1, 2, 3]}),
        ("produce", {"topic": topic, "records": 2, "acks": "all"}),
        ("pause", {"broker": 2}),
        ("pause", {"broker": 3}),
        ("produce", {"topic": topic, "records": 1, "acks": "1"}),  # a caught-up follower never lags otherwise
        ("wait_isr", {"topic": topic, "isr": [1], "timeout_ms": 20000}),
        ("hold_api", {"broker": 1, "api": "Fetch"}),
        ("resume", {"broker": 2}),
        ("wait_isr", {"topic": topic, "isr": [1, 2], "timeout_ms": 20000}),
        ("hold_api", {"broker": 1, "api": "AlterPartition"}),
        ("resume", {"broker": 3}),
        ("wait_held", {"broker": 1, "api": "AlterPartition", "timeout_ms": 20000}),
        ("pause", {"broker": 3}),
        ("release_api", {"broker": 1, "api": "Fetch"}),
        ("tick", {"ms": 5000}),
        ("produce", {"topic": topic, "records": 3, "acks": "all"}),
        ("release_api", {"broker": 1, "api": "AlterPartition"}),
        ("wait_isr", {"topic": topic, "isr": [1, 2, 3], "timeout_ms": 8000}),
        ("crash", {"broker": 1}),  # before A's ISR-shrink task (every 1.5 s) removes C again
        ("crash", {"broker": 2}),
        ("resume", {"broker": 3}),
        ("tick", {"ms": 70000}),  # A and B are fenced after the 60 s session: C is the ISR member left
    ]


def equal_epoch_default_steps(trigger: str = "shutdown", first_change: str = "shrink"
                              ) -> list[tuple[str, dict[str, Any]]]:
    """The equal-epoch loss with Kafka's default timings (`kafka-defaults=1`: session 9 s,
    replica.lag.time.max.ms 30 s, controller.socket.timeout.ms 30 s), no broker stopped, and one
    controlled shutdown (`trigger`, or `crash`) as the only failure. Topic [1, 2, 3]: leader 1;
    2 — next in replica order, so the controller elects it first — is the member that lags; 3
    stays in sync. What stalls, and only that: 2's replication fetches to 1 (at 1's replication
    proxy, by the fetcher's client id; 2 keeps heartbeating, so it stays unfenced), 1's metadata
    log (its Fetch to the controller) between its shrink of 2 and its proposal to add 2 back, and
    that proposal (1's AlterPartition; past controller.socket.timeout.ms it is sent again, the
    same request: AlterPartitionManager retries without end).

    1 shrinks the ISR to {1, 3} after 2 has lagged for replica.lag.time.max.ms (held, then let
    through while 1's metadata log is held: 1 learns partition epoch e+1 from the AlterPartition
    response alone); 2 catches up and 1 proposes {1, 2, 3} (held); 2's fetches stall again; 1's
    metadata log resumes and delivers the shrink's record — partition epoch e+1, equal to 1's —
    which `Partition.makeLeader` (3.9.0) applies, replacing the pending expansion with the
    committed ISR {1, 3}. From 3.7 the high watermark still waits for a replica caught up within
    replica.lag.time.max.ms (`Partition.maybeIncrementLeaderHW`, `shouldWaitForReplicaToJoinIsr`),
    so the records are produced once 2 last caught up more than 30 s ago; 1 and 3 acknowledge them
    (min.insync.replicas 2). The held proposal then reaches the controller, which accepts it
    (partition epoch e+1 is current): 2 is in the ISR three records short of the high watermark,
    until 1's next ISR-expiration check (every replica.lag.time.max.ms / 2, at a fixed rate from
    the first check, which the first `wait_held` marked) removes it again. Inside that window 1
    shuts down cleanly; the controller moves leadership to the first live ISR member in replica
    order, 2, and 3 truncates to 2's log. The heal shows whether the acknowledged records survived.

    `first_change="expansion"`: the change 1 learns from its answer is the admission of 3 instead of
    the shrink of 2 (3.3 and 3.5 need it: their controller bumps the leader epoch on every ISR
    shrink — `PartitionChangeBuilder` before KAFKA-15021 — so 1 ignores the shrink's answer as
    stale and applies the record as a new leader epoch, which resets everything). Both 2 and 3
    stall and leave the ISR first; 1's metadata log is held; 3 catches up and is admitted (1
    learns partition epoch e+1 from the answer); then 2 as above. One more follower stalls."""
    if first_change == "expansion":
        return equal_epoch_after_expansion_steps(trigger)
    topic = "eqdefault"
    return [
        ("create_topic", {"topic": topic, "replicas": [1, 2, 3]}),
        ("produce", {"topic": topic, "records": 2, "acks": "all"}),
        ("hold_follower", {"broker": 1, "follower": 2}),
        ("produce", {"topic": topic, "records": 1, "acks": "1"}),  # a follower at the leader's end never lags
        ("hold_api", {"broker": 1, "api": "AlterPartition"}),
        # 1's ISR-expiration check proposes the shrink: lag 30 s, checked every 15 s; marks the check's phase
        ("wait_held", {"broker": 1, "api": "AlterPartition", "timeout_ms": 75000, "mark": "isr_check"}),
        ("hold_api", {"broker": 1, "api": "Fetch"}),
        ("release_api", {"broker": 1, "api": "AlterPartition"}),  # the shrink: 1 learns epoch e+1 from the answer
        ("wait_isr", {"topic": topic, "isr": [1, 3], "timeout_ms": 15000}),
        ("hold_api", {"broker": 1, "api": "AlterPartition"}),
        ("release_follower", {"broker": 1, "follower": 2}),  # 2 catches up: 1 proposes {1, 2, 3}
        ("wait_held", {"broker": 1, "api": "AlterPartition", "timeout_ms": 20000}),
        ("hold_follower", {"broker": 1, "follower": 2, "mark": "caught_up"}),
        ("release_api", {"broker": 1, "api": "Fetch"}),  # the shrink's record: partition epoch e+1, equal to 1's
        ("tick", {"ms": 32000}),  # 2 is no longer 'caught up' for the high watermark (replica.lag.time.max.ms)
        ("tick", {"align": "isr_check", "period_ms": 15000, "at_ms": 1000}),  # just after a check
        ("produce", {"topic": topic, "records": 3, "acks": "all"}),
        ("release_api", {"broker": 1, "api": "AlterPartition"}),  # the held proposal, now stale
        (trigger, {"broker": 1}),
        ("tick", {"ms": 5000}),
        ("release_follower", {"broker": 1, "follower": 2}),
    ]


def equal_epoch_after_expansion_steps(trigger: str) -> list[tuple[str, dict[str, Any]]]:
    """`equal_epoch_default_steps(first_change="expansion")`: the equal-epoch record is that of 3's
    admission, which 1 learnt from its AlterPartition answer while its metadata log was held."""
    topic = "eqdefault"
    return [
        ("create_topic", {"topic": topic, "replicas": [1, 2, 3]}),
        ("produce", {"topic": topic, "records": 2, "acks": "all"}),
        ("hold_follower", {"broker": 1, "follower": 2}),
        ("hold_follower", {"broker": 1, "follower": 3}),
        ("produce", {"topic": topic, "records": 1, "acks": "1"}),  # both lag
        ("hold_api", {"broker": 1, "api": "AlterPartition"}),
        ("wait_held", {"broker": 1, "api": "AlterPartition", "timeout_ms": 75000, "mark": "isr_check"}),
        ("release_api", {"broker": 1, "api": "AlterPartition"}),  # the shrink to {1}, applied normally
        ("wait_isr", {"topic": topic, "isr": [1], "timeout_ms": 15000}),
        ("tick", {"ms": 2000}),  # 1's metadata image has the shrink too (3.3/3.5: a new leader epoch)
        ("hold_api", {"broker": 1, "api": "Fetch"}),
        ("release_follower", {"broker": 1, "follower": 3}),  # 3 admitted: 1 learns epoch e+1 from the answer
        ("wait_isr", {"topic": topic, "isr": [1, 3], "timeout_ms": 15000}),
        ("hold_api", {"broker": 1, "api": "AlterPartition"}),
        ("release_follower", {"broker": 1, "follower": 2}),  # 2 catches up: 1 proposes {1, 3, 2}
        ("wait_held", {"broker": 1, "api": "AlterPartition", "timeout_ms": 20000}),
        ("hold_follower", {"broker": 1, "follower": 2, "mark": "caught_up"}),
        ("release_api", {"broker": 1, "api": "Fetch"}),  # 3's admission: partition epoch e+1, equal to 1's
        ("tick", {"ms": 32000}),  # 3.6+: 2 no longer 'caught up' for the high watermark
        ("tick", {"align": "isr_check", "period_ms": 15000, "at_ms": 1000}),
        ("produce", {"topic": topic, "records": 3, "acks": "all"}),
        ("release_api", {"broker": 1, "api": "AlterPartition"}),
        (trigger, {"broker": 1}),
        ("tick", {"ms": 5000}),
        ("release_follower", {"broker": 1, "follower": 2}),
    ]
