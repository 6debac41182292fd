"""P-LIVE: after a heal phase the system converges — leaders elected, ISRs full, nothing pending
(bugs.md property table). On the ground truth: everything a simulation shows settled; on a
black-box history: every partition has a leader and enough in-sync replicas after the heal.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import (
    HistoryConfig,
    exposure_points,
    observations,
    ops,
    topic_min_isr,
)
from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.ground_truth import ClusterObservation


def ground_truth(observation: ClusterObservation, history: History | None = None) -> list[Violation]:
    """P-LIVE, read after a heal phase (faults stopped, messages delivered, time passed): no
    proposal pending, caught-up eligible followers in the ISR and lagging or down ones out, the HW
    at the log end (unless the ISR is under min ISR), followers at the leader's HW and log, no
    leaderless partition that could have a leader, no acks=all request waiting, metadata caught up."""
    step = observation.step
    problems: list[tuple[str, dict[str, Any]]] = []
    for broker, process in observation.brokers.items():
        if not process.alive:
            continue
        if process.alter_partition_items:
            items = [[tp_name(tp), item, sent] for tp, item, sent in process.alter_partition_items]
            problems.append((f"broker {broker} still has ISR proposals queued or in flight",
                             {"broker": broker, "items": items}))
        if process.metadata_offset != observation.controller_log_end:
            problems.append((f"broker {broker} has applied metadata to {process.metadata_offset} of "
                             f"{observation.controller_log_end}", {"broker": broker}))
        registration = observation.registrations.get(broker)
        if process.status == "running" and (
            registration is None or registration.fenced or registration.epoch != process.broker_epoch
        ):
            problems.append((f"running broker {broker} is not registered and unfenced with its epoch",
                             {"broker": broker, "broker_epoch": process.broker_epoch}))
    for pending in observation.replicas.values():
        if pending.pending != "none" and observation.alive(pending.broker):
            problems.append((f"{tp_name(pending.tp)}: leader {pending.broker} still has a pending {pending.pending}",
                             {"partition": tp_name(pending.tp), "broker": pending.broker, "pending": pending.pending}))
    for tp, partition in observation.partitions.items():
        name = tp_name(tp)

        def eligible(broker: int) -> bool:
            registration = observation.registrations.get(broker)
            return (
                observation.alive(broker) and registration is not None and not registration.fenced
                and not registration.in_controlled_shutdown and broker not in observation.shutting_down
            )

        if partition.leader == -1:
            candidates = [b for b in (*partition.isr, *partition.elr) if eligible(b)]
            if candidates:
                problems.append((f"{name}: leaderless although {candidates} could lead",
                                 {"partition": name, "isr": list(partition.isr), "elr": list(partition.elr)}))
            continue
        leader = observation.established_leader(tp)
        if leader is None:
            problems.append((f"{name}: leader {partition.leader} has not taken over epoch {partition.leader_epoch}",
                             {"partition": name, "leader": partition.leader}))
            continue
        for member in partition.isr:
            if member == leader.broker:
                continue
            view = observation.replica(member, tp)
            if not observation.alive(member) or view is None or view.leo != leader.leo:
                problems.append((f"{name}: ISR member {member} is down or lagging yet still in the ISR",
                                 {"partition": name, "member": member, "isr": list(partition.isr)}))
            elif view.hw != leader.hw or view.log != leader.log:
                problems.append((f"{name}: ISR member {member} has not converged on the leader's log and HW",
                                 {"partition": name, "member": member, "member_hw": view.hw, "leader_hw": leader.hw}))
        for replica in partition.replicas:
            if replica == leader.broker or replica in partition.isr or not eligible(replica):
                continue
            view = observation.replica(replica, tp)
            if view is not None and view.leo == leader.leo and view.role == "follower":
                problems.append((f"{name}: caught-up eligible follower {replica} is not in the ISR",
                                 {"partition": name, "follower": replica, "isr": list(partition.isr)}))
        if leader.hw != leader.leo and len(partition.isr) >= partition.min_isr:
            problems.append((f"{name}: HW {leader.hw} has not reached the log end {leader.leo}",
                             {"partition": name, "hw": leader.hw, "leo": leader.leo}))
    if observation.pending_produces:
        problems.append((f"{observation.pending_produces} acks=all requests still waiting",
                         {"pending_produces": observation.pending_produces}))
    return [Violation("P-LIVE", step, message, evidence) for message, evidence in problems]


def views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-LIVE: after the (last) heal — everything running, every link passing, its bound spent
    waiting — every partition observed has a leader and min(min.insync.replicas, |replicas|)
    in-sync replicas. Not judged for a partition whose whole ISR lost its log directories
    (`exposure_points`): with unclean election disabled Kafka may rightly keep it offline — from
    3.7 the controller elects only a replica whose recorded log directory is online
    (`ReplicationControlManager.LeaderAcceptor`, KIP-858), and a disk-loss restart registers a new
    directory, so the emptied last ISR member is not elected until its own AssignReplicasToDirs
    records the new directory; the next election visiting the partition then elects it, empty
    (3.3 elects it at its unfence; conformance/scenarios/cluster/kip858_last_member_disk_loss.yaml)."""
    heals = [e for e in ops(history) if e["op"] == "heal"]
    if not heals:
        return []
    heal = heals[-1]
    exposed = exposure_points(history, config)
    latest: dict[str, dict[str, Any]] = {}
    for e in observations(history):
        if e["i"] > heal["i"]:
            latest[e["partition"]] = e
    violations = []
    for partition, e in sorted(latest.items()):
        if exposed.get(partition):
            continue  # every in-sync copy was lost: with unclean election disabled it may stay offline
        view = e["view"]
        need = min(topic_min_isr(history, partition.rsplit("-", 1)[0], config), len(view.get("replicas", [])) or 1)
        if not view.get("exists") or view.get("leader", -1) < 0 or len(view.get("isr", [])) < need:
            violations.append(Violation("P-LIVE", e["i"], f"{partition}: after the heal ({heal['args']}) it has "
                                        f"leader {view.get('leader')} and ISR {view.get('isr')} (needs {need} in "
                                        "sync)", {"view": view}))
    return violations



def livelock(step: int, message: str, evidence: dict[str, Any]) -> Violation:
    """A system that never settles — a step or a heal whose messages never stop — is not live,
    whatever it would show afterwards (the simulation's quiescence bound ran out)."""
    return Violation("P-LIVE", step, message, evidence)


def views_judged(history: list[dict[str, Any]]) -> bool:
    """Judged only after a heal."""
    return any(e["op"] == "heal" for e in ops(history))


PROPERTY = Property("P-LIVE", ground_truth=ground_truth, views=views, views_judged=views_judged)
