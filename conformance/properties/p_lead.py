"""P-LEAD: stale leaders cannot change state, a broker leads only in the epoch and with the ISR
the controller gave it, and epochs never go backwards (bugs.md property table). On the
controller's answers: an accepted change comes from the current leader with the current epochs;
on the ground truth: who acts as leader in which epoch with which ISR.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.history.ground_truth import ClusterObservation, ReplicaView
from isrcheck.contract.operations.findings import VIOLATION, Finding


def controller_request(
    step: int, args: dict[str, Any], result: dict[str, Any], before: ControllerObservation,
    after: ControllerObservation,
) -> Finding | None:
    key = (str(args["topic"]), int(args["partition"]))
    old, new = before.partitions.get(key), after.partitions.get(key)
    if not old or not new or not old.get("exists") or new.get("partition_epoch") == old.get("partition_epoch"):
        return None
    if result.get("top_level_error") != "NONE":
        stale = "the request was refused at the top level"
    elif args["broker"] != old["leader"]:
        stale = f"broker {args['broker']} was not the leader ({old['leader']})"
    elif args["leader_epoch"] != old["leader_epoch"]:
        stale = f"leader epoch {args['leader_epoch']} ≠ current {old['leader_epoch']}"
    elif args["partition_epoch"] != old["partition_epoch"]:
        stale = f"partition epoch {args['partition_epoch']} ≠ current {old['partition_epoch']}"
    else:
        return None
    return Finding(
        VIOLATION, "alter_partition", step,
        f"a stale AlterPartition changed {key[0]}-{key[1]}: {stale}",
        property="P-LEAD",
        evidence={"request": dict(args), "before": old, "after": new},
    )


def controller_state(
    step: int, op: str, key: tuple[str, int], state: dict[str, Any], before: ControllerObservation
) -> Finding | None:
    """The controller's epochs of an existing partition never go backwards, after any step."""
    old = before.partitions.get(key) or {}
    if old.get("exists") and (
        state["leader_epoch"] < old["leader_epoch"] or state["partition_epoch"] < old["partition_epoch"]
    ):
        name = f"{key[0]}-{key[1]}"
        return Finding(
            VIOLATION, op, step, f"partition {name}: epochs went backwards",
            property="P-LEAD", evidence={"partition": name, "before": old, "after": state},
        )
    return None


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-LEAD: a broker acts as leader only on what the controller gave it — in an epoch the
    controller gave it, which no other broker acts in, and with the ISR the controller committed
    at its partition epoch (a LeaderAndIsr is one value: leader.md §2 keeps as `isr` "the ISR as
    last committed by the controller", and §9 step 1 ignores an answer for a proposal that newer
    metadata replaced, bugs.md appendix 4) — and the controller's epochs never go backwards."""
    violations = []
    for view in observation.replicas.values():
        if view.role != "leader" or not observation.alive(view.broker):
            continue
        key = (view.topic, view.partition, view.leader_epoch)
        named = observation.epoch_leaders.get(key)
        first = history.epoch_actors.get(key)
        if named is not None and named != view.broker:
            reason = f"the controller gave epoch {view.leader_epoch} to {named}"
        elif first is not None and first != view.broker:
            reason = f"broker {first} already acted as leader in epoch {view.leader_epoch}"
        else:
            violations.extend(_isr_not_committed(observation, view))
            continue
        violations.append(Violation(
            "P-LEAD", observation.step, f"{tp_name(view.tp)}: broker {view.broker} acts as leader but {reason}",
            {"partition": tp_name(view.tp), "broker": view.broker, "leader_epoch": view.leader_epoch,
             "controller_leader": named, "first_actor": first},
        ))
    previous = history.previous
    if previous is not None:
        for tp, partition in observation.partitions.items():
            before = previous.partitions.get(tp)
            if before is not None and (
                partition.leader_epoch < before.leader_epoch or partition.partition_epoch < before.partition_epoch
            ):
                violations.append(Violation(
                    "P-LEAD", observation.step, f"{tp_name(tp)}: the controller's epochs went backwards",
                    {"partition": tp_name(tp), "before": [before.leader_epoch, before.partition_epoch],
                     "after": [partition.leader_epoch, partition.partition_epoch]},
                ))
    return violations


def _isr_not_committed(observation: ClusterObservation, view: ReplicaView) -> list[Violation]:
    """The leader's committed ISR against the one the controller committed at the leader's
    partition epoch (as sets: the order carries no meaning). Nothing when the controller never
    named that epoch (a system that does not report its history)."""
    committed = observation.epoch_isrs.get((view.topic, view.partition, view.partition_epoch))
    if committed is None or set(view.isr) == set(committed):
        return []
    return [Violation(
        "P-LEAD", observation.step,
        f"{tp_name(view.tp)}: broker {view.broker} leads with ISR {list(view.isr)} at partition epoch "
        f"{view.partition_epoch}, whose ISR the controller committed as {list(committed)}",
        {"partition": tp_name(view.tp), "broker": view.broker, "partition_epoch": view.partition_epoch,
         "leader_isr": list(view.isr), "controller_isr": list(committed)},
    )]


PROPERTY = Property(
    "P-LEAD",
    controller_request=controller_request,
    controller_state=controller_state,
    ground_truth=ground_truth,
)
