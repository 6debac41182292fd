"""The scenario operations, their arguments and result fields (scenario-format.md tables).

One table drives both the loader's checks and the runner's defaults, so a new operation is one
entry here plus its execution in the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

REQUIRED = object()


@dataclass(frozen=True)
class Operation:
    level: str
    args: dict[str, tuple[str, object]]
    """argument → (kind, default or REQUIRED); a default of None means "absent"."""
    results: dict[str, str] = field(default_factory=dict)
    """result field → kind (what `expect` and `as` may name)."""
    is_check: bool = False
    observes: str | None = None
    """For a check: what it reads through `Target.observe` (default: `partition` / `broker`)."""
    expects: dict[str, object] | None = None
    """What a step expects when it names nothing (default: `error: NONE` where there is an error)."""


HEARTBEAT_RESULTS = {"error": "error", "is_caught_up": "bool", "is_fenced": "bool", "should_shut_down": "bool"}
PARTITION_RESULTS = {
    "leader": "int", "isr": "ints", "replicas": "ints", "leader_epoch": "int", "partition_epoch": "int",
    "leader_recovery_state": "lrs", "elr": "intset", "last_known_elr": "intset", "adding": "ints", "removing": "ints",
}
BROKER_RESULTS = {"registered": "bool", "fenced": "bool", "in_controlled_shutdown": "bool", "broker_epoch": "int"}

OPERATIONS: dict[str, Operation] = {
    "register_broker": Operation(
        "controller",
        {"broker": ("int", REQUIRED), "incarnation": ("label", None), "previous_broker_epoch": ("epoch", None)},
        {"error": "error", "broker_epoch": "int"},
    ),
    "heartbeat": Operation(
        "controller",
        {
            "broker": ("int", REQUIRED), "broker_epoch": ("epoch", "current"), "want_fence": ("bool", False),
            "want_shut_down": ("bool", False), "caught_up": ("bool", True),
        },
        HEARTBEAT_RESULTS,
    ),
    "unfence_broker": Operation("controller", {"broker": ("int", REQUIRED)}, HEARTBEAT_RESULTS),
    "fence_broker": Operation("controller", {"broker": ("int", REQUIRED)}, {}),
    "controlled_shutdown": Operation("controller", {"broker": ("int", REQUIRED)}, HEARTBEAT_RESULTS),
    "unregister_broker": Operation("controller", {"broker": ("int", REQUIRED)}, {"error": "error"}),
    "create_topic": Operation(
        "controller",
        {"topic": ("str", REQUIRED), "assignment": ("assignment", REQUIRED), "configs": ("mapping", None)},
        {"error": "error"},
    ),
    "create_partitions": Operation(
        "controller",
        {"topic": ("str", REQUIRED), "count": ("int", REQUIRED), "assignment": ("assignment", REQUIRED)},
        {"error": "error"},
    ),
    "alter_partition": Operation(
        "controller",
        {
            "version": ("version", None), "broker": ("sender", REQUIRED), "broker_epoch": ("epoch", "current"),
            "topic": ("str", REQUIRED), "partition": ("int", 0), "leader_epoch": ("epoch", "current"),
            "partition_epoch": ("epoch", "current"), "isr": ("isr", REQUIRED),
            "leader_recovery_state": ("lrs", "RECOVERED"),
        },
        {
            "top_level_error": "error", "error": "error", "leader": "int", "leader_epoch": "int", "isr": "ints",
            "partition_epoch": "int", "leader_recovery_state": "lrs",
        },
    ),
    "elect_leaders": Operation(
        "controller",
        {"type": ("election", REQUIRED), "partitions": ("partitions", REQUIRED)},
        {"errors": "election_errors"},
    ),
    "reassign": Operation(
        "controller",
        {"topic": ("str", REQUIRED), "partition": ("int", 0), "replicas": ("ints", REQUIRED)},
        {"error": "error"},
    ),
    "fail_over_controller": Operation("controller", {"zombie": ("bool", False)}, {}),
    "check_partition": Operation(
        "controller", {"topic": ("str", REQUIRED), "partition": ("int", 0)}, PARTITION_RESULTS, is_check=True
    ),
    "check_broker": Operation("controller", {"broker": ("int", REQUIRED)}, BROKER_RESULTS, is_check=True),
}

SELECTOR_ARGS: dict[str, tuple[str, object]] = {"kind": ("str", None), "from": ("label", None), "to": ("label", None)}
"""Which in-flight messages a network operation means (docs/cluster-scenarios.md, Messages)."""
LEADER_RESULTS = {
    "leader": "int", "role": "str", "leader_epoch": "int", "partition_epoch": "int", "isr": "ints",
    "maximal_isr": "ints", "pending": "str", "proposed_isr": "ints", "hw": "int", "leo": "int",
    "epoch_start_offset": "int",
}
REPLICA_RESULTS = {
    "role": "str", "leader": "int", "leader_epoch": "int", "partition_epoch": "int", "hw": "int", "leo": "int",
    "epochs": "ints", "status": "str", "broker_epoch": "int", "metadata_offset": "int",
}

CLUSTER_OPERATIONS: dict[str, Operation] = {
    "produce": Operation(
        "cluster",
        {"topic": ("str", REQUIRED), "partition": ("int", 0), "acks": ("label", "all"), "records": ("int", 1),
         "to": ("int", None)},
        {"error": "error", "offset": "int", "request": "int", "status": "str"},
    ),
    "fetch": Operation("cluster", {"broker": ("int", REQUIRED), "leader": ("int", None)}, {"sent": "int"}),
    "deliver": Operation("cluster", {**SELECTOR_ARGS, "count": ("int", None)}, {"delivered": "int"}),
    "hold": Operation("cluster", dict(SELECTOR_ARGS), {"held": "int"}),
    "release": Operation("cluster", dict(SELECTOR_ARGS), {"held": "int"}),
    "drop": Operation("cluster", {**SELECTOR_ARGS, "count": ("int", None)}, {"dropped": "int"}),
    "duplicate": Operation("cluster", {**SELECTOR_ARGS, "count": ("int", None)}, {"duplicated": "int"}),
    "tick": Operation("cluster", {"ms": ("int", REQUIRED)}, {"now_ms": "int"}),
    "events": Operation("cluster", {"seed": ("int", 0), "count": ("int", 1)}, {"events": "int", "moved": "str"}),
    "crash": Operation("cluster", {"broker": ("int", REQUIRED), "lose": ("str", "none")}, {}),
    "restart": Operation("cluster", {"broker": ("int", REQUIRED)}, {"registered": "bool", "broker_epoch": "int"}),
    "lag_metadata": Operation("cluster", {"broker": ("int", REQUIRED)}, {"metadata_offset": "int"}),
    "sync_metadata": Operation(
        "cluster", {"broker": ("int", REQUIRED), "offset": ("int", None)}, {"metadata_offset": "int"}
    ),
    "flush": Operation("cluster", {"broker": ("int", REQUIRED)}, {}),
    "heal": Operation(
        "cluster", {"restart": ("bool", False), "probe": ("bool", False), "ms": ("int", None)}, {"live": "str"},
        expects={"live": "holds"},
    ),
    "check_property": Operation(
        "cluster", {"name": ("str", REQUIRED)}, {"status": "str", "violations": "int"}, is_check=True,
        observes="property", expects={"status": "holds"},
    ),
    "check_leader": Operation(
        "cluster", {"topic": ("str", REQUIRED), "partition": ("int", 0), "broker": ("int", None)}, LEADER_RESULTS,
        is_check=True, observes="leader",
    ),
    "check_replica": Operation(
        "cluster", {"broker": ("int", REQUIRED), "topic": ("str", REQUIRED), "partition": ("int", 0)},
        REPLICA_RESULTS, is_check=True, observes="replica",
    ),
    "check_produce": Operation(
        "cluster", {"request": ("int", REQUIRED)}, {"status": "str", "error": "error", "offset": "int"},
        is_check=True, observes="produce",
    ),
    "check_messages": Operation(
        "cluster", dict(SELECTOR_ARGS), {"count": "int", "held": "int"}, is_check=True, observes="messages",
    ),
}
"""Cluster-level operations (docs/cluster-scenarios.md). Controller-level operations also run in
cluster scenarios, against the cluster's controller or through its brokers (same doc)."""
OPERATIONS.update(CLUSTER_OPERATIONS)

SET_FIELDS = frozenset({"elr", "last_known_elr"})
"""scenario-format.md: these compare as sets; every other list compares in order."""


def default_expectation(op: str) -> dict[str, object]:
    """scenario-format.md: `alter_partition` expects both errors NONE; others `error: NONE` if they
    have one, or what the operation declares (`Operation.expects`)."""
    if op == "alter_partition":
        return {"top_level_error": "NONE", "error": "NONE"}
    spec = OPERATIONS[op]
    if spec.expects is not None:
        return dict(spec.expects)
    if "error" in spec.results and not spec.is_check:
        return {"error": "NONE"}
    return {}
