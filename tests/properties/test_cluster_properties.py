"""Every cluster-level property's ground-truth form (conformance/properties/p_*.py, leader_in_isr.py) on hand-built
observations: one that must pass and at least one that must fail, so each check is shown able to
fail. Violations must be JSON-able and name the property and step."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from isrcheck.conformance.properties.catalogue import STEP_PROPERTIES, unknown_properties
from isrcheck.conformance.properties.checker import GROUND_TRUTH, VIEWS, Violation
from isrcheck.conformance.properties.ground_truth_memory import History
from isrcheck.conformance.properties.leader_in_isr import ground_truth as leader_in_isr
from isrcheck.conformance.properties.monitor import PropertyMonitor
from isrcheck.conformance.properties.p_1if import ground_truth as p_1if
from isrcheck.conformance.properties.p_ack import ground_truth as p_ack
from isrcheck.conformance.properties.p_adm import ground_truth as p_adm
from isrcheck.conformance.properties.p_elig import ground_truth as p_elig
from isrcheck.conformance.properties.p_hwm import ground_truth as p_hwm
from isrcheck.conformance.properties.p_hwv import ground_truth as p_hwv
from isrcheck.conformance.properties.p_lead import ground_truth as p_lead
from isrcheck.conformance.properties.p_live import ground_truth as p_live
from isrcheck.conformance.properties.p_log import ground_truth as p_log
from isrcheck.conformance.properties.p_shrink import ground_truth as p_shrink
from isrcheck.contract.history.ground_truth import (
    AckedRecord,
    BrokerView,
    ClusterObservation,
    DataLoss,
    FollowerProgress,
    IsrAdmission,
    PartitionView,
    ProduceDecision,
    RegistrationView,
    ReplicaView,
)

TP = ("t", 0)
LOG = ((0, 1), (0, 2), (0, 3))
NO_HISTORY = History()


def partition(**changes: Any) -> PartitionView:
    base = PartitionView("t", 0, (1, 2, 3), (1, 2, 3), 1, 0, 0, (), "RECOVERED", 2)
    return replace(base, **changes)


def replica(broker: int, **changes: Any) -> ReplicaView:
    leading = broker == 1
    base = ReplicaView(
        broker, "t", 0, "leader" if leading else "follower", 1, 0, 0, LOG, 3,
        (1, 2, 3) if leading else (), (1, 2, 3) if leading else (), "none", (), 0 if leading else -1,
    )
    return replace(base, **changes)


def observation(
    *,
    partitions: dict[tuple[str, int], PartitionView] | None = None,
    replicas: dict[int, ReplicaView] | None = None,
    registrations: dict[int, RegistrationView] | None = None,
    brokers: dict[int, BrokerView] | None = None,
    step: int = 7,
    **fields: Any,
) -> ClusterObservation:
    """A healthy 3-broker cluster with partition t-0 (leader 1, ISR {1,2,3}, three records, HW 3)."""
    views = {b: replica(b) for b in (1, 2, 3)}
    views.update(replicas or {})
    fields.setdefault("controller_log_end", 5)
    return ClusterObservation(
        step=step,
        now_ms=1000,
        partitions=partitions if partitions is not None else {TP: partition()},
        registrations=registrations if registrations is not None else {
            b: RegistrationView(b, 10 + b, False, False) for b in (1, 2, 3)
        },
        brokers=brokers if brokers is not None else {
            b: BrokerView(b, "running", f"i{b}", 10 + b, 5) for b in (1, 2, 3)
        },
        replicas={(b, "t", 0): v for b, v in views.items()},
        **fields,
    )


HEALTHY = observation()


def names(violations: list[Violation]) -> set[str]:
    return {v.property for v in violations}


@pytest.mark.parametrize("name", sorted(STEP_PROPERTIES))
def test_every_step_property_holds_on_a_healthy_cluster(name: str) -> None:
    assert STEP_PROPERTIES[name](HEALTHY, History(HEALTHY)) == []


def test_p_live_holds_on_a_healthy_cluster() -> None:
    assert p_live(HEALTHY) == []


# ---------------------------------------------------------------------------------- P-ACK


def test_p_ack() -> None:
    acked = (AckedRecord("t", 0, 1, 2, 99),)
    assert p_ack(observation(acked=acked), NO_HISTORY) == []
    lost = observation(acked=acked, replicas={1: replica(1, log=((0, 1), (1, 7)), hw=2)})
    [violation] = p_ack(lost, NO_HISTORY)
    assert violation.property == "P-ACK" and violation.step == 7
    assert violation.evidence["record"] == 2 and violation.evidence["leader_holds"] == [1, 7]
    assert p_ack(observation(acked=acked, replicas={1: replica(1, log=((0, 1),), hw=1)}), NO_HISTORY)


def test_p_ack_exemptions() -> None:
    """Unclean elections are outside P-ACK; a leader that has not taken over is not judged yet."""
    acked = (AckedRecord("t", 0, 1, 2, 99),)
    short = {1: replica(1, log=((0, 1),), hw=1)}
    assert p_ack(observation(acked=acked, replicas=short, unclean=frozenset({TP})), NO_HISTORY) == []
    not_yet = {1: replica(1, log=((0, 1),), hw=1, role="follower")}
    assert p_ack(observation(acked=acked, replicas=not_yet), NO_HISTORY) == []


# ---------------------------------------------------------------------------------- P-SHRINK

LAG = 10_000


def shrink_case(now: int, caught_up: int = 0, behind_since: int = 0, state_since: int = 0, pending: str = "none",
                isr: tuple[int, ...] = (1, 2, 3), status: str = "running") -> ClusterObservation:
    """Leader 1 reports follower 3 at fetch offset 1 (its LEO is 3) since `behind_since`, last
    caught up at `caught_up`; lag 10 s, so the isr-expiration period is 5 s."""
    leader = replica(1, isr=isr, pending=pending, state_since_ms=state_since,
                     behind=(FollowerProgress(3, 1, caught_up, behind_since),))
    brokers = {b: BrokerView(b, status if b == 1 else "running", f"i{b}", 10 + b, 5, replica_lag_time_max_ms=LAG)
               for b in (1, 2, 3)}
    return replace(observation(replicas={1: leader}, brokers=brokers), now_ms=now)


def test_p_shrink_bound_is_lag_plus_one_period_after_the_follower_last_caught_up() -> None:
    out_of_sync_from = LAG + 1  # isCaughtUp: now - lastCaughtUp <= lag
    assert p_shrink(shrink_case(out_of_sync_from + LAG // 2 + 1), NO_HISTORY) == []  # within period + 1 ms slack
    [violation] = p_shrink(shrink_case(out_of_sync_from + LAG // 2 + 2), NO_HISTORY)
    assert violation.property == "P-SHRINK" and violation.step == 7
    assert violation.evidence["follower"] == 3 and violation.evidence["out_of_sync_since_ms"] == out_of_sync_from
    assert violation.evidence["late_ms"] == 1
    json.dumps(violation.to_json())


def test_p_shrink_clock_restarts_with_each_reason_it_may_not_have_run() -> None:
    """The latest of: the follower last caught up + lag, its fetch offset last falling behind the
    leader's end (KAFKA-7152: equal is caught up), the leader's ISR state last changing."""
    late = 30_000
    assert p_shrink(shrink_case(late), NO_HISTORY)
    assert p_shrink(shrink_case(late, caught_up=late - LAG - 5_001), NO_HISTORY) == []
    assert p_shrink(shrink_case(late, caught_up=late - LAG - 5_003), NO_HISTORY)
    assert p_shrink(shrink_case(late, behind_since=late - 5_000), NO_HISTORY) == []
    assert p_shrink(shrink_case(late, state_since=late - 5_000), NO_HISTORY) == []
    assert p_shrink(shrink_case(late, state_since=late - 5_002), NO_HISTORY)


def test_p_shrink_judges_only_an_alive_leader_with_nothing_pending_and_the_follower_in_its_isr() -> None:
    late = 30_000
    assert p_shrink(shrink_case(late, pending="expand"), NO_HISTORY) == []
    assert p_shrink(shrink_case(late, isr=(1, 2)), NO_HISTORY) == []
    assert p_shrink(shrink_case(late, status="crashed"), NO_HISTORY) == []
    assert p_shrink(replace(HEALTHY, now_ms=late), NO_HISTORY) == []  # nothing reported: nothing judged


def test_the_monitor_judges_p_shrink_when_only_time_moved() -> None:
    """A step where nothing but the clock moved is skipped for the other properties, not this one."""
    monitor = PropertyMonitor(["P-SHRINK"])
    before = shrink_case(10_000)
    assert monitor.observe(before) == []
    [violation] = monitor.observe(replace(before, now_ms=30_000, step=8))
    assert violation.step == 8


# ---------------------------------------------------------------------------------- P-ADM


def decision(acks: int, isr_size: int, outcome: str, min_isr: int = 2) -> ProduceDecision:
    return ProduceDecision(7, "t", 0, 1, acks, isr_size, min_isr, outcome)


@pytest.mark.parametrize(("acks", "isr_size", "outcome"), [
    (-1, 3, "APPENDED"), (-1, 2, "APPENDED"), (-1, 1, "NOT_ENOUGH_REPLICAS"),
    (1, 1, "APPENDED"), (0, 1, "APPENDED"),
])
def test_p_adm_holds_on_the_rule(acks: int, isr_size: int, outcome: str) -> None:
    """leader.md §8: acks=all is refused iff |committed ISR| < min ISR; acks 0 and 1 never are."""
    assert p_adm(observation(produce_decisions=(decision(acks, isr_size, outcome),)), NO_HISTORY) == []


@pytest.mark.parametrize(("acks", "isr_size", "outcome", "expected"), [
    (-1, 1, "APPENDED", "NOT_ENOUGH_REPLICAS"),  # appended below the min ISR
    (-1, 2, "NOT_ENOUGH_REPLICAS", "APPENDED"),  # refused at the min ISR (`<=` for `<`)
    (0, 1, "NOT_ENOUGH_REPLICAS", "APPENDED"),  # acks=0 refused for the ISR's size
])
def test_p_adm_violated_in_both_directions(acks: int, isr_size: int, outcome: str, expected: str) -> None:
    [violation] = p_adm(observation(produce_decisions=(decision(acks, isr_size, outcome),)), NO_HISTORY)
    assert violation.property == "P-ADM" and violation.step == 7
    assert violation.evidence == {"partition": "t-0", "leader": 1, "acks": acks, "isr_size": isr_size,
                                  "min_isr": 2, "outcome": outcome, "expected": expected}
    json.dumps(violation.to_json())


def test_p_adm_judges_only_decisions_since_the_previous_observation() -> None:
    wrong = decision(-1, 1, "APPENDED")
    before = observation(produce_decisions=(wrong,))
    after = observation(produce_decisions=(wrong, decision(-1, 3, "APPENDED")))
    assert p_adm(after, History(before)) == []
    assert len(p_adm(after, NO_HISTORY)) == 1


def test_p_adm_is_unknown_for_a_black_box_cluster_and_judged_on_ground_truth() -> None:
    """A black box shows a refusal, not the ISR its leader read: P-ADM is never a pass there."""
    assert "P-ADM" in unknown_properties("cluster", [VIEWS])
    assert "P-ADM" not in unknown_properties("cluster", [GROUND_TRUTH])


# ---------------------------------------------------------------------------------- P-HWV


def test_p_hwv_valid_high_watermark() -> None:
    behind = observation(replicas={3: replica(3, log=LOG[:1], hw=1)})
    [violation] = p_hwv(behind, NO_HISTORY)
    assert violation.evidence["member"] == 3 and violation.evidence["member_leo"] == 1


def test_p_hwv_strong_isr() -> None:
    different = observation(replicas={2: replica(2, log=((0, 1), (0, 9), (0, 3)))})
    [violation] = p_hwv(different, NO_HISTORY)
    assert violation.evidence["offset"] == 1


def test_p_hwv_skips_members_whose_incarnation_is_not_running() -> None:
    down = observation(
        replicas={3: replica(3, log=(), hw=0, role="offline")},
        brokers={1: BrokerView(1, "running", "i1", 11, 5), 2: BrokerView(2, "running", "i2", 12, 5),
                 3: BrokerView(3, "crashed", "i3", 13, 5)},
    )
    assert p_hwv(down, NO_HISTORY) == []


# ---------------------------------------------------------------------------------- P-ELIG


def registrations(**overrides: RegistrationView) -> dict[int, RegistrationView]:
    views = {b: RegistrationView(b, 10 + b, False, False) for b in (1, 2, 3)}
    views.update({int(k[1:]): v for k, v in overrides.items()})
    return views


def test_p_elig_fenced_or_shutting_down_member() -> None:
    fenced = observation(registrations=registrations(b3=RegistrationView(3, 13, True, False)))
    assert [v.evidence["reason"] for v in p_elig(fenced, NO_HISTORY)] == ["fenced"]
    shutting = observation(registrations=registrations(b3=RegistrationView(3, 13, False, True)))
    assert [v.evidence["reason"] for v in p_elig(shutting, NO_HISTORY)] == ["in controlled shutdown"]
    accepted = observation(shutting_down=frozenset({2}))
    assert [v.evidence["broker"] for v in p_elig(accepted, NO_HISTORY)] == [2]


def test_p_elig_last_member_of_a_leaderless_partition_may_stay() -> None:
    lone = observation(
        partitions={TP: partition(isr=(3,), leader=-1)},
        registrations=registrations(b3=RegistrationView(3, 13, True, False)),
    )
    assert p_elig(lone, NO_HISTORY) == []


def test_p_elig_admissions() -> None:
    def admitted(process_epoch: int, caught_up: bool | None) -> ClusterObservation:
        return observation(admissions=(IsrAdmission(7, "t", 0, 3, 1, 13, process_epoch, caught_up),))

    assert p_elig(admitted(13, True), NO_HISTORY) == []
    assert p_elig(admitted(-1, False), NO_HISTORY) == []
    assert p_elig(admitted(13, None), NO_HISTORY) == []
    assert "had not caught up" in p_elig(admitted(13, False), NO_HISTORY)[0].message
    assert "epoch 14" in p_elig(admitted(14, True), NO_HISTORY)[0].message
    seen = admitted(13, False)
    assert p_elig(seen, History(seen)) == []


# ---------------------------------------------------------------------------------- P-LOG


def test_p_log() -> None:
    diverged_suffix = observation(replicas={3: replica(3, log=((0, 1), (0, 2), (1, 8)), hw=2)})
    assert p_log(diverged_suffix, NO_HISTORY) == []
    broken = observation(replicas={3: replica(3, log=((0, 1), (0, 5), (0, 3)), hw=2)})
    violations = p_log(broken, NO_HISTORY)
    assert {tuple(v.evidence["brokers"]) for v in violations} == {(1, 3), (2, 3)}
    assert violations[0].evidence["first_difference"] == 1


# ---------------------------------------------------------------------------------- P-HWM


def test_p_hwm_leader_hw_monotonic_within_an_epoch() -> None:
    before = observation()
    after = observation(replicas={1: replica(1, hw=2)})
    assert "went from 3 to 2" in p_hwm(after, History(before))[0].message
    new_epoch = observation(replicas={1: replica(1, hw=2, leader_epoch=1)})
    assert all("went from" not in v.message for v in p_hwm(new_epoch, History(before)))


def test_p_hwm_hw_never_past_the_leo() -> None:
    assert "is past its log end" in p_hwm(observation(replicas={2: replica(2, hw=4)}), NO_HISTORY)[0].message


def test_p_hwm_records_below_the_hw_stay() -> None:
    before = observation()
    truncated = observation(replicas={2: replica(2, log=LOG[:1], hw=1)})
    [violation] = p_hwm(truncated, History(before))
    assert violation.evidence["broker"] == 2 and violation.evidence["hw_before"] == 3
    lost = observation(replicas={2: replica(2, log=LOG[:1], hw=1)}, data_loss=(DataLoss(7, 2, "disk"),))
    assert p_hwm(lost, History(before)) == []


def test_p_hwm_exposed_records_survive_leader_changes() -> None:
    history = History(None, {TP: LOG})
    new_leader = observation(
        partitions={TP: partition(leader=2, leader_epoch=1)},
        replicas={2: replica(2, role="leader", leader=2, leader_epoch=1, log=LOG[:2], hw=2),
                  1: replica(1, role="follower", leader=2, leader_epoch=1)},
    )
    assert "lacks records exposed" in p_hwm(new_leader, history)[0].message


# ---------------------------------------------------------------------------------- P-1IF


def test_p_1if() -> None:
    two_requests = observation(brokers={1: BrokerView(1, "running", "i1", 11, 5, 2, ((TP, 4, True),))})
    assert "2 AlterPartition requests" in p_1if(two_requests, NO_HISTORY)[0].message
    two_proposals = observation(brokers={1: BrokerView(1, "running", "i1", 11, 5, 1, ((TP, 4, True), (TP, 5, False)))})
    assert p_1if(two_proposals, NO_HISTORY)[0].evidence["proposals"] == [4, 5]
    one = observation(brokers={1: BrokerView(1, "running", "i1", 11, 5, 1, ((TP, 4, True),))})
    assert p_1if(one, NO_HISTORY) == []


# ---------------------------------------------------------------------------------- P-LEAD


def test_p_lead_acting_in_someone_elses_epoch() -> None:
    stale = observation(
        replicas={2: replica(2, role="leader", leader=2, leader_epoch=0)}, epoch_leaders={("t", 0, 0): 1}
    )
    assert "gave epoch 0 to 1" in p_lead(stale, NO_HISTORY)[0].message
    assert p_lead(observation(epoch_leaders={("t", 0, 0): 1}), NO_HISTORY) == []


def test_p_lead_two_actors_and_epochs_going_back() -> None:
    history = History(None, {}, {("t", 0, 0): 3})
    assert "already acted" in p_lead(HEALTHY, history)[0].message
    before = observation(partitions={TP: partition(leader_epoch=2, partition_epoch=5)})
    assert "went backwards" in p_lead(HEALTHY, History(before))[0].message


def test_p_lead_a_committed_isr_the_controller_never_committed_at_that_epoch() -> None:
    """D4's state: the leader applied partition epoch 2 (ISR {1}), then a late refusal made it
    revert to its proposal's base, {1, 3}, which was the ISR of epoch 1."""
    history = {("t", 0, 1): (1, 3), ("t", 0, 2): (1,)}
    reverted = observation(replicas={1: replica(1, partition_epoch=2, isr=(1, 3), maximal_isr=(1, 3))},
                           epoch_isrs=history)
    [violation] = p_lead(reverted, NO_HISTORY)
    assert violation.property == "P-LEAD"
    assert violation.evidence == {"partition": "t-0", "broker": 1, "partition_epoch": 2,
                                  "leader_isr": [1, 3], "controller_isr": [1]}


def test_p_lead_holds_for_the_committed_isr_in_any_order_pending_or_not() -> None:
    history = {("t", 0, 1): (1, 3), ("t", 0, 2): (3, 1)}
    current = observation(replicas={1: replica(1, partition_epoch=2, isr=(1, 3))}, epoch_isrs=history)
    assert p_lead(current, NO_HISTORY) == []
    # a pending expansion's `isr` is still the committed one (leader.md §2); the proposal is not judged
    pending = observation(replicas={1: replica(1, partition_epoch=2, isr=(1, 3), maximal_isr=(1, 3, 2),
                                               pending="expand", proposed_isr=(1, 3, 2))}, epoch_isrs=history)
    assert p_lead(pending, NO_HISTORY) == []
    # a leader still on an older epoch (its metadata lags) holds that epoch's ISR: no finding
    lagging = observation(replicas={1: replica(1, partition_epoch=1, isr=(1, 3))}, epoch_isrs=history)
    assert p_lead(lagging, NO_HISTORY) == []
    # no history (a target that does not report one): nothing to judge
    assert p_lead(observation(replicas={1: replica(1, partition_epoch=2, isr=(2,))}), NO_HISTORY) == []


# ---------------------------------------------------------------------------------- LeaderInIsr


def test_leader_in_isr() -> None:
    assert leader_in_isr(observation(partitions={TP: partition(isr=(2, 3))}), NO_HISTORY)
    assert leader_in_isr(observation(partitions={TP: partition(isr=(2, 3), leader=-1)}), NO_HISTORY) == []


# ---------------------------------------------------------------------------------- P-LIVE


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"replicas": {1: replica(1, pending="shrink")}}, "pending shrink"),
        ({"brokers": {1: BrokerView(1, "running", "i1", 11, 5, 1, ((TP, 4, True),)),
                      2: BrokerView(2, "running", "i2", 12, 5), 3: BrokerView(3, "running", "i3", 13, 5)}},
         "proposals queued"),
        ({"partitions": {TP: partition(isr=(1, 2))}}, "caught-up eligible follower 3"),
        ({"replicas": {3: replica(3, log=LOG[:2], hw=2)}}, "down or lagging"),
        ({"replicas": {1: replica(1, hw=2)}, "partitions": {TP: partition(min_isr=2)}}, "has not reached"),
        ({"replicas": {2: replica(2, hw=2)}}, "has not converged"),
        ({"partitions": {TP: partition(leader=-1)}}, "leaderless"),
        ({"pending_produces": 2}, "acks=all requests still waiting"),
        ({"controller_log_end": 9}, "applied metadata"),
        ({"registrations": registrations(b2=RegistrationView(2, 12, True, False))}, "not registered and unfenced"),
    ],
)
def test_p_live_finds(changes: dict[str, Any], fragment: str) -> None:
    found = p_live(observation(**changes))
    assert any(fragment in v.message for v in found), [v.message for v in found]
    assert all(v.property == "P-LIVE" for v in found)


def test_p_live_allows_a_frozen_hw_under_min_isr() -> None:
    under = observation(
        partitions={TP: partition(isr=(1,), min_isr=2)},
        replicas={1: replica(1, hw=2), 2: replica(2, role="offline"), 3: replica(3, role="offline")},
        brokers={1: BrokerView(1, "running", "i1", 11, 5), 2: BrokerView(2, "crashed", "i2", 12, 5),
                 3: BrokerView(3, "crashed", "i3", 13, 5)},
    )
    assert p_live(under) == []


# ---------------------------------------------------------------------------------- values and monitor


def test_violations_are_json_values() -> None:
    violation = p_hwv(observation(replicas={3: replica(3, log=LOG[:1], hw=1)}), NO_HISTORY)[0]
    data = json.loads(json.dumps(violation.to_json()))
    assert data["property"] == "P-HWV" and data["step"] == 7 and data["evidence"]["member"] == 3
    finding = violation.to_finding("tick")
    assert finding.property == "P-HWV" and finding.signature == "violation:tick:P-HWV:"


def test_observation_is_json_able() -> None:
    data = observation(acked=(AckedRecord("t", 0, 1, 2, 99),)).to_json()
    assert json.loads(json.dumps(data))["replicas"]["1:t-0"]["log"] == [[0, 1], [0, 2], [0, 3]]


def test_monitor_reports_a_violation_once() -> None:
    monitor = PropertyMonitor()
    broken = observation(partitions={TP: partition(isr=(2, 3))})
    assert names(monitor.observe(broken)) == {"LeaderInIsr"}
    assert monitor.observe(replace(broken, step=8)) == []
    assert [v.property for v in monitor.violations] == ["LeaderInIsr"]
    assert PropertyMonitor(["P-ACK"]).observe(broken) == []
    with pytest.raises(KeyError):
        PropertyMonitor(["P-NOPE"])
