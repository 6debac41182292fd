"""Targeted search (issue 16; Löscher and Sagonas, "Targeted property-based testing", ISSTA 2017):
protocol distances measured on the reference after every step and handed to `hypothesis.target`
when the run ends, so that Hypothesis's targeting phase (`Phase.target`) hill-climbs towards the
runs that spend the most steps near a bug instead of waiting for one by luck.

Each distance counts, summed over a run's steps, how close the reference is to a state a bug of
bugs.md needs:

* `pending_while_member_lags` (cluster): a leader's ISR change in flight while a member of its
  maximal ISR has a shorter log (leader.md §2–§3: B08, D4, D9 act in that window);
* `ineligible_isr_members`: ISR memberships of brokers that are fenced or in controlled shutdown
  (controller.md §4, KIP-841: what B02, B04 and a controller that re-admits a shut-down broker get
  wrong happens around them);
* `isr_at_min`: partitions whose ISR is at (or, at the controller level, below) min.insync.replicas
  (leader.md §7, KIP-966: one more shrink and acks=all must refuse — B15a, B23);
* `stale_proposal_epochs` (cluster): how many partition epochs the controller is past an in-flight
  proposal (controller.md §2.4's compare-and-set; leader.md §9: D4, D6, D9);
* `refused_for_eligibility`, `refused_for_epochs` (controller): AlterPartition items the reference
  answered INELIGIBLE_REPLICA / STALE_BROKER_EPOCH, or FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION
  (controller.md §2.4): the requests a controller that skips that check (B01, B02, D1, B21) accepts.

Hypothesis's engine records at most one observation per label per example, so a run's sums are
reported once, at teardown (`TargetedSearch`). Draws never read the distances: they only rank runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from hypothesis import target
from hypothesis.stateful import invariant
from isrcheck.contract.operations.coverage import outcome
from isrcheck.reference_impl.broker import SHUTTING_DOWN
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.partition import LEADER

TARGET = "target"
"""The generation idea's name (cluster_machine.IDEAS, bench/detect.py --ideas)."""
ELIGIBILITY_REFUSALS = frozenset({"INELIGIBLE_REPLICA", "STALE_BROKER_EPOCH"})
EPOCH_REFUSALS = frozenset({"FENCED_LEADER_EPOCH", "INVALID_UPDATE_VERSION"})
CONTROLLER_LABELS = ("ineligible_isr_members", "isr_at_min", "refused_for_eligibility", "refused_for_epochs")
CLUSTER_LABELS = ("ineligible_isr_members", "isr_at_min", "pending_while_member_lags", "stale_proposal_epochs")
"""Every label is reported in every run of its level (0 where the run never came near)."""


def controller_distances(controller: Controller) -> Counter[str]:
    """The controller-level distances of one step, read off the reference controller."""
    ineligible = {b for b, r in controller.brokers.items() if r.fenced or r.in_controlled_shutdown}
    ineligible |= {b for b, h in controller.heartbeats.items() if h.shutting_down}
    min_isr = controller.config.min_insync_replicas
    states = controller.partitions.values()
    return Counter({
        "ineligible_isr_members": sum(1 for s in states for m in s.isr if m in ineligible),
        "isr_at_min": sum(1 for s in states if len(s.replicas) > 1 and len(s.isr) <= min_isr),
    })


def refusal_distances(steps: Iterable[Any]) -> Counter[str]:
    """AlterPartition steps (with `op` and the reference's answer, `reference`) the reference
    refused for a member's eligibility or for the request's epochs."""
    counts: Counter[str] = Counter()
    for step in steps:
        if step.op != "alter_partition":
            continue
        code = outcome(step.reference)
        if code in ELIGIBILITY_REFUSALS:
            counts["refused_for_eligibility"] += 1
        elif code in EPOCH_REFUSALS:
            counts["refused_for_epochs"] += 1
    return counts


def cluster_distances(cluster: Cluster) -> Counter[str]:
    """The cluster-level distances of one step, read off the reference cluster's ground truth."""
    controller = cluster.controller
    ineligible = {b for b, p in cluster.brokers.items() if p.status == SHUTTING_DOWN}
    ineligible |= {b for b, r in controller.brokers.items() if r.fenced or r.in_controlled_shutdown}
    min_isr = cluster.config.min_insync_replicas
    counts: Counter[str] = Counter({
        "ineligible_isr_members": sum(1 for s in controller.partitions.values() for m in s.isr if m in ineligible),
        "isr_at_min": sum(1 for s in controller.partitions.values() if len(s.replicas) > 1 and len(s.isr) == min_isr),
    })
    for broker in cluster.brokers.values():
        if not broker.alive:
            continue
        for partition in broker.partitions.values():
            state = partition.state
            if partition.role != LEADER or not state.is_inflight:
                continue
            if any(follower_leo(cluster, m, partition.tp) < partition.log.leo
                   for m in state.maximal_isr if m != broker.id):
                counts["pending_while_member_lags"] += 1
            committed = controller.partitions.get(partition.tp)
            sent = getattr(state, "sent", None)
            if committed is not None and sent is not None:
                counts["stale_proposal_epochs"] += max(0, committed.partition_epoch - sent.partition_epoch)
    return counts


def follower_leo(cluster: Cluster, broker: int, tp: tuple[str, int]) -> int:
    """A replica's own log end offset (-1 where the broker is down or has no replica)."""
    process = cluster.brokers.get(broker)
    partition = None if process is None or not process.alive else process.partitions.get(tp)
    return -1 if partition is None else partition.log.leo


class TargetedSearch:
    """Mixed into a machine (before it) by the campaign when the `target` idea is on: measures the
    distances after every step and reports the run's sums to Hypothesis once, at teardown. The
    machine provides `reference` (a `Controller` or a `Cluster`) and `run` (with its `trace`)."""

    reference: Any
    run: Any

    @invariant()
    def measure_distances(self) -> None:
        distances: Counter[str] = self.__dict__.setdefault("distances", Counter())
        if isinstance(self.reference, Cluster):
            distances.update(cluster_distances(self.reference))
            return
        distances.update(controller_distances(self.reference))
        seen = self.__dict__.get("steps_measured", 0)
        distances.update(refusal_distances(self.run.trace[seen:]))
        self.__dict__["steps_measured"] = len(self.run.trace)

    def teardown(self) -> None:
        distances: Counter[str] = self.__dict__.get("distances", Counter())
        labels = CLUSTER_LABELS if isinstance(self.reference, Cluster) else CONTROLLER_LABELS
        try:
            for label in labels:
                target(float(distances[label]), label=label)
        finally:
            super().teardown()  # type: ignore[misc]
