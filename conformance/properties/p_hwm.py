"""P-HWM: high watermarks are monotonic and never past the log end (leader.md §15). Only the
ground truth shows replicas' HWs (the consumer-visible HW of a black box is P-HWC).
"""

from __future__ import annotations

from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, log_json, tp_name
from isrcheck.contract.history.ground_truth import ClusterObservation


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-HWM: no replica's HW is past its LEO (leader.md §15); a leader's HW never decreases within
    its leader epoch; records below a replica's HW stay in it (unless the harness destroyed them);
    every leader holds every record any earlier leader exposed below its HW (partitions with an
    unclean election exempt)."""
    violations = []
    for view in observation.replicas.values():
        if view.hw > view.leo and observation.alive(view.broker):
            violations.append(Violation(
                "P-HWM", observation.step,
                f"{tp_name(view.tp)}: broker {view.broker}'s HW {view.hw} is past its log end {view.leo}",
                {"partition": tp_name(view.tp), "broker": view.broker, "hw": view.hw, "leo": view.leo},
            ))
    previous = history.previous
    if previous is not None:
        lost = {loss.broker for loss in observation.data_loss[len(previous.data_loss):]}
        for key, view in observation.replicas.items():
            before = previous.replicas.get(key)
            if before is None or before is view:  # the same view (Cluster.observe keeps unchanged ones): no change
                continue
            broker = view.broker
            same_process = (
                broker in previous.brokers and broker in observation.brokers
                and previous.brokers[broker].incarnation == observation.brokers[broker].incarnation
            )
            if (
                same_process and view.role == "leader" and before.role == "leader"
                and view.leader_epoch == before.leader_epoch and view.hw < before.hw
            ):
                violations.append(Violation(
                    "P-HWM", observation.step,
                    f"{tp_name(view.tp)}: leader {broker}'s HW went from {before.hw} to {view.hw} in epoch "
                    f"{view.leader_epoch}",
                    {"partition": tp_name(view.tp), "broker": broker, "leader_epoch": view.leader_epoch,
                     "hw_before": before.hw, "hw_after": view.hw},
                ))
            hw = before.hw
            if broker in lost or hw == 0 or view.tp in observation.unclean:
                continue
            if view.log[:hw] != before.log[:hw]:
                violations.append(Violation(
                    "P-HWM", observation.step,
                    f"{tp_name(view.tp)}: broker {broker} removed or replaced records below its HW {hw} "
                    f"(LEO now {view.leo})",
                    {"partition": tp_name(view.tp), "broker": broker, "hw_before": hw, "leo_after": view.leo,
                     "exposed": log_json(before.log, 0, hw), "now": log_json(view.log, 0, hw)},
                ))
    for tp, exposed in history.exposed.items():
        if tp in observation.unclean:
            continue
        leader = observation.established_leader(tp)
        if leader is None or leader.log[:len(exposed)] == exposed:
            continue
        violations.append(Violation(
            "P-HWM", observation.step,
            f"{tp_name(tp)}: leader {leader.broker} lacks records exposed below an earlier HW {len(exposed)}",
            {"partition": tp_name(tp), "leader": leader.broker, "exposed_hw": len(exposed),
             "leader_leo": leader.leo},
        ))
    return violations


PROPERTY = Property("P-HWM", ground_truth=ground_truth)
