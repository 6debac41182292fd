"""P-HWV: every running ISR member holds the leader's records below the HW (ValidHighWatermark,
StrongIsr; bugs.md property table). Only the ground truth shows replicas' logs.
"""

from __future__ import annotations

from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.ground_truth import ClusterObservation


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-HWV: every member of the controller's ISR whose registered incarnation is running has
    LEO ≥ the established leader's HW (ValidHighWatermark) and the leader's records below the HW
    (StrongIsr). A crashed member is out of reach until the controller fences it."""
    violations = []
    for tp, partition in observation.partitions.items():
        leader = observation.established_leader(tp)
        if leader is None:
            continue
        hw = leader.hw
        prefix = leader.log[:hw]
        for member in partition.isr:
            if member == leader.broker or not observation.serving(member):
                continue
            view = observation.replica(member, tp)
            leo = 0 if view is None else view.leo
            if leo < hw:
                violations.append(Violation(
                    "P-HWV", observation.step,
                    f"{tp_name(tp)}: ISR member {member} has LEO {leo} below leader {leader.broker}'s HW {hw}",
                    {"partition": tp_name(tp), "member": member, "member_leo": leo, "leader": leader.broker,
                     "leader_hw": hw, "isr": list(partition.isr)},
                ))
            elif view is not None and view.log[:hw] != prefix:
                first = next(i for i in range(hw) if view.log[i] != prefix[i])
                violations.append(Violation(
                    "P-HWV", observation.step,
                    f"{tp_name(tp)}: ISR member {member} differs from leader {leader.broker} below the HW {hw}",
                    {"partition": tp_name(tp), "member": member, "leader": leader.broker, "leader_hw": hw,
                     "offset": first, "member_record": list(view.log[first]), "leader_record": list(prefix[first])},
                ))
    return violations


PROPERTY = Property("P-HWV", ground_truth=ground_truth)
