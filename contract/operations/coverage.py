"""Protocol-state coverage: which outcomes of the protocol a run reached.

A coverage point is `operation:OUTCOME` — the operation a step ran and the error code the
reference answered it with (the validation branch it took: controller.md §2.4 for AlterPartition),
or the bare operation name for one without an error code (faults: crash, drop, tick …), or a
protocol state `subject:STATE` the run went through (`STATES`: a leader with an ISR change
pending, a fenced broker …; at the cluster level read off the reference's ground truth by the
property monitor). The engine writes the points each run reached into its record (`coverage`);
the report lays them against `PROTOCOL_OUTCOMES` and `STATES`, so what was *not* exercised is as
visible as what was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from isrcheck.contract.operations.leader_branch import LEADER_BRANCHES

PROTOCOL_OUTCOMES: dict[str, tuple[str, ...]] = {
    # controller.md §2.2 (top level) then §2.4 (per partition), in Kafka's order
    "alter_partition": ("NONE", "NOT_CONTROLLER", "STALE_BROKER_EPOCH", "UNKNOWN_TOPIC_OR_PARTITION",
                        "UNKNOWN_TOPIC_ID", "FENCED_LEADER_EPOCH", "INVALID_REQUEST", "INVALID_UPDATE_VERSION",
                        "INELIGIBLE_REPLICA", "OPERATION_NOT_ATTEMPTED", "NEW_LEADER_ELECTED"),
    "register_broker": ("NONE", "DUPLICATE_BROKER_REGISTRATION"),  # controller.md §4.1
    "heartbeat": ("NONE", "STALE_BROKER_EPOCH"),  # §4.2
    "unregister_broker": ("NONE", "BROKER_ID_NOT_REGISTERED"),
    "create_topic": ("NONE", "TOPIC_ALREADY_EXISTS", "INVALID_REPLICA_ASSIGNMENT"),  # §5
    "create_partitions": ("NONE", "UNKNOWN_TOPIC_OR_PARTITION", "INVALID_PARTITIONS", "INVALID_REPLICA_ASSIGNMENT"),
    "elect_leaders": ("NONE", "ELECTION_NOT_NEEDED", "ELIGIBLE_LEADERS_NOT_AVAILABLE",
                      "PREFERRED_LEADER_NOT_AVAILABLE", "UNKNOWN_TOPIC_OR_PARTITION"),  # §3.2
    "reassign": ("NONE", "UNKNOWN_TOPIC_OR_PARTITION", "INVALID_REPLICA_ASSIGNMENT"),  # §3.4
    "produce": ("NONE", "REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS"),  # leader.md §8
}
"""Operation → the outcomes the protocol defines for it, as the reference can answer them."""

STATES: dict[str, tuple[str, ...]] = {
    # leader.md §2 (pending expand / shrink, and the B08 window: pending while a member lags), §12
    "leader": ("pending_expand", "pending_shrink", "pending_while_member_lags", "proposal_in_flight"),
    # controller.md §4: fenced, in controlled shutdown; a broker process's lifecycle and restarts
    "broker": ("fenced", "in_controlled_shutdown", "shutting_down", "stopped", "crashed", "restarted"),
    # controller.md §3: no leader, eligible leader replicas (KIP-966), fewer ISR members than min ISR
    "partition": ("offline", "elr", "under_min_isr"),
    # leader.md §4–§13: the decision branches of the partition leader (and its follower side)
    "leader_branch": LEADER_BRANCHES,
}
"""Subject → the protocol states a run can go through (`subject:STATE` points)."""

FAULTS: tuple[str, ...] = (
    "fence_broker", "controlled_shutdown", "fail_over_controller", "crash", "restart", "drop", "duplicate",
    "hold", "release", "lag_metadata", "sync_metadata", "tick", "events", "heal",
)
"""Fault and scheduling operations (the nemesis): reached or not, they have no error code."""


def outcome(result: Mapping[str, Any] | None) -> str | None:
    """The error code a result answers with: a top-level error first (it ends validation), then
    the per-partition one, then the first election error; None when the result has none."""
    if not isinstance(result, Mapping):
        return None
    top = result.get("top_level_error")
    if isinstance(top, str) and top != "NONE":
        return top
    error = result.get("error")
    if isinstance(error, str):
        return error
    errors = result.get("errors")
    if isinstance(errors, list):
        codes = [e[2] for e in errors if isinstance(e, list) and len(e) == 3 and isinstance(e[2], str)]
        if codes:
            return next((code for code in codes if code != "NONE"), "NONE")
    return None


def coverage_points(steps: Iterable[tuple[str, Mapping[str, Any] | None]],
                    states: Iterable[str] = ()) -> list[str]:
    """The distinct points (operation, reference result) pairs reach, with the `states` the run
    went through, sorted. A fault is counted by its bare name too when it answers with an error
    code (controlled_shutdown answers like a heartbeat), so "was this fault injected" has one
    point to read. A heartbeat answer that says the broker is fenced counts as `broker:fenced`
    (the controller level has no ground truth to read it from)."""
    points = set(states)
    for op, result in steps:
        code = outcome(result)
        points.add(op if code is None else f"{op}:{code}")
        if op in FAULTS:
            points.add(op)
        if isinstance(result, Mapping) and result.get("is_fenced") is True:
            points.add("broker:fenced")
    return sorted(points)
