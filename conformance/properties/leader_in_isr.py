"""LeaderInIsr (leader.md §15, controller.md §3.2): a partition's leader is -1 or a member of its
ISR, and an AlterPartition never removes its own sender from the ISR (controller.md §2.4 row 8).
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import HistoryConfig, observations
from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.contract.operations.findings import VIOLATION, Finding


def controller_request(
    step: int, args: dict[str, Any], result: dict[str, Any], before: ControllerObservation,
    after: ControllerObservation,
) -> Finding | None:
    """§2.4 row 8: an AlterPartition can never take its own sender out of the ISR while the
    sender stays a replica (a completed reassignment may remove it from both)."""
    key = (str(args["topic"]), int(args["partition"]))
    old, new = before.partitions.get(key), after.partitions.get(key)
    if not old or not new or not old.get("exists") or new.get("partition_epoch") == old.get("partition_epoch"):
        return None
    sender = args["broker"]
    if sender == old.get("leader") and sender in new.get("replicas", []) and sender not in new.get("isr", []):
        return Finding(
            VIOLATION, "alter_partition", step,
            f"AlterPartition from leader {sender} removed the leader itself from the ISR of {key[0]}-{key[1]}",
            property="LeaderInIsr", evidence={"request": dict(args), "before": old, "after": new},
        )
    return None


def controller_state(
    step: int, op: str, key: tuple[str, int], state: dict[str, Any], before: ControllerObservation
) -> Finding | None:
    """The controller's leader of an existing partition is -1 or in its ISR, after any step."""
    name = f"{key[0]}-{key[1]}"
    leader, isr = state.get("leader"), state.get("isr") or []
    if leader != -1 and leader not in isr:
        return Finding(
            VIOLATION, op, step, f"partition {name}: leader {leader} is not in its ISR {isr}",
            property="LeaderInIsr", evidence={"partition": name, "state": state},
        )
    return None


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """LeaderInIsr (leader.md §15): the controller's leader is -1 or a member of its ISR."""
    return [
        Violation(
            "LeaderInIsr", observation.step, f"{tp_name(tp)}: leader {p.leader} is not in its ISR {list(p.isr)}",
            {"partition": tp_name(tp), "leader": p.leader, "isr": list(p.isr)},
        )
        for tp, p in observation.partitions.items()
        if p.leader != -1 and p.leader not in p.isr
    ]


def views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """LeaderInIsr: a leader elected from the ISR stays in it (controller.md §3.2)."""
    return [Violation("LeaderInIsr", e["i"], f"{e['partition']}: leader {e['view']['leader']} is not in the ISR "
                      f"{e['view']['isr']}", {"leader": e["view"]["leader"], "isr": e["view"]["isr"]})
            for e in observations(history)
            if e["view"].get("exists") and e["view"].get("leader", -1) >= 0
            and e["view"]["leader"] not in e["view"].get("isr", [])]


PROPERTY = Property(
    "LeaderInIsr",
    controller_request=controller_request,
    controller_state=controller_state,
    ground_truth=ground_truth,
    views=views,
)
