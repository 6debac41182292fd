"""§3 — `PartitionChangeBuilder`, the single state-transition engine, driven directly:
election order (PREFERRED / ONLINE / UNCLEAN), last-ISR-member-stays, reassignment completion
by release, the 3.3–3.7 vs 3.8+ shrink-bump placement (KAFKA-16624), and the ELR steps of §4.9.

`acceptable` is given as the set of brokers the caller's predicate accepts."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.partition_change import ChangeRules, ChangeTargets, Election, build_partition_change
from isrcheck.reference_impl.release import MetadataVersion, profile_named
from isrcheck.reference_impl.state import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionState,
)

RECOVERED, RECOVERING = LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING


def rules(release, metadata_version=None, *, elr=False, min_isr=1):
    profile = profile_named(release)
    mv = profile.default_metadata_version if metadata_version is None else MetadataVersion.parse(metadata_version)
    return ChangeRules(profile, mv, elr, min_isr)


def build(current, acceptable, release="4.1", targets=None, **rule_args):
    return build_partition_change(
        "t", 0, current, targets or ChangeTargets(), lambda r: r in acceptable, rules(release, **rule_args)
    )


def record(**fields):
    return PartitionChangeRecord("t", 0, **fields)


def state(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, **fields):
    return PartitionState(replicas=tuple(replicas), isr=tuple(isr), leader=leader, **fields)


ALL = {1, 2, 3, 4}

# ------------------------------------------------------------------------------ no change


def test_nothing_to_change_gives_no_record(release):
    """§3.1 step 11: a build that changes nothing yields no record."""
    assert build(state(), ALL, release) is None
    assert build(state(), ALL, release, ChangeTargets(isr=(1, 2, 3))) is None


def test_permutation_sets_isr_without_leader_field(release):
    """§2.6 / §3.1 step 6: the ordered comparison makes a permutation a change; it is not a
    shrink, so no leader field in any release."""
    assert build(state(), ALL, release, ChangeTargets(isr=(3, 2, 1))) == record(isr=(3, 2, 1))


# ------------------------------------------------------------------------------ ONLINE


def test_online_keeps_a_valid_current_leader(release, shrink_bump):
    """§3.2 ONLINE (a): the current leader, still in the target ISR and acceptable, is kept even
    though it is not replicas[0]; only the ISR changes (plus the 3.3/3.5 shrink bump)."""
    current = state(leader=2)
    expected = record(leader=2 if shrink_bump(release) else NO_LEADER_CHANGE, isr=(2, 3))
    assert build(current, ALL, release, ChangeTargets(isr=(2, 3))) == expected


def test_online_picks_in_assignment_order_not_isr_order(release):
    """§3.2 ONLINE (b) / §4.4: the new leader is the first replica *in assignment order* that is
    in the target ISR and acceptable — ISR [3,2] gives 2 for replicas [1,2,3]."""
    current = state(isr=(3, 2, 1))
    assert build(current, {2, 3}, release, ChangeTargets(isr=(3, 2))) == record(leader=2, isr=(3, 2))


def test_online_skips_unacceptable_isr_members(release):
    """§3.2 ONLINE (b): an ISR member that is not acceptable is skipped."""
    assert build(state(), {3}, release, ChangeTargets(isr=(2, 3))) == record(leader=3, isr=(2, 3))


def test_online_without_candidate_goes_leaderless(release):
    """§3.2 ONLINE (e): no valid candidate → leader -1; a non-empty target ISR is still set."""
    assert build(state(), set(), release, ChangeTargets(isr=(2, 3))) == record(leader=NO_LEADER, isr=(2, 3))


def test_online_never_elects_outside_the_isr(release):
    """§3.2: ONLINE never does an unclean election — an acceptable non-ISR replica is ignored."""
    current = state(isr=(1,), leader=NO_LEADER)
    assert build(current, {2, 3}, release) is None


# ------------------------------------------------------------------------------ PREFERRED


def test_preferred_elects_replica_zero(release):
    """§3.2 PREFERRED (a): replicas[0] in the ISR and acceptable wins over a valid current leader."""
    targets = ChangeTargets(election=Election.PREFERRED)
    assert build(state(leader=2), ALL, release, targets) == record(leader=1)


def test_preferred_keeps_valid_current_leader_when_replica_zero_invalid(release):
    """§3.2 PREFERRED (b): replicas[0] not in the ISR → the valid current leader stays → no record."""
    targets = ChangeTargets(election=Election.PREFERRED)
    assert build(state(isr=(2, 3), leader=3), ALL, release, targets) is None


@pytest.mark.parametrize(("isr", "winner"), [((1, 3), 3), ((3, 1, 2), 2)])
def test_preferred_falls_back_to_later_replicas(release, isr, winner):
    """§3.2 PREFERRED (c): replicas[0] unacceptable, current leader -1 → the first of
    replicas[1:] (assignment order) in the ISR and acceptable — 3 when 2 is not in the ISR, else
    2 — a clean election, ISR and LRS untouched (so a leaderless partition can get a
    non-preferred leader from PREFERRED)."""
    current = state(isr=isr, leader=NO_LEADER)
    targets = ChangeTargets(election=Election.PREFERRED)
    assert build(current, {2, 3}, release, targets) == record(leader=winner)


def test_preferred_never_elects_uncleanly(release):
    """§3.2 PREFERRED (e): no ISR candidate → -1; PREFERRED never does an unclean election."""
    current = state(isr=(1,), leader=NO_LEADER)
    assert build(current, {2, 3}, release, ChangeTargets(election=Election.PREFERRED)) is None


# ------------------------------------------------------------------------------ UNCLEAN


def test_unclean_elects_first_acceptable_replica(release):
    """§3.2 UNCLEAN (d) / §4.8.5: first acceptable replica in assignment order, ISR ignored →
    ISR := [it], LRS := RECOVERING (the only place the controller sets RECOVERING)."""
    current = state(isr=(1,), leader=NO_LEADER)
    targets = ChangeTargets(election=Election.UNCLEAN)
    assert build(current, {3, 2}, release, targets) == record(leader=2, isr=(2,), leader_recovery_state=RECOVERING)


def test_unclean_prefers_a_clean_candidate(release):
    """§3.2 UNCLEAN: rules (a)/(b) come first — with an acceptable ISR member the election is
    clean (no ISR rewrite, no LRS)."""
    current = state(isr=(1, 3), leader=NO_LEADER)
    targets = ChangeTargets(election=Election.UNCLEAN)
    assert build(current, {2, 3}, release, targets) == record(leader=3)


def test_unclean_on_recovering_partition_does_not_rewrite_lrs(release):
    """§3.2 tryElection: RECOVERING is set only "if the current LRS is not RECOVERING"."""
    current = state(isr=(1,), leader=NO_LEADER, leader_recovery_state=RECOVERING)
    targets = ChangeTargets(election=Election.UNCLEAN)
    assert build(current, {3}, release, targets) == record(leader=3, isr=(3,))


def test_unclean_without_any_acceptable_replica(release):
    """§3.2 UNCLEAN (e): nobody acceptable → -1 → no change for a leaderless partition."""
    current = state(isr=(1,), leader=NO_LEADER)
    assert build(current, set(), release, ChangeTargets(election=Election.UNCLEAN)) is None


def test_clean_leader_change_keeps_recovering(release):
    """§3.2: LRS is never reset by the controller — a clean leader change keeps RECOVERING.
    Kafka: `PartitionChangeBuilderTest.testChangeInLeadershipDoesNotChangeRecoveryState`."""
    current = state(isr=(1, 2), leader=1, leader_recovery_state=RECOVERING)
    assert build(current, {2}, release, ChangeTargets(isr=(2,))) == record(leader=2, isr=(2,))
    leaderless = state(isr=(1, 2), leader=NO_LEADER, leader_recovery_state=RECOVERING)
    assert build(leaderless, {2}, release) == record(leader=2)


# ------------------------------------------------------------------------------ last ISR member


@pytest.mark.parametrize("election", [Election.ONLINE, Election.PREFERRED])
def test_last_isr_member_stays_with_elr_off(release, election):
    """§3.1 step 6 / §4.4: with ELR off the ISR can never become empty — removing the only member
    (the leader) keeps ISR [1] and sets leader -1 (both epochs +1 via the leader field)."""
    current = state(isr=(1,))
    targets = ChangeTargets(isr=(), election=election)
    assert build(current, set(), release, targets) == record(leader=NO_LEADER)


@pytest.mark.releases("4.0", "4.1")
def test_isr_may_become_empty_with_elr_on(release):
    """§3.1 step 6 / §4.9: with ELR on the ISR may become empty; the removed leader goes to ELR
    (min ISR 1 > |[]|) and lastKnownElr := [leader before the change]."""
    current = state(isr=(1,))
    expected = record(leader=NO_LEADER, isr=(), elr=(1,), last_known_elr=(1,))
    assert build(current, set(), release, ChangeTargets(isr=()), elr=True) == expected


# ------------------------------------------------------------------------------ shrink bump placement


@pytest.mark.parametrize(
    ("release", "metadata_version", "useless_record"),
    [
        ("3.3", None, True),
        ("3.5", None, True),
        ("3.7", "3.5-IV2", True),
        ("3.7", None, False),
        ("3.8", "3.5-IV2", False),
        ("3.9", "3.5-IV2", False),
        ("4.0", "3.5-IV2", False),
        ("4.1", "3.5-IV2", False),
    ],
)
def test_kafka_16624_useless_leader_epoch_record(release, metadata_version, useless_record):
    """§3.1 version differences: in 3.3–3.7 (with the shrink bump active: 3.3/3.5 always, 3.7 for
    MV < 3.6-IV0) the bump compares the *target* ISR before the ISR step, so removing the sole
    ISR member of an already leaderless partition yields a record with only leader -1 → -1
    (leaderEpoch+1, partitionEpoch+1). KAFKA-16624 (3.8.0) compares the record's ISR after
    step 6 → no record."""
    current = state(replicas=(1, 2), isr=(1,), leader=NO_LEADER, leader_epoch=3, partition_epoch=5)
    result = build(current, {2}, release, ChangeTargets(isr=()), metadata_version=metadata_version)
    assert result == (record(leader=NO_LEADER) if useless_record else None)


@pytest.mark.parametrize(
    ("release", "metadata_version", "bumps"),
    [("3.3", None, True), ("3.5", None, True), ("3.7", None, False), ("3.7", "3.5-IV2", True),
     ("3.8", None, False), ("3.8", "3.5-IV2", True), ("4.1", "3.5-IV2", True), ("4.1", None, False)],
)
def test_shrink_bump_writes_current_leader(release, metadata_version, bumps):
    """§3.1 step 7 (3.8+) / the 3.3–3.7 bump: a shrink with the leader kept writes the *current*
    leader into the record's leader field when the bump applies (§2.6)."""
    result = build(state(), ALL, release, ChangeTargets(isr=(1, 2)), metadata_version=metadata_version)
    assert result == record(leader=1 if bumps else NO_LEADER_CHANGE, isr=(1, 2))


@pytest.mark.parametrize("release", ["3.3", "3.5"])
def test_3_3_3_5_bump_ignores_expansion(release):
    """§3.1: the 3.3/3.5 bump fires on shrinks only — an expansion never names the leader."""
    current = state(isr=(1, 2))
    assert build(current, ALL, release, ChangeTargets(isr=(1, 2, 3))) == record(isr=(1, 2, 3))


# ------------------------------------------------------------------------------ reassignment


def in_flight():
    """replicas [1,2,4,3] (target [1,2,4], removing 3, adding 4), ISR [1,3], leader 1."""
    return state(replicas=(1, 2, 4, 3), isr=(1, 3), removing=(3,), adding=(4,))


@pytest.mark.parametrize(
    ("release", "completes"),
    [("3.3", True), ("3.5", True), ("3.7", True), ("3.8", False), ("3.9", False), ("4.0", False), ("4.1", False)],
)
def test_reassignment_completion_rule_by_release(release, completes):
    """§3.4: ISR' = [1,4] (target ISR minus removing), replicas' = [1,2,4]. 3.3–3.7 complete when
    every *adding* replica is in ISR'; 3.8+ (KAFKA-15665) when every replica of replicas' is —
    2 is missing. On completion: ISR := ISR', replicas := replicas', removing/adding cleared, and
    (a replica was removed) the leader field is set to the kept leader (§3.1 step 4)."""
    result = build(in_flight(), ALL, release, ChangeTargets(isr=(1, 3, 4)))
    if completes:
        assert result == record(leader=1, isr=(1, 4), replicas=(1, 2, 4), removing=(), adding=())
    else:
        assert result == record(isr=(1, 3, 4))


def test_reassignment_completion_when_all_targets_in_isr(release):
    """§3.4: with every target replica in ISR' all releases complete."""
    result = build(in_flight(), ALL, release, ChangeTargets(isr=(1, 3, 4, 2)))
    assert result == record(leader=1, isr=(1, 4, 2), replicas=(1, 2, 4), removing=(), adding=())


def test_reassignment_gives_up_when_isr_prime_empty(release):
    """§3.4: give up if ISR' (target ISR minus removing) is empty — nothing completes."""
    current = state(replicas=(4, 3), isr=(3,), leader=3, removing=(3,), adding=(4,))
    assert build(current, ALL, release) is None


def test_reassignment_completion_elects_in_new_replica_order(release):
    """§2.6 / §3.4: if the leader was removed, the new leader is the first replica of the *new*
    replica order that is in the new ISR and acceptable."""
    current = state(replicas=(4, 3, 2, 1), isr=(1, 2, 3, 4), removing=(1,), adding=(4,))
    result = build(current, ALL, release)
    assert result == record(leader=4, isr=(2, 3, 4), replicas=(4, 3, 2), removing=(), adding=())


def test_reassignment_start_does_not_bump_leader_epoch(release):
    """§3.4 start / §3.1 step 4: replicas := target + removed keeps every current replica, so no
    leader field; a target that only reorders the replicas is a plain replicas change."""
    current = state()
    start = ChangeTargets(replicas=(2, 3, 4, 1), removing=(1,), adding=(4,))
    assert build(current, ALL, release, start) == record(replicas=(2, 3, 4, 1), removing=(1,), adding=(4,))
    reorder = ChangeTargets(replicas=(3, 2, 1), removing=(), adding=())
    assert build(current, ALL, release, reorder) == record(replicas=(3, 2, 1))


# ------------------------------------------------------------------------------ ELR (§4.9)

ELR_RELEASES = pytest.mark.releases("4.0", "4.1")


@ELR_RELEASES
def test_elr_populated_on_shrink_below_min_isr(release):
    """§4.9 maybePopulateTargetElr: |target ISR| < min ISR → ELR := (ELR ∪ ISR) − target ISR."""
    result = build(state(), ALL, release, ChangeTargets(isr=(1,)), elr=True, min_isr=2)
    assert result == record(isr=(1,), elr=(2, 3))


@ELR_RELEASES
def test_elr_excludes_unclean_shutdown_replicas(release):
    """§4.9: ... − uncleanShutdownReplicas."""
    targets = ChangeTargets(isr=(1,), unclean_shutdown_replicas=(3,))
    assert build(state(), ALL, release, targets, elr=True, min_isr=2) == record(isr=(1,), elr=(2,))


@ELR_RELEASES
def test_elr_cleared_when_isr_reaches_min_isr(release):
    """§4.9: |target ISR| ≥ min ISR → target ELR := [] (and lastKnownElr target [])."""
    current = state(isr=(1,), elr=(2, 3))
    result = build(current, ALL, release, ChangeTargets(isr=(1, 2)), elr=True, min_isr=2)
    assert result == record(isr=(1, 2), elr=())


@ELR_RELEASES
def test_elr_member_elected_when_isr_empty(release):
    """§3.2 validNew / §4.8.3: ISR empty → first replica in assignment order that is in ELR and
    acceptable (3; 2 is not acceptable) → ISR := [3], removed from ELR, clean (no LRS); the
    partition gets a real leader, so lastKnownElr is cleared."""
    current = state(isr=(), leader=NO_LEADER, elr=(2, 3), last_known_elr=(1,))
    result = build(current, {3}, release, elr=True, min_isr=2)
    assert result == record(leader=3, isr=(3,), elr=(2,), last_known_elr=())


@ELR_RELEASES
def test_last_known_leader_elected_when_isr_and_elr_empty(release):
    """§3.2 (c) / §4.8.4: ISR and ELR empty, lastKnownElr = [1], 1 acceptable → 1, flagged
    unclean: ISR := [1], LRS := RECOVERING, lastKnownElr cleared."""
    current = state(isr=(), leader=NO_LEADER, last_known_elr=(1,))
    result = build(current, {1}, release, elr=True, min_isr=2)
    assert result == record(leader=1, isr=(1,), last_known_elr=(), leader_recovery_state=RECOVERING)


@pytest.mark.parametrize(("release", "elects_fenced"), [("4.0", True), ("4.1", False)])
def test_last_known_leader_acceptability_kafka_19522(release, elects_fenced):
    """§3.2 (c) / §7: the 4.0 code elects the last known leader even when it is not acceptable
    (e.g. still fenced); KAFKA-19522 (4.1.0) requires it to be acceptable."""
    current = state(isr=(), leader=NO_LEADER, last_known_elr=(1,))
    result = build(current, {2}, release, elr=True, min_isr=2)
    if elects_fenced:
        assert result == record(leader=1, isr=(1,), last_known_elr=(), leader_recovery_state=RECOVERING)
    else:
        assert result is None


@ELR_RELEASES
def test_unclean_election_clears_elr(release):
    """§4.9 / §4.8.5: an unclean election (record.isr set by it) clears ELR and lastKnownElr."""
    current = state(isr=(), leader=NO_LEADER, elr=(2,), last_known_elr=(1,))
    targets = ChangeTargets(election=Election.UNCLEAN)
    result = build(current, {3}, release, targets, elr=True, min_isr=2)
    assert result == record(leader=3, isr=(3,), elr=(), last_known_elr=(), leader_recovery_state=RECOVERING)


@ELR_RELEASES
def test_last_known_elr_records_the_leader_before_the_change(release):
    """§4.9: when the record sets the ISR to empty, lastKnownElr := [current leader] (the leader
    before this change)."""
    current = state(isr=(2,), leader=2)
    result = build(current, set(), release, ChangeTargets(isr=()), elr=True, min_isr=2)
    assert result == record(leader=NO_LEADER, isr=(), elr=(2,), last_known_elr=(2,))


@pytest.mark.releases(min="3.7")
def test_stored_elr_cleared_when_elr_off(release):
    """§4.9: "ELR off + non-empty stored ELR → cleared"; the ELR code exists from 3.7 (dormant in
    3.x, §7). lastKnownElr goes with it on 3.7.1 only: from 3.8 `maybeUpdateRecordElr` returns
    before writing it (`useLastKnownLeaderInBalancedRecovery`) and `maybeUpdateLastKnownLeader`
    does nothing with ELR off."""
    current = state(elr=(2,), last_known_elr=(3,))
    expected = record(elr=(), last_known_elr=()) if release == "3.7" else record(elr=())
    assert build(current, ALL, release) == expected


@ELR_RELEASES
def test_preferred_uses_elr_and_last_known_leader(release):
    """§3.2 PREFERRED: validNew includes ELR members when the ISR is empty ((a): replicas[0] from
    ELR → ISR [it], clean), and rule (d) is the last-known-leader rule (flagged unclean →
    RECOVERING)."""
    targets = ChangeTargets(election=Election.PREFERRED)
    from_elr = state(isr=(), leader=NO_LEADER, elr=(1, 2))
    assert build(from_elr, {1, 2}, release, targets, elr=True, min_isr=2) == record(leader=1, isr=(1,), elr=(2,))
    last_known = state(isr=(), leader=NO_LEADER, last_known_elr=(2,))
    result = build(last_known, {2}, release, targets, elr=True, min_isr=2)
    assert result == record(leader=2, isr=(2,), last_known_elr=(), leader_recovery_state=RECOVERING)


@ELR_RELEASES
def test_broker_zero_is_a_real_leader(release):
    """§4.9 maybeUpdateLastKnownLeader: "record.leader ≥ 0" — broker id 0 is a real leader, so
    electing it from ELR clears lastKnownElr."""
    current = state(replicas=(0, 1, 2), isr=(), leader=NO_LEADER, elr=(0,), last_known_elr=(1,))
    result = build(current, {0}, release, elr=True, min_isr=2)
    assert result == record(leader=0, isr=(0,), elr=(), last_known_elr=())
