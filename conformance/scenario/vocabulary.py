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
            "version": ("version", None), "broker": ("int", REQUIRED), "broker_epoch": ("epoch", "current"),
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
    "fail_over_controller": Operation("controller", {}, {}),
    "check_partition": Operation(
        "controller", {"topic": ("str", REQUIRED), "partition": ("int", 0)}, PARTITION_RESULTS, is_check=True
    ),
    "check_broker": Operation("controller", {"broker": ("int", REQUIRED)}, BROKER_RESULTS, is_check=True),
}

SET_FIELDS = frozenset({"elr", "last_known_elr"})
"""scenario-format.md: these compare as sets; every other list compares in order."""


def default_expectation(op: str) -> dict[str, str]:
    """scenario-format.md: `alter_partition` expects both errors NONE; others `error: NONE` if they have one."""
    if op == "alter_partition":
        return {"top_level_error": "NONE", "error": "NONE"}
    if "error" in OPERATIONS[op].results and not OPERATIONS[op].is_check:
        return {"error": "NONE"}
    return {}
