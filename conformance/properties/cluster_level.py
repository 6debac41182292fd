"""Cluster-level properties (bugs.md property table), one function each, all reading the one
observation shape `ClusterObservation` plus the little `History` that properties about change
need (the previous observation, the prefix of each partition ever exposed below a leader's HW,
and which broker first acted as leader of each epoch).

Safety properties (checked after every step): P-ACK, P-HWV, P-ELIG, P-LOG, P-HWM, P-1IF, P-LEAD,
LeaderInIsr. Liveness (checked after a heal phase): P-LIVE. Each returns `Violation` values that
name the property, the step and the evidence (JSON-able).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from isrcheck.contract.history.ground_truth import ClusterObservation, ReplicaView, TopicPartition
from isrcheck.contract.operations.findings import VIOLATION, Finding
from isrcheck.reference_impl.replica_log import Record


@dataclass(frozen=True)
class Violation:
    property: str
    step: int
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property, "step": self.step, "message": self.message, "evidence": self.evidence}

    def to_finding(self, operation: str = "cluster") -> Finding:
        return Finding(VIOLATION, operation, self.step, self.message, property=self.property, evidence=self.evidence)

    @builtins.property
    def key(self) -> tuple[str, str]:
        """Identity across steps: the same violation seen again on the next step is not new."""
        return self.property, self.message


@dataclass(frozen=True)
class History:
    """What the properties about change remember between observations."""

    previous: ClusterObservation | None = None
    exposed: Mapping[TopicPartition, tuple[Record, ...]] = field(default_factory=dict)
    """The longest prefix of each partition an established leader has exposed below its HW."""
    epoch_actors: Mapping[tuple[str, int, int], int] = field(default_factory=dict)
    """(topic, partition, leader epoch) → the first broker seen acting as leader of it."""

    def advance(self, observation: ClusterObservation) -> History:
        """The history after `observation`. Its maps are copied only when this step adds to them
        (it is taken after every step, and most steps add nothing): the History before is never
        changed, so a previous one still reads as it did."""
        exposed: dict[TopicPartition, tuple[Record, ...]] | None = None
        for tp in observation.partitions:
            leader = observation.established_leader(tp)
            if leader is not None and leader.hw > len((self.exposed if exposed is None else exposed).get(tp, ())) and (
                tp not in observation.unclean
            ):
                if exposed is None:
                    exposed = dict(self.exposed)
                exposed[tp] = leader.log[:leader.hw]
        actors: dict[tuple[str, int, int], int] | None = None
        for view in observation.replicas.values():
            if view.role == "leader" and observation.alive(view.broker):
                key = (view.topic, view.partition, view.leader_epoch)
                if key not in (self.epoch_actors if actors is None else actors):
                    if actors is None:
                        actors = dict(self.epoch_actors)
                    actors[key] = view.broker
        return History(observation, self.exposed if exposed is None else exposed,
                       self.epoch_actors if actors is None else actors)


Check = Callable[[ClusterObservation, History], list[Violation]]


def _name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _log_json(log: tuple[Record, ...], start: int = 0, end: int | None = None) -> list[list[int]]:
    return [list(record) for record in log[start:end]]


# -------------------------------------------------------------------------------- safety


def p_ack(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-ACK: every record acknowledged to an acks=all producer is in the log of every leader
    established after it (partitions with an unclean election someone allowed are exempt: KIP-106
    makes the loss the operator's choice there, bugs.md B14)."""
    by_partition: dict[TopicPartition, list[Any]] = {}
    for acked in observation.acked:
        by_partition.setdefault((acked.topic, acked.partition), []).append(acked)
    violations = []
    for tp, records in by_partition.items():
        if tp in observation.unclean:
            continue
        leader = observation.established_leader(tp)
        if leader is None:
            continue
        log = leader.log
        for acked in records:
            held = log[acked.offset] if acked.offset < len(log) else None
            if held is None or held[1] != acked.record:
                violations.append(Violation(
                    "P-ACK", observation.step,
                    f"{_name(tp)}: record {acked.record} acknowledged at offset {acked.offset} is not in the log "
                    f"of leader {leader.broker} (epoch {leader.leader_epoch})",
                    {"partition": _name(tp), "offset": acked.offset, "record": acked.record,
                     "request": acked.request, "leader": leader.broker, "leader_epoch": leader.leader_epoch,
                     "leader_holds": None if held is None else list(held)},
                ))
    return violations


def p_hwv(observation: ClusterObservation, history: History) -> list[Violation]:
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
                    f"{_name(tp)}: ISR member {member} has LEO {leo} below leader {leader.broker}'s HW {hw}",
                    {"partition": _name(tp), "member": member, "member_leo": leo, "leader": leader.broker,
                     "leader_hw": hw, "isr": list(partition.isr)},
                ))
            elif view is not None and view.log[:hw] != prefix:
                first = next(i for i in range(hw) if view.log[i] != prefix[i])
                violations.append(Violation(
                    "P-HWV", observation.step,
                    f"{_name(tp)}: ISR member {member} differs from leader {leader.broker} below the HW {hw}",
                    {"partition": _name(tp), "member": member, "leader": leader.broker, "leader_hw": hw,
                     "offset": first, "member_record": list(view.log[first]), "leader_record": list(prefix[first])},
                ))
    return violations


def p_elig(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-ELIG: the controller's ISR holds no broker that is unregistered, fenced or in controlled
    shutdown (except a lone last member of a leaderless partition, controller.md §4.4), and every
    broker an AlterPartition admitted was the running incarnation and had caught up."""
    violations = []
    for tp, partition in observation.partitions.items():
        if len(partition.isr) == 1 and partition.leader == -1:
            continue
        for member in partition.isr:
            registration = observation.registrations.get(member)
            if registration is None:
                reason = "not registered"
            elif registration.fenced:
                reason = "fenced"
            elif registration.in_controlled_shutdown or member in observation.shutting_down:
                reason = "in controlled shutdown"
            else:
                continue
            violations.append(Violation(
                "P-ELIG", observation.step, f"{_name(tp)}: ISR {list(partition.isr)} holds broker {member}, {reason}",
                {"partition": _name(tp), "isr": list(partition.isr), "broker": member, "reason": reason},
            ))
    seen = 0 if history.previous is None else len(history.previous.admissions)
    for admission in observation.admissions[seen:]:
        if admission.process_epoch < 0:
            continue
        if admission.process_epoch != admission.registered_epoch:
            reason = f"the running incarnation has epoch {admission.process_epoch}"
        elif admission.caught_up is False:
            reason = "its running incarnation had not caught up with the leader"
        else:
            continue
        violations.append(Violation(
            "P-ELIG", admission.step,
            f"{admission.topic}-{admission.partition}: broker {admission.broker} admitted to the ISR "
            f"(registered epoch {admission.registered_epoch}) but {reason}",
            {"partition": f"{admission.topic}-{admission.partition}", "broker": admission.broker,
             "leader": admission.leader, "registered_epoch": admission.registered_epoch,
             "process_epoch": admission.process_epoch, "caught_up": admission.caught_up},
        ))
    return violations


def _matching_prefix_violation(a: ReplicaView, b: ReplicaView) -> int | None:
    """The highest offset where both logs hold the same epoch, if their prefixes up to it differ."""
    left, right = a.log, b.log
    shorter, longer = (left, right) if len(left) <= len(right) else (right, left)
    if shorter == longer[:len(shorter)]:
        return None
    index = len(shorter) - 1
    while index >= 0 and left[index][0] != right[index][0]:
        index -= 1
    if index < 0 or left[:index + 1] == right[:index + 1]:
        return None
    return index


def p_log(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-LOG (log matching, KIP-101/279): two replicas with the same epoch at an offset hold
    identical logs up to it."""
    by_partition: dict[TopicPartition, list[ReplicaView]] = {}
    for view in observation.replicas.values():
        by_partition.setdefault(view.tp, []).append(view)
    violations = []
    for tp, views in by_partition.items():
        views.sort(key=lambda v: v.broker)
        for i, a in enumerate(views):
            for b in views[i + 1:]:
                offset = _matching_prefix_violation(a, b)
                if offset is None:
                    continue
                first = next(k for k in range(offset + 1) if a.log[k] != b.log[k])
                violations.append(Violation(
                    "P-LOG", observation.step,
                    f"{_name(tp)}: brokers {a.broker} and {b.broker} both hold epoch {a.log[offset][0]} at offset "
                    f"{offset} but differ at offset {first}",
                    {"partition": _name(tp), "brokers": [a.broker, b.broker], "offset": offset,
                     "first_difference": first, "records": [list(a.log[first]), list(b.log[first])]},
                ))
    return violations


def p_hwm(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-HWM: no replica's HW is past its LEO (leader.md §15); a leader's HW never decreases within
    its leader epoch; records below a replica's HW stay in it (unless the harness destroyed them);
    every leader holds every record any earlier leader exposed below its HW (partitions with an
    unclean election exempt)."""
    violations = []
    for view in observation.replicas.values():
        if view.hw > view.leo and observation.alive(view.broker):
            violations.append(Violation(
                "P-HWM", observation.step,
                f"{_name(view.tp)}: broker {view.broker}'s HW {view.hw} is past its log end {view.leo}",
                {"partition": _name(view.tp), "broker": view.broker, "hw": view.hw, "leo": view.leo},
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
                    f"{_name(view.tp)}: leader {broker}'s HW went from {before.hw} to {view.hw} in epoch "
                    f"{view.leader_epoch}",
                    {"partition": _name(view.tp), "broker": broker, "leader_epoch": view.leader_epoch,
                     "hw_before": before.hw, "hw_after": view.hw},
                ))
            hw = before.hw
            if broker in lost or hw == 0 or view.tp in observation.unclean:
                continue
            if view.log[:hw] != before.log[:hw]:
                violations.append(Violation(
                    "P-HWM", observation.step,
                    f"{_name(view.tp)}: broker {broker} removed or replaced records below its HW {hw} "
                    f"(LEO now {view.leo})",
                    {"partition": _name(view.tp), "broker": broker, "hw_before": hw, "leo_after": view.leo,
                     "exposed": _log_json(before.log, 0, hw), "now": _log_json(view.log, 0, hw)},
                ))
    for tp, exposed in history.exposed.items():
        if tp in observation.unclean:
            continue
        leader = observation.established_leader(tp)
        if leader is None or leader.log[:len(exposed)] == exposed:
            continue
        violations.append(Violation(
            "P-HWM", observation.step,
            f"{_name(tp)}: leader {leader.broker} lacks records exposed below an earlier HW {len(exposed)}",
            {"partition": _name(tp), "leader": leader.broker, "exposed_hw": len(exposed),
             "leader_leo": leader.leo},
        ))
    return violations


def p_1if(observation: ClusterObservation, history: History) -> list[Violation]:
    """P-1IF: per broker at most one AlterPartition request in flight, and per partition at most
    one outstanding proposal (queued or in flight) (leader.md §2, §12)."""
    violations = []
    for broker, view in observation.brokers.items():
        if not view.alive:
            continue
        if view.alter_partition_requests > 1:
            violations.append(Violation(
                "P-1IF", observation.step,
                f"broker {broker} has {view.alter_partition_requests} AlterPartition requests in flight",
                {"broker": broker, "requests": view.alter_partition_requests},
            ))
        proposals: dict[TopicPartition, set[int]] = {}
        for tp, item, _ in view.alter_partition_items:
            proposals.setdefault(tp, set()).add(item)
        for tp, items in proposals.items():
            if len(items) > 1:
                violations.append(Violation(
                    "P-1IF", observation.step,
                    f"{_name(tp)}: broker {broker} has {len(items)} outstanding ISR proposals",
                    {"partition": _name(tp), "broker": broker, "proposals": sorted(items)},
                ))
    return violations


def p_lead(observation: ClusterObservation, history: History) -> list[Violation]:
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
            "P-LEAD", observation.step, f"{_name(view.tp)}: broker {view.broker} acts as leader but {reason}",
            {"partition": _name(view.tp), "broker": view.broker, "leader_epoch": view.leader_epoch,
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
                    "P-LEAD", observation.step, f"{_name(tp)}: the controller's epochs went backwards",
                    {"partition": _name(tp), "before": [before.leader_epoch, before.partition_epoch],
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
        f"{_name(view.tp)}: broker {view.broker} leads with ISR {list(view.isr)} at partition epoch "
        f"{view.partition_epoch}, whose ISR the controller committed as {list(committed)}",
        {"partition": _name(view.tp), "broker": view.broker, "partition_epoch": view.partition_epoch,
         "leader_isr": list(view.isr), "controller_isr": list(committed)},
    )]


def leader_in_isr(observation: ClusterObservation, history: History) -> list[Violation]:
    """LeaderInIsr (leader.md §15): the controller's leader is -1 or a member of its ISR."""
    return [
        Violation(
            "LeaderInIsr", observation.step, f"{_name(tp)}: leader {p.leader} is not in its ISR {list(p.isr)}",
            {"partition": _name(tp), "leader": p.leader, "isr": list(p.isr)},
        )
        for tp, p in observation.partitions.items()
        if p.leader != -1 and p.leader not in p.isr
    ]


# -------------------------------------------------------------------------------- liveness


def p_live(observation: ClusterObservation, history: History | None = None) -> list[Violation]:
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
            items = [[_name(tp), item, sent] for tp, item, sent in process.alter_partition_items]
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
            problems.append((f"{_name(pending.tp)}: leader {pending.broker} still has a pending {pending.pending}",
                             {"partition": _name(pending.tp), "broker": pending.broker, "pending": pending.pending}))
    for tp, partition in observation.partitions.items():
        name = _name(tp)

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


STEP_PROPERTIES: dict[str, Check] = {
    "P-ACK": p_ack,
    "P-HWV": p_hwv,
    "P-ELIG": p_elig,
    "P-LOG": p_log,
    "P-HWM": p_hwm,
    "P-1IF": p_1if,
    "P-LEAD": p_lead,
    "LeaderInIsr": leader_in_isr,
}
"""Checked after every step."""

ALL_PROPERTIES = (*STEP_PROPERTIES, "P-LIVE")


def check_step(observation: ClusterObservation, history: History) -> list[Violation]:
    return [v for check in STEP_PROPERTIES.values() for v in check(observation, history)]
