"""The mutant catalogue: named, small variations of the reference, each reintroducing one bug
from bugs.md (or a derived mutant of its appendix), plus negative controls the checks must
*not* flag. `isrcheck mutants` lists it.

Controller-level mutants carry a `controller_class` (the controller machine and the wire
adapters can run them); cluster-level ones carry `cluster_options`, the keyword arguments for
`Cluster(...)` / `ReferenceClusterTarget(...)` (rules objects are stateless instances, manager
and controller mutants classes). A controller-level mutant also runs in the cluster model:
`Mutant.cluster_kwargs()` gives `controller_class` then.

Every cluster-level entry is proven in tests/mutants/test_cluster_mutants.py: its scenario (or
seeds) break one of `breaks` and pass on the reference. `breaks` is bugs.md's list, plus P-ELIG for
B09: a follower whose diverging fetch counted as progress is proposed without the leader's records,
which breaks P-ELIG's "the one that caught up" conjunct at the admission itself; and P-HWV for B01L
and B01 (its controller-side twin, run in the cluster model): the empty incarnation the controller
admits is, from that step on, an ISR member below the leader's HW (StrongIsr), which generation sees
at the same step as P-ELIG; P-HWM for B07: KAFKA-7128 is "committed data loss", records exposed
below the old leader's HW that the replica it wrongly admits never had, which P-HWM sees even
when the acks=all request they came in timed out before the HW reached them; and P-LEAD for D4:
the revert to the replaced proposal's base leaves the leader with an ISR the controller never
committed at its partition epoch, at the step the late answer arrives (P-HWV follows only where
the HW can pass the member it brings back, on 3.3 and 3.5). Mutants that are expressible but whose
effect the model cannot show (equivalent mutants) are listed apart, with the reason, in
`EQUIVALENT`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..controller import Controller
from ..mutants import cluster_mutants as km
from ..mutants import controller_mutants as cm


@dataclass(frozen=True)
class Mutant:
    id: str
    title: str
    source: str
    breaks: tuple[str, ...]
    level: str
    controller_class: type[Controller] | None = None
    negative_control: bool = False
    cluster_options: tuple[tuple[str, object], ...] = ()
    """Keyword arguments for `Cluster(...)` / `ReferenceClusterTarget(...)` (cluster level)."""
    release: str | None = None
    """The release a campaign runs this mutant on unless told otherwise: set where the bug lives in
    a protocol only older releases speak (B22: AlterPartition below v3; D14: Fetch below v15,
    metadata.version below 3.5-IV1). None: the newest."""

    def cluster_kwargs(self) -> dict[str, Any]:
        """What to pass to the cluster model to run this mutant there."""
        options = dict(self.cluster_options)
        if self.controller_class is not None:
            options.setdefault("controller_class", self.controller_class)
        return options

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id, "title": self.title, "source": self.source, "breaks": list(self.breaks),
            "level": self.level, "negative_control": self.negative_control, "release": self.release,
        }


def _leader(rules: object) -> tuple[tuple[str, object], ...]:
    return (("leader_rules", rules),)


def _cluster(mutant_id: str, title: str, source: str, breaks: tuple[str, ...], *options: tuple[str, object],
             negative_control: bool = False, release: str | None = None) -> Mutant:
    return Mutant(mutant_id, title, source, breaks, "cluster", negative_control=negative_control,
                  cluster_options=options, release=release)


CLUSTER_MUTANTS: tuple[Mutant, ...] = (
    _cluster("B01L", "leader proposes the ISR without member broker epochs (no KIP-903 check possible)",
             "KAFKA-14139 / KIP-903", ("P-ELIG", "P-ACK", "P-HWV"), *_leader(km.ProposalWithoutBrokerEpochs())),
    _cluster("B03a", "leader proposes a follower its cache shows fenced or shutting down (with B02's controller)",
             "KAFKA-13916 / KIP-841", ("P-ELIG",), *_leader(km.ProposesIneligibleReplicas()),
             ("controller_class", cm.AcceptsFencedAndShuttingDown)),
    _cluster("B03b", "leader retries an INELIGIBLE_REPLICA proposal instead of reverting",
             "KAFKA-13916 / KIP-841", ("P-LIVE",), *_leader(km.RetriesIneligibleReplica())),
    _cluster("B06", "a Fetch from an older broker incarnation still updates the follower's state",
             "KAFKA-15221", ("P-ELIG", "P-ACK", "P-HWV"), *_leader(km.StaleIncarnationFetchAccepted())),
    _cluster("B07", "follower in sync at the HW without reaching the leader-epoch start offset",
             "KAFKA-7128", ("P-HWV", "P-ACK", "P-HWM"), *_leader(km.InSyncAtHighWatermark())),
    _cluster("B08a", "pending shrink used early: HW over the proposed smaller ISR",
             "KIP-497 design", ("P-HWV", "P-ACK"), *_leader(km.ShrinkAssumedEarly())),
    _cluster("B08b", "pending expansion ignored: the new member does not hold the HW back",
             "KIP-497 design", ("P-HWV", "P-ACK"), *_leader(km.ExpansionNotAssumed())),
    _cluster("B09", "a fetch answered with a diverging epoch still counts as follower progress",
             "KAFKA-13141", ("P-HWV", "P-ACK", "P-LOG", "P-ELIG"), *_leader(km.DivergingFetchIsProgress())),
    _cluster("B15a", "HW advances while the ISR is below min.insync.replicas",
             "KIP-966 / KAFKA-15583", ("P-ACK", "P-HWM"), *_leader(km.HwAdvancesUnderMinIsr())),
    _cluster("B17", "new metadata clears the manager's in-flight item",
             "KAFKA-12686", ("P-1IF", "P-LIVE"), *_leader(km.ClearsInflightItem())),
    _cluster("B21L", "partition-level NOT_CONTROLLER from a stale controller treated as a partition error",
             "KAFKA-14154", ("P-LIVE",), ("manager_class", km.TrustsStaleControllerErrors)),
    _cluster("B22", "a rebuilt AlterPartition below v3 carries an empty ISR",
             "KAFKA-15353", ("P-LIVE",), ("manager_class", km.NonIdempotentRequestBuild), release="3.3"),
    _cluster("B23", "a caught-up but ineligible (shutting-down) replica holds the HW back",
             "KAFKA-15021", ("P-LIVE",), *_leader(km.IneligibleHoldsBackHw())),
    _cluster("B27", "follower applies the leader's HW before truncating on a diverging epoch",
             "KAFKA-14704", ("P-HWM",), ("follower_rules", km.HwBeforeTruncation())),
    _cluster("D4", "a response is applied after newer metadata replaced the proposal",
             "bugs.md appendix 4", ("P-LEAD", "P-HWV", "P-ELIG"), *_leader(km.LateResponseApplied())),
    _cluster("D6", "metadata with an older partition epoch is applied (an older ISR resurrected)",
             "bugs.md appendix 6", ("P-HWV",), *_leader(km.AppliesOlderMetadata())),
    _cluster("D7", "a new leader takes its followers' LEOs as known instead of unknown",
             "bugs.md appendix 7", ("P-HWV", "P-ACK"), *_leader(km.NewLeaderAssumesFollowerLeos())),
    _cluster("D9", "leader proposes an ISR change while one is in flight",
             "bugs.md appendix 9", ("P-1IF", "P-HWV"), *_leader(km.ProposesWhileInflight())),
    _cluster("D10", "several AlterPartition requests in flight per broker, answered in any order",
             "bugs.md appendix 10", ("P-1IF", "P-HWV"), ("manager_class", km.ManyRequestsInflight)),
    _cluster("D13", "follower HW not clamped to its own LEO",
             "bugs.md appendix 13", ("P-HWM",), ("follower_rules", km.UnclampedFollowerHw())),
    _cluster("D14", "a Fetch without a broker epoch (< v15) makes the follower ISR-ineligible",
             "bugs.md appendix 14", ("P-LIVE",), *_leader(km.StrictFetchBrokerEpoch()), release="3.3"),
    _cluster("N2", "one AlterPartition item per request (allowed batching)",
             "negative control", (), ("manager_class", km.OneItemPerRequest), negative_control=True),
    _cluster("N3", "simultaneous session expiries handled in reverse order (allowed)",
             "negative control", (), ("controller_class", km.ReverseExpiryOrder), negative_control=True),
    _cluster("N4", "AlterPartition items in reverse order within a request (allowed)",
             "negative control", (), ("manager_class", km.ReverseBatchOrder), negative_control=True),
)


CATALOGUE: dict[str, Mutant] = {
    m.id: m
    for m in (
        Mutant("B01", "controller ignores the ISR members' broker epochs (no KIP-903 check)",
               "KAFKA-14139 / KIP-903", ("P-ELIG", "P-ACK", "P-HWV"), "controller", cm.IgnoresMemberBrokerEpochs),
        Mutant("B02", "controller accepts a fenced or shutting-down broker into the ISR",
               "KAFKA-13916 / KIP-841", ("P-ELIG",), "controller", cm.AcceptsFencedAndShuttingDown),
        Mutant("B04", "controlled-shutdown state lost on controller fail-over",
               "KIP-841 part 1", ("P-ELIG", "P-LIVE"), "controller", cm.ForgetsControlledShutdownOnFailOver),
        Mutant("B14", "automatic elections may pick a replica outside the ISR (unclean)",
               "KIP-106 / KAFKA-4623", ("P-ACK",), "controller", cm.AlwaysUnclean),
        Mutant("B21", "epochs ahead of the controller answered as fenced, not NOT_CONTROLLER",
               "KAFKA-14154", ("P-LIVE",), "controller", cm.StaleControllerErrors),
        Mutant("D1", "AlterPartition accepted without the partition-epoch compare-and-set",
               "bugs.md appendix 1", ("P-ELIG", "P-HWV", "P-LEAD"), "controller", cm.NoPartitionEpochCheck),
        Mutant("D12", "controller lets the leader drop itself from the ISR",
               "bugs.md appendix 12", ("LeaderInIsr",), "controller", cm.AcceptsIsrWithoutLeader),
        Mutant("N1", "broker epochs from a private counter instead of log offsets (allowed)",
               "negative control", (), "controller", cm.CounterBrokerEpochs, negative_control=True),
        # ---------------------------------------------------------------- cluster level
        *CLUSTER_MUTANTS,
    )
}


@dataclass(frozen=True)
class EquivalentMutant:
    """A mutant the model can express but not expose: no run distinguishes it from the reference
    through the properties, for the `reason` given (bugs.md, leader.md)."""

    mutant: Mutant
    reason: str


EQUIVALENT: dict[str, EquivalentMutant] = {
    e.mutant.id: e
    for e in (
        EquivalentMutant(
            _cluster("B01b", "leader does not compare a follower's Fetch broker epoch with its metadata cache",
                     "KAFKA-14139 / KIP-903", ("P-ELIG", "P-ACK"), *_leader(km.FetchEpochNotCompared())),
            "Expansion is decided on the Fetch that just updated the follower's state; a Fetch older than the "
            "cache's unfenced epoch is rejected before that (KAFKA-15221), and a newer one names the incarnation "
            "that caught up, which the controller checks (AlterPartition v3). Below v3 nothing carries member "
            "epochs, and the reference is as open to B01's race as Kafka is.",
        ),
        EquivalentMutant(
            _cluster("B10", "follower Fetch not fenced by the current leader epoch",
                     "KAFKA-6880 / KIP-320", ("P-ELIG", "P-LOG", "P-ACK"), *_leader(km.NoFetchEpochFencing())),
            "Every model Fetch carries LastFetchedEpoch (truncation on fetch, KAFKA-10554), which the leader "
            "checks whatever the current leader epoch, so a zombie's divergent suffix is never served; and a "
            "fenced zombie is ISR-ineligible (KIP-841). The pre-2.7 fetch protocol is not modelled.",
        ),
        EquivalentMutant(
            _cluster("B16", "success with an unchanged partition epoch treated as stale",
                     "KAFKA-12751", ("P-LIVE",), *_leader(km.EqualPartitionEpochIsStale())),
            "A KRaft controller answers success at the leader's partition epoch only to a proposal equal to its "
            "current state, which a KRaft leader never sends (every change bumps the partition epoch; a stale "
            "resend gets INVALID_UPDATE_VERSION). The trigger is the ZK controller's idempotency shortcut "
            "(KAFKA-14144), which is not modelled.",
        ),
        EquivalentMutant(
            _cluster("B19", "no HW recomputation after a committed shrink",
                     "KAFKA-13091", ("P-LIVE",), *_leader(km.NoHwAfterCommit())),
            "In KRaft the committed change's PartitionChangeRecord always reaches the leader, and makeLeader "
            "recomputes the HW (as Kafka's does); the HW is only late until then (while the leader's metadata "
            "lags). KAFKA-13091 hit the ZK AlterIsr path, where no LeaderAndIsr followed a leader's change.",
        ),
        EquivalentMutant(
            _cluster("B26", "follower with the leader's LEO declared out of sync",
                     "KAFKA-7152", ("P-LIVE",), *_leader(km.IdleFollowerOutOfSync())),
            "Every model Fetch names every partition, so an idle follower refreshes its caught-up time on each "
            "fetch (the JIRA's trigger was incremental fetch sessions leaving idle partitions out); a follower "
            "whose fetches stop is shrunk early and rejoins on its next fetch — a transient churn P-LIVE, "
            "checked after a heal, cannot see.",
        ),
        EquivalentMutant(
            _cluster("D2", "leader commits the proposed ISR instead of the controller's",
                     "bugs.md appendix 2", ("P-HWV",), *_leader(km.CommitsProposedIsr())),
            "The only KRaft answer whose ISR differs from the proposal is a reassignment completion, which also "
            "bumps the leader epoch, so leader.md §9 step 2's leader-epoch check ignores it before the ISR is read.",
        ),
        EquivalentMutant(
            _cluster("D3", "success committed whatever its leader epoch",
                     "bugs.md appendix 3", ("P-LEAD", "P-HWV"), *_leader(km.AcceptsOtherLeaderEpoch())),
            "A success with another leader epoch (a reassignment completion, or a shrink before 3.6) carries "
            "the controller's committed ISR and partition epoch; committing it before the metadata is harmless: "
            "the metadata with the new epoch follows and resets the followers' state.",
        ),
        EquivalentMutant(
            _cluster("D5", "revert on FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION",
                     "bugs.md appendix 5", ("P-LIVE",), *_leader(km.RevertsOnEpochErrors())),
            "The reverted state keeps the stale partition epoch, so every proposal made from it is refused "
            "until the metadata arrives — churn only. (With D1's controller, which skips the compare-and-set, "
            "INVALID_UPDATE_VERSION never comes.)",
        ),
        EquivalentMutant(
            _cluster("D8", "new leader gives ISR followers no lag window of grace",
                     "bugs.md appendix 8", ("P-LIVE",), *_leader(km.NoGracePeriod())),
            "ISR followers fetch within a fetch interval of the election; a shrink before that is a transient "
            "churn (they rejoin on their next fetch) that P-LIVE, checked after a heal, cannot see.",
        ),
        EquivalentMutant(
            _cluster("D11", "acks=all completion without the min.insync.replicas re-check",
                     "bugs.md appendix 11", ("P-ACK",), *_leader(km.NoMinIsrCheckOnCompletion())),
            "From 3.7 the HW does not move while the committed ISR (a subset of the maximal one) is below min "
            "ISR, so the check cannot fail. Before 3.7 the acknowledged record may have fewer copies, but any "
            "loss of it also loses a record exposed below the HW, which the reference does too (B15, P-HWM).",
        ),
    )
}
"""Expressible but not exposable in this model; not in `CATALOGUE`."""


def mutant_named(mutant_id: str) -> Mutant:
    if mutant_id not in CATALOGUE:
        raise KeyError(f"unknown mutant {mutant_id!r} (known: {', '.join(CATALOGUE)})")
    return CATALOGUE[mutant_id]
