"""A black-box cluster run (Jepsen's history/checker split): the run (`run.black_box_run`)
executes each operation on the target, then views every partition it knows of, and records both
with their wall times in its history; the black-box forms of the properties judge that history
(`step_checkers.BlackBoxChecker`) once it is finished, here or offline from a record
(`isrcheck check`; the record's `entries`: contract/history/black_box_json.py). Every run ends the
same way: `heal`, an observation, a `consume` of every topic (what P-ACK and P-LIVE are judged
on) and, from a target that declares `observes_replica_logs`, a `replica_logs` read of every
replica's log of every partition (what P-LOG is judged on; without it P-LOG is unknown). A
composite fault is bound to roles and run as primitive operations here.
"""

from __future__ import annotations

from typing import Any

from isrcheck.adapters.base import REPLICA_LOGS, Target
from isrcheck.conformance.engine.run import Run, black_box_run
from isrcheck.conformance.generator.black_box_faults import COMPOSITES, roles
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.contract.history.black_box_json import black_box_entries
from isrcheck.contract.operations.findings import Finding
from isrcheck.contract.operations.step import Step

History = list[dict[str, Any]]

FINAL_STEPS = ("heal", "consume", REPLICA_LOGS)
"""The ending every run shares: not part of what was drawn (a counterexample, a replay)."""


def primitive(op: str, args: dict[str, Any]) -> Step:
    return Step(0, op, dict(args), None, {}, None)


def last_view(run: Run, topic: str) -> dict[str, Any] | None:
    """The last view of `topic`'s partition 0 that showed it to exist."""
    for step in reversed(run.history.steps):
        for view in reversed(step.target.views or ()):
            if view["partition"] == f"{topic}-0" and view["view"].get("exists"):
                return dict(view["view"])
    return None


def finish(run: Run, heal_timeout_ms: int = 60000) -> list[Finding]:
    """The ending every run shares: heal, observe, read every topic back, read every replica's log
    (a target that can); then the history is judged."""
    run.step(primitive("heal", {"timeout_ms": heal_timeout_ms}))
    topics = sorted({str(step.args["topic"]) for step in run.history if step.op == "create_topic"})
    for topic in topics:
        run.step(primitive("consume", {"topic": topic}))
    if getattr(run.target, "observes_replica_logs", False):
        for topic in topics:
            run.step(primitive(REPLICA_LOGS, {"topic": topic, "partition": 0}))
    return run.finish()


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
    bound = roles(view)
    if bound is None:
        return []
    leader, followers = bound
    topic = str(args["topic"])
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
                config: HistoryConfig, heal_timeout_ms: int = 60000) -> tuple[History, list[Finding]]:
    """Open a fresh system, run `steps` (each followed by an observation; a composite fault as its
    primitive operations, roles bound from the last observation), finish, close; the history's
    entries and the findings its judgement gave."""
    target.open(release, {})
    run = black_box_run(target, release, config)
    failed = True
    try:
        for op, args in steps:
            if op == STALE_EXPANSION or op in COMPOSITES:
                expand = stale_expansion_steps if op == STALE_EXPANSION else COMPOSITES[op]
                for inner_op, inner_args in expand(args, last_view(run, str(args["topic"]))):
                    run.step(primitive(inner_op, inner_args))
                continue
            run.step(primitive(op, args))
        findings = finish(run, heal_timeout_ms)
        failed = bool(findings)
        return black_box_entries(run.history), findings
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
