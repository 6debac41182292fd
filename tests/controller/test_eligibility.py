"""§2.5 — ISR-member eligibility (KIP-841, KIP-903), `ineligibleReplicasForIsr`: a member of the
requested ISR is ineligible if it is not registered, in controlled shutdown, fenced, or (3.5+,
v3) its stated broker epoch is neither -1 nor the registered epoch. The leader is checked too,
and the rule applies even when the requested ISR equals the current one.

Starting point (`shrunk`): brokers 1–3 unfenced, foo = [1,2,3] led by 1, shrunk by 1 to [1,2].
"""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.alter_partition import ineligibility
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import AlterPartitionPartitionResult, IsrMember
from isrcheck.reference_impl.state import BrokerRegistration


def shrunk(make, release, **config):
    h = make(release, **config)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    assert h.alter(1, [1, 2]).error is Error.NONE
    return h


def ineligible(h, result):
    assert result == AlterPartitionPartitionResult(0, Error.INELIGIBLE_REPLICA)


def test_registered_unfenced_member_is_eligible(make, release):
    """§2.5: a registered, unfenced broker not in controlled shutdown may join the ISR."""
    h = shrunk(make, release)
    result = h.alter(1, [1, 2, 3])
    assert (result.error, result.isr) == (Error.NONE, (1, 2, 3))


def test_unregistered_member_is_ineligible(make, release):
    """§2.5 reason 1 ("not registered"): broker 3 is unregistered but still a replica, so row 7
    passes and row 11 rejects it with INELIGIBLE_REPLICA."""
    h = shrunk(make, release)
    assert h.c.unregister_broker(3) is Error.NONE
    assert 3 in h.state().replicas
    mark = h.mark()
    ineligible(h, h.alter(1, [1, 2, 3]))
    assert h.records_since(mark) == []


def test_shutting_down_member_is_ineligible(make, release):
    """§2.5 reason 2 ("shutting down"): broker 3 entered controlled shutdown (it led bar, so the
    state is persisted, §4.4) and stays unfenced — it may not rejoin foo's ISR.
    Kafka: `testAlterPartitionShouldRejectShuttingDownBrokers`."""
    h = shrunk(make, release)
    h.create("bar", [[3, 1, 2]])
    response = h.heartbeat(3, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (False, False)
    registration = h.c.broker(3)
    assert (registration.fenced, registration.in_controlled_shutdown) == (False, True)
    ineligible(h, h.alter(1, [1, 2, 3]))


def test_fenced_member_is_ineligible(make, release):
    """§2.5 reason 3 ("fenced"). Kafka: `testAlterPartitionShouldRejectFencedBrokers`."""
    h = shrunk(make, release)
    h.c.fence_stale_broker(3)
    ineligible(h, h.alter(1, [1, 2, 3]))
    h.unfence(3)
    assert h.alter(1, [1, 2, 3]).error is Error.NONE


@pytest.mark.releases(min="3.5")
def test_kip903_member_epoch_mismatch_is_ineligible(make, release):
    """§2.5 reason 4 (3.5+, KIP-903): in a v3 entry, BrokerEpoch ≠ -1 and ≠ the registered epoch
    → INELIGIBLE_REPLICA; the registered epoch or -1 is accepted."""
    h = shrunk(make, release)
    for stale in (h.epoch(3) + 1, h.epoch(3) - 1, 0):
        ineligible(h, h.alter(1, [IsrMember(1, h.epoch(1)), IsrMember(2), IsrMember(3, stale)], version=3))
    result = h.alter(1, [IsrMember(1, h.epoch(1)), IsrMember(2, -1), IsrMember(3, h.epoch(3))], version=3)
    assert (result.error, result.isr) == (Error.NONE, (1, 2, 3))


@pytest.mark.releases(min="3.5")
def test_minus_one_skips_the_epoch_comparison(make, release):
    """§2.5: BrokerEpoch -1 in a v3 entry means "skip the epoch comparison for this member"."""
    h = shrunk(make, release)
    result = h.alter(1, [IsrMember(1, -1), IsrMember(2, -1), IsrMember(3, -1)], version=3)
    assert (result.error, result.isr) == (Error.NONE, (1, 2, 3))


@pytest.mark.releases(min="3.5")
def test_leader_own_stale_epoch_is_ineligible(make, release):
    """§2.5: the leader is itself a member of the new ISR and is checked too — its own stale
    epoch in the v3 list gives INELIGIBLE_REPLICA (even though the request's top-level broker
    epoch is right)."""
    h = shrunk(make, release)
    ineligible(h, h.alter(1, [IsrMember(1, h.epoch(1) + 7), IsrMember(2)], version=3))


def test_fenced_leader_is_ineligible_even_for_a_no_op(make, release):
    """§2.5 ("the rule applies even when the requested ISR equals the current ISR") and §2.8 (a
    fenced requester can only succeed if the leader passes §2.5). In 3.x a new-incarnation
    re-registration fences the leader without touching partitions (§4.1); in 4.0+ it moves
    leadership away first (§4.7), so the request fails row 5 — either way the old leader can no
    longer alter the ISR.
    The session has expired (clock moved, §4.3 check not yet run), so no
    DUPLICATE_BROKER_REGISTRATION."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.c.now_ms += h.c.config.broker_session_timeout_ms + 1
    assert h.restart(1).error is Error.NONE
    registration = h.c.broker(1)
    assert registration.fenced
    result = h.alter(1, [1, 2, 3])
    if release.startswith("3."):
        assert (h.state().leader, h.state().isr) == (1, (1, 2, 3))
        ineligible(h, result)
    else:
        assert h.state().leader == 2
        assert result == AlterPartitionPartitionResult(0, Error.INVALID_REQUEST)


@pytest.mark.releases(max="3.9")
def test_fenced_member_in_current_isr_rejects_the_unchanged_isr(make, release):
    """§2.5: "The rule applies even when the requested ISR equals the current ISR" — broker 3 is
    fenced while still in the ISR (3.x new-incarnation re-registration leaves ISRs alone, §4.1);
    the leader re-sending the current ISR [1,2,3] is rejected with INELIGIBLE_REPLICA, v0/v1 with
    OPERATION_NOT_ATTEMPTED. Kafka: `testAlterPartitionShouldRejectShuttingDownBrokers` (same
    rule with a shutting-down member)."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.c.now_ms += h.c.config.broker_session_timeout_ms + 1
    assert h.restart(3).error is Error.NONE
    assert h.state().isr == (1, 2, 3) and h.c.broker(3).fenced
    for version in (0, 1, 2):
        expected = Error.INELIGIBLE_REPLICA if version >= 2 else Error.OPERATION_NOT_ATTEMPTED
        assert h.alter(1, [1, 2, 3], version=version) == AlterPartitionPartitionResult(0, expected)


# ------------------------------------------------------------------------- reason order (unit)

REG = BrokerRegistration(3, 40, "x", fenced=False, in_controlled_shutdown=False)


@pytest.mark.parametrize(
    ("registration", "member", "check_epochs", "reason"),
    [
        (None, IsrMember(3, 40), True, "not registered"),
        (BrokerRegistration(3, 40, "x", fenced=True, in_controlled_shutdown=True), IsrMember(3, 41), True,
         "shutting down"),
        (BrokerRegistration(3, 40, "x", fenced=True), IsrMember(3, 41), True, "fenced"),
        (REG, IsrMember(3, 41), True, "broker epoch mismatch"),
        (REG, IsrMember(3, 41), False, None),
        (REG, IsrMember(3, -1), True, None),
        (REG, IsrMember(3, 40), True, None),
    ],
    ids=["unregistered", "cs-before-fenced", "fenced-before-epoch", "epoch", "no-kip903", "minus-one", "ok"],
)
def test_first_matching_reason(registration, member, check_epochs, reason):
    """§2.5: reasons are tried in order — not registered, shutting down, fenced, broker epoch
    mismatch (only with the KIP-903 check, and never for -1)."""
    brokers = {} if registration is None else {3: registration}
    assert ineligibility(member, brokers, check_epochs) == reason
