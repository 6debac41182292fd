"""P-SHRINK: a leader drops a follower that stopped catching up, within a bounded time
(leader.md §6). Kafka 3.9.0: `ReplicaManager.startup` schedules the `isr-expiration` task every
replica.lag.time.max.ms / 2 ms, which calls `Partition.maybeShrinkIsr` on every online partition;
a leader whose state is a `CommittedPartitionState` (no ISR change pending or in flight,
`PartitionState.isInflight`) and whose `getOutOfSyncReplicas` is not empty proposes the committed
ISR minus those replicas (`prepareIsrShrink`). A follower is out of sync when
`ReplicaState.isCaughtUp` is false: its fetch offset differs from the leader's log end offset
(KAFKA-7152) and it last caught up (`Replica.updateFetchStateOrThrow`'s lastCaughtUpTime,
KAFKA-4485) more than replica.lag.time.max.ms ago.

The bound: a leader that is alive, whose ISR state has stayed committed, with a follower in its
ISR continuously out of sync, has proposed a shrink (so its state is no longer that committed
one) within one check period of the follower falling out of sync — a check runs in every period,
and the first one that sees these conditions proposes. So once more than `period + SLACK_MS` has
passed since the latest of (the follower last caught up + replica.lag.time.max.ms + 1, its fetch
offset last differing from the leader's end after being equal, the leader's ISR state last
changing), the property is violated. Whether the shrink is accepted is not its business (the
controller may refuse it; P-LIVE and P-ELIG judge what follows); a proposal refused at once
(OPERATION_NOT_ATTEMPTED, §9) changes the state and back, which restarts the clock, as it
restarts Kafka's.

Without it a leader that keeps a laggard in its ISR breaks no safety property — it only holds
acks=all writes back — and the heal reconnects the follower before P-LIVE judges.

Judged on the ground truth only (the harness's own computation of each follower's progress from
the fetches the leader accepted, not the leader's bookkeeping): a black box shows neither when a
follower last caught up nor whether its leader had a change pending, so for a black-box run the
property is unknown.
"""

from __future__ import annotations

from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.ground_truth import ClusterObservation, FollowerProgress, ReplicaView

SLACK_MS = 1
"""Events of one millisecond are ordered: a follower may fall out of sync just after the check
due at that same millisecond ran."""


def check_period_ms(lag_ms: int) -> int:
    """`ReplicaManager.startup`: `config.replicaLagTimeMaxMs / 2` (integer division)."""
    return lag_ms // 2


def out_of_sync_from_ms(follower: FollowerProgress, lag_ms: int) -> int:
    """The first millisecond `isCaughtUp` is false for this follower (its fetch offset differs
    from the leader's end since `behind_since_ms`, and now − lastCaughtUpTime > lag)."""
    return max(follower.caught_up_ms + lag_ms + 1, follower.behind_since_ms)


def overdue(view: ReplicaView, follower: FollowerProgress, lag_ms: int, now_ms: int) -> int | None:
    """How long past the bound this leader has kept `follower` without proposing a shrink, or None."""
    since = max(out_of_sync_from_ms(follower, lag_ms), view.state_since_ms)
    late = now_ms - since - check_period_ms(lag_ms) - SLACK_MS
    return late if late > 0 else None


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-SHRINK: no alive leader with a committed ISR state keeps an out-of-sync follower in its
    ISR longer than one isr-expiration period."""
    violations = []
    now = observation.now_ms
    for view in observation.replicas.values():
        if view.role != "leader" or view.pending != "none" or not view.behind or view.state_since_ms < 0:
            continue
        broker = observation.brokers.get(view.broker)
        if broker is None or not broker.alive or broker.replica_lag_time_max_ms <= 0:
            continue
        lag = broker.replica_lag_time_max_ms
        for follower in view.behind:
            if follower.broker == view.broker or follower.broker not in view.isr:
                continue
            late = overdue(view, follower, lag, now)
            if late is None:
                continue
            since = max(out_of_sync_from_ms(follower, lag), view.state_since_ms)
            where = tp_name(view.tp)
            violations.append(Violation(
                "P-SHRINK", observation.step,
                f"{where}: leader {view.broker} (epoch {view.leader_epoch}) kept follower {follower.broker} in its "
                f"ISR {list(view.isr)}, out of sync since t={since} ms with no ISR change pending, past the "
                f"{check_period_ms(lag)} ms isr-expiration period without proposing a shrink",
                {"partition": where, "leader": view.broker, "leader_epoch": view.leader_epoch,
                 "follower": follower.broker, "isr": list(view.isr), "now_ms": now, "out_of_sync_since_ms": since,
                 "caught_up_ms": follower.caught_up_ms, "fetch_offset": follower.fetch_offset,
                 "leader_leo": view.leo, "replica_lag_time_max_ms": lag, "late_ms": late},
            ))
    return violations


PROPERTY = Property("P-SHRINK", ground_truth=ground_truth)
