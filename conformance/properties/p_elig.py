"""P-ELIG: only eligible brokers are in the ISR — registered, unfenced, not in controlled shutdown,
the running incarnation (KIP-841, KIP-903; controller.md §4.3, §4.4). On the controller's
answers: an accepted AlterPartition's ISR; on the ground truth: the controller's ISR and every
admission; on a black-box history: a fenced broker that is down is in no ISR with others.
"""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import HistoryConfig, down_periods
from isrcheck.conformance.properties.checker import Property, Violation
from isrcheck.conformance.properties.ground_truth_memory import History, tp_name
from isrcheck.contract.history.controller_view import ControllerObservation
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.contract.operations.findings import VIOLATION, Finding


def controller_request(
    step: int, args: dict[str, Any], result: dict[str, Any], before: ControllerObservation,
    after: ControllerObservation,
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


def ground_truth(observation: ClusterObservation, history: History) -> list[Violation]:
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
                "P-ELIG", observation.step, f"{tp_name(tp)}: ISR {list(partition.isr)} holds broker {member}, {reason}",
                {"partition": tp_name(tp), "isr": list(partition.isr), "broker": member, "reason": reason},
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


def views(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-ELIG (black-box form; controller.md §4.3, §4.4, KIP-841): a broker the controller has
    fenced is in no ISR with other members. Judged on the controller's own view, not a clock: a
    KRaft broker's Metadata answer lists only unfenced brokers, from the same metadata image as
    the ISR it returns, so a broker that was listed when it went down (it had an unfenced
    registration), is still down, is no longer listed (fenced — its session expired or it shut
    down) and is in an ISR with other members is a violation however late or early it is seen.
    ("Listed when it went down" leaves out a broker re-registered and still fenced when it went
    down: without ELR such a broker keeps its ISR places — `handleBrokerUncleanShutdown` does
    nothing before ELR — and `BrokerHeartbeatManager` runs no session timer for a fenced broker.)

    Views without a broker list (other targets; records before the list was observed) are judged
    by the clock instead: down for longer than the session timeout + settle time, measured to when
    the Metadata was answered (the entry's ``t``), still in an ISR with other members."""
    bound_s = (config.session_timeout_ms + config.settle_ms) / 1000
    violations = []
    for e, down_since, listed_when_down in down_periods(history, config):
        view, t = e["view"], e["t"]
        isr = view.get("isr", [])
        if len(isr) < 2:
            continue
        for broker in isr:
            since = down_since.get(broker)
            if since is None:
                continue
            if "brokers" in view:
                if listed_when_down[broker] and broker not in view["brokers"]:
                    violations.append(Violation(
                        "P-ELIG", e["i"], f"{e['partition']}: broker {broker}, down for {t - since:.1f} s and fenced "
                        f"(not among the brokers {view['brokers']} of the same Metadata answer), is still in the ISR "
                        f"{isr}", {"broker": broker, "isr": isr, "down_s": round(t - since, 3), "fenced": True,
                                   "brokers": view["brokers"]}))
            elif t - since > bound_s:
                violations.append(Violation(
                    "P-ELIG", e["i"], f"{e['partition']}: broker {broker}, down for {t - since:.1f} s (session "
                    f"timeout {config.session_timeout_ms} ms), is still in the ISR {isr}",
                    {"broker": broker, "isr": isr, "down_s": round(t - since, 3)}))
    return violations


PROPERTY = Property("P-ELIG", controller_request=controller_request, ground_truth=ground_truth, views=views)
