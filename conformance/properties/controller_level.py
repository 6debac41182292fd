"""Safety properties a controller must keep, checked on the *target's* own answers and
observations (so they work without a reference: the black-box figure). Ids from bugs.md.

- P-ELIG: an AlterPartition is accepted only if every member of its ISR was registered, unfenced,
  not in controlled shutdown and (v3, epoch ≠ -1) of the stated broker epoch (KIP-841, KIP-903).
- P-LEAD: stale leaders cannot change state — an accepted change comes from the current leader
  with the current leader and partition epochs; epochs never go backwards.
- LeaderInIsr: a partition's leader is -1 or a member of its ISR (leader.md §15), and an
  AlterPartition never removes its own sender from the ISR (§2.4 row 8).
"""

from __future__ import annotations

from typing import Any

from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.operations.findings import VIOLATION, Finding

CONTROLLER_PROPERTIES = ("P-ELIG", "P-LEAD", "LeaderInIsr")
"""The properties this module checks after every controller-level step."""


def eligibility_violation(
    step: int, args: dict[str, Any], result: dict[str, Any], before: ControllerObservation
) -> Finding | None:
    if result.get("top_level_error") != "NONE" or result.get("error") != "NONE":
        return None
    version = int(args["version"])
    for broker, stated_epoch in args["isr"]:
        state = before.brokers.get(broker)
        reason = None
        if state is None or not state.get("registered"):
            reason = "not registered"
        elif state.get("in_controlled_shutdown"):
            reason = "in controlled shutdown"
        elif state.get("fenced"):
            reason = "fenced"
        elif version >= 3 and stated_epoch != -1 and stated_epoch != state.get("broker_epoch"):
            reason = f"of broker epoch {state.get('broker_epoch')}, not the stated {stated_epoch}"
        if reason is not None:
            return Finding(
                VIOLATION, "alter_partition", step,
                f"AlterPartition accepted ISR {result.get('isr')} although broker {broker} was {reason}",
                property="P-ELIG",
                evidence={"isr": [m[0] for m in args["isr"]], "broker": broker, "broker_state": state or {},
                          "reason": reason},
            )
    return None


def stale_change_violation(
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


def leader_dropped_violation(
    step: int, args: dict[str, Any], before: ControllerObservation, after: ControllerObservation
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


def state_violations(step: int, op: str, before: ControllerObservation, after: ControllerObservation) -> list[Finding]:
    findings: list[Finding] = []
    for (topic, partition), state in after.partitions.items():
        if not state.get("exists"):
            continue
        name = f"{topic}-{partition}"
        leader, isr = state.get("leader"), state.get("isr") or []
        if leader != -1 and leader not in isr:
            findings.append(Finding(
                VIOLATION, op, step, f"partition {name}: leader {leader} is not in its ISR {isr}",
                property="LeaderInIsr", evidence={"partition": name, "state": state},
            ))
        old = before.partitions.get((topic, partition)) or {}
        if old.get("exists") and (
            state["leader_epoch"] < old["leader_epoch"] or state["partition_epoch"] < old["partition_epoch"]
        ):
            findings.append(Finding(
                VIOLATION, op, step, f"partition {name}: epochs went backwards",
                property="P-LEAD", evidence={"partition": name, "before": old, "after": state},
            ))
    return findings


def check_step(
    step: int, op: str, args: dict[str, Any], result: dict[str, Any],
    before: ControllerObservation, after: ControllerObservation,
) -> list[Finding]:
    """Every controller-level property for one executed step."""
    findings: list[Finding] = []
    if op == "alter_partition":
        for finding in (
            eligibility_violation(step, args, result, before),
            stale_change_violation(step, args, result, before, after),
            leader_dropped_violation(step, args, before, after),
        ):
            if finding is not None:
                findings.append(finding)
    findings.extend(state_violations(step, op, before, after))
    return findings
