"""Protocol-state coverage at the cluster level: which leader, broker and partition states a run's
ground truth went through (contract/operations/coverage.py `STATES` names them all).

An error code shows which validation branch a request took; it does not show the states the
bugs of bugs.md need around it — a leader with an ISR change pending (leader.md §2) while one of
its ISR members lags (B08), a proposal in flight (§12), a fenced or shutting-down broker
(controller.md §4), a broker back as a new incarnation (B01, B06), an offline partition; nor
which decision branches of leader.md the leader took (`leader_branch:…`, named by the reference
as it takes them), nor how the controller answered the brokers' own AlterPartition requests
(`alter_partition:CODE`, the validation branch: at the cluster level no step sends one). The
property monitor, which sees every observation anyway, collects these points."""

from __future__ import annotations

from isrcheck.contract.history.ground_truth import ClusterObservation


def state_points(observation: ClusterObservation, previous: ClusterObservation | None) -> set[str]:
    """The state points `observation` shows (`previous`, the observation before it, gives the
    transitions: a broker restarted as a new incarnation)."""
    points: set[str] = set()
    for replica in observation.replicas.values():
        if replica.role != "leader" or replica.pending == "none":
            continue
        points.add(f"leader:pending_{replica.pending}")
        lagging = [m for m in replica.maximal_isr if m != replica.broker
                   and (other := observation.replica(m, replica.tp)) is not None and other.leo < replica.leo]
        if lagging:
            points.add("leader:pending_while_member_lags")
    for broker in observation.brokers.values():
        if broker.alter_partition_requests:
            points.add("leader:proposal_in_flight")
        if broker.status != "running":
            points.add(f"broker:{broker.status}")
        before = None if previous is None else previous.brokers.get(broker.broker)
        if before is not None and before.incarnation != broker.incarnation:
            points.add("broker:restarted")
    for registration in observation.registrations.values():
        if registration.fenced:
            points.add("broker:fenced")
        if registration.in_controlled_shutdown:
            points.add("broker:in_controlled_shutdown")
    points |= run_long_states(observation, previous)
    for partition in observation.partitions.values():
        if partition.leader < 0:
            points.add("partition:offline")
        if partition.elr:
            points.add("partition:elr")
        if len(partition.isr) < partition.min_isr:
            points.add("partition:under_min_isr")
    return points


def run_long_states(observation: ClusterObservation, previous: ClusterObservation | None) -> set[str]:
    """The points of the run-long sets (leader branches, AlterPartition outcomes) new since `previous`."""
    return run_long_points("leader_branch", observation.leader_branches,
                           None if previous is None else previous.leader_branches) | run_long_points(
        "alter_partition", observation.alter_partition_outcomes,
        None if previous is None else previous.alter_partition_outcomes)


def run_long_points(subject: str, now: frozenset[str], before: frozenset[str] | None) -> set[str]:
    """`subject:name` for a set the reference keeps for the whole run; read again only when it
    changed (the cluster hands out the same object until it grows)."""
    if not now or now is before:
        return set()
    return {f"{subject}:{name}" for name in now}
