"""§4.1–§4.7 — broker lifecycle: registration (epochs as log offsets, same vs new incarnation,
DUPLICATE_BROKER_REGISTRATION), the heartbeat state machine (every row of the §4.2 table),
session-timeout fencing (§4.3), effects on partitions of fencing / unfencing / controlled
shutdown / unregistration (§4.4), fail-over (§4.5), controlled-shutdown completion (§4.6) and
the 4.0+ new-incarnation shutdown handler (§4.7).

Time: `advance_clock` runs the session check (§4.3); moving `now_ms` alone models the window in
which a session has expired but the check has not run yet (§4.1 note, §4.3 scheduling)."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import AlterPartitionPartitionResult
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.release import profile_named
from isrcheck.reference_impl.state import (
    BrokerRegistrationChangeRecord,
    LeaderRecoveryState,
    PartitionChangeRecord,
    RegisterBrokerRecord,
    UnregisterBrokerRecord,
)

TIMEOUT = 9000
"""§6: broker.session.timeout.ms default."""


def world(make, release, **config):
    """Brokers 1–3 unfenced, broker 4 registered but fenced; foo = [1,2,3] led by 1."""
    h = make(release, **config)
    h.start(1, 2, 3)
    assert h.register(4).error is Error.NONE
    h.create("foo", [[1, 2, 3]])
    return h


@pytest.mark.parametrize("caught_up_first", [False, True])
def test_unfencing_heartbeat_offset_is_forgotten(make, release, caught_up_first):
    """From 3.7 `BrokerHeartbeatManager.register` (called by replaying the unfencing
    BrokerRegistrationChangeRecord) resets the broker's reported offset to -1: until broker 2 and
    3 heartbeat again, broker 1's controlled shutdown cannot complete (§4.2 row 10; seen on real
    3.7.1/3.9.0, not 3.3.2/3.5.2)."""
    h = world(make, release)
    if caught_up_first:
        for other in (2, 3):
            h.heartbeat(other)
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    forgets = profile_named(release).replay_forgets_offset
    assert h.heartbeat(1, shutdown=True).should_shut_down is (caught_up_first or not forgets)


def register_offset(h, broker):
    """Offset of the broker's latest RegisterBrokerRecord in the log (§1.2)."""
    return max(o for o, r in h.c.log if isinstance(r, RegisterBrokerRecord) and r.registration.broker == broker)


def last_offset(h):
    return h.c.log[-1][0]


def expire_without_check(h):
    """Let every session expire without running the §4.3 check (the stale-broker window)."""
    h.c.now_ms += TIMEOUT + 1


def kinds(records):
    out = []
    for r in records:
        if isinstance(r, BrokerRegistrationChangeRecord):
            out.append("fence" if r.fenced else "unfence" if r.fenced is False else "in-cs")
        else:
            out.append(type(r).__name__)
    return out


def is_3x(release):
    return release.startswith("3.")


# ============================================================================ §4.1 registration


def test_first_registration(make, release):
    """§4.1: a first registration writes a fenced, not-shutting-down registration whose epoch is
    the log offset of its RegisterBrokerRecord (the next write offset), returned in the reply."""
    h = make(release)
    response = h.register(1)
    assert response.error is Error.NONE
    assert response.broker_epoch == register_offset(h, 1)
    registration = h.c.broker(1)
    assert (registration.epoch, registration.fenced, registration.in_controlled_shutdown) == (
        response.broker_epoch, True, False)


def test_epochs_are_increasing_log_offsets(make, release):
    """§4.1: broker epochs are metadata-log offsets, not counters — a record written between two
    registrations (broker 1's UNFENCE) is skipped over."""
    h = make(release)
    e1 = h.register(1).broker_epoch
    e2 = h.register(2).broker_epoch
    h.unfence(1)
    e3 = h.register(3).broker_epoch
    assert e1 < e2 < e3
    assert (e2 - e1, e3 - e2) == (1, 2)


@pytest.mark.parametrize(
    ("release", "keeps_epoch", "keeps_state"),
    [("3.3", False, False), ("3.5", False, False), ("3.7", False, True), ("3.8", False, True),
     ("3.9", True, True), ("4.0", True, True), ("4.1", True, True)],
)
def test_same_incarnation_reregistration_by_release(make, release, keeps_epoch, keeps_state):
    """§4.1 table, same incarnation (a retry): 3.3–3.7.0 new epoch, fenced=true, inCS=false
    (record defaults); 3.7.1/3.8 (KAFKA-16757) new epoch, fenced/inCS copied; 3.9+
    (KAFKA-16952) epoch kept, state copied ("amend"). Never DUPLICATE_BROKER_REGISTRATION.
    The 3.7 profile models 3.7.2 (§7: 3.7.1 changed it)."""
    h = world(make, release)
    assert h.heartbeat(1, shutdown=True).is_fenced is False  # leads foo → controlled shutdown
    before = h.c.broker(1)
    assert (before.fenced, before.in_controlled_shutdown) == (False, True)
    mark = h.mark()
    response = h.register(1)
    assert response.error is Error.NONE
    after = h.c.broker(1)
    new_offset = register_offset(h, 1)
    assert new_offset > before.epoch
    assert response.broker_epoch == after.epoch == (before.epoch if keeps_epoch else new_offset)
    assert (after.fenced, after.in_controlled_shutdown) == ((False, True) if keeps_state else (True, False))
    assert kinds(h.records_since(mark)) == ["RegisterBrokerRecord"]


@pytest.mark.parametrize(("release", "stale"), [("3.3", True), ("3.8", True), ("3.9", False), ("4.1", False)])
def test_same_incarnation_old_epoch(make, release, stale):
    """§4.1 / §2.2: where a retry gets a new epoch (3.3–3.8) the old one is stale for
    AlterPartition and heartbeats; where the epoch is kept (3.9+) it stays valid."""
    h = world(make, release)
    old = h.epoch(1)
    h.register(1)
    expected = Error.STALE_BROKER_EPOCH if stale else Error.NONE
    assert h.heartbeat(1, epoch=old).error is expected
    response = h.alter_request(1, [h.topic_entry("foo", [h.item("foo", [1, 2, 3])], 2)], broker_epoch=old)
    assert response.error is expected


def test_new_incarnation_gets_new_epoch_fenced(make, release):
    """§4.1: a new incarnation (after the old session is gone) gets a new epoch, fenced=true,
    inCS=false."""
    h = world(make, release)
    h.heartbeat(1, shutdown=True)
    old = h.epoch(1)
    expire_without_check(h)
    response = h.restart(1)
    assert response.error is Error.NONE
    after = h.c.broker(1)
    assert response.broker_epoch == after.epoch > old
    assert (after.fenced, after.in_controlled_shutdown) == (True, False)


def test_reregistered_broker_must_catch_up_again(make, release):
    """§4.1 / §4.5: every RegisterBrokerRecord replay updates the remembered register-record
    offset, so a re-registered broker is unfenced only by an offset ≥ its *new* record's
    offset; IsCaughtUp says the same."""
    h = world(make, release)
    h.c.fence_stale_broker(2)
    first = register_offset(h, 2)
    assert h.restart(2).error is Error.NONE
    second = register_offset(h, 2)
    assert second > first
    response = h.heartbeat(2, offset=second - 1)
    assert (response.is_caught_up, response.is_fenced) == (False, True)
    response = h.heartbeat(2, offset=second)
    assert (response.is_caught_up, response.is_fenced) == (True, False)


# ------------------------------------------------------------------ DUPLICATE_BROKER_REGISTRATION


def test_duplicate_registration_while_old_session_alive(make, release):
    """§4.1 check 3: a different incarnation while the old one has a valid session →
    DUPLICATE_BROKER_REGISTRATION, nothing written, the registration untouched.
    Kafka: `testDuplicateBrokerRegistrationWithActiveOldBroker`."""
    h = world(make, release)
    h.c.advance_clock(3000)
    h.heartbeat(1)
    before = h.c.broker(1)
    mark = h.mark()
    assert h.restart(1).error is Error.DUPLICATE_BROKER_REGISTRATION
    assert h.records_since(mark) == []
    assert h.c.broker(1) == before


def test_same_incarnation_is_never_a_duplicate(make, release):
    """§4.1 check 3 applies to a *different* IncarnationId only: a retry with the same one passes
    even while the session is alive."""
    h = world(make, release)
    assert h.register(1).error is Error.NONE


def test_new_incarnation_accepted_after_session_expiry(make, release):
    """§4.1 / §4.3: once the old session expired (and the broker was fenced for it) a new
    incarnation registers. Kafka: `testDuplicateBrokerRegistrationWithInactiveBroker`."""
    h = world(make, release)
    h.c.advance_clock(5000)
    for b in (2, 3):
        h.heartbeat(b)
    h.heartbeat(4, fence=True)
    assert h.c.advance_clock(TIMEOUT - 5000 + 1) == [1]
    assert h.restart(1).error is Error.NONE


@pytest.mark.parametrize("how", ["want-fence", "controlled-shutdown-done"])
def test_fenced_old_incarnation(make, release, how):
    """§4.1 check 3: 3.x — a fenced old incarnation never blocks; 4.0+ (KAFKA-17793 tracker) —
    contact times are recorded on every heartbeat, including from fenced brokers and brokers
    whose controlled shutdown has completed, so the new incarnation is rejected within the
    session timeout (§9.2: KAFKA-19047's relaxation was reverted)."""
    h = world(make, release)
    if how == "want-fence":
        assert h.heartbeat(1, fence=True).is_fenced
    else:
        for other in (2, 3):  # their unfencing heartbeat's offset was forgotten (§4.2 row 10)
            h.heartbeat(other)
        assert h.heartbeat(1, shutdown=True).should_shut_down is False
        assert h.heartbeat(1, shutdown=True).should_shut_down is True
    assert h.c.broker(1).fenced
    expected = Error.NONE if is_3x(release) else Error.DUPLICATE_BROKER_REGISTRATION
    assert h.restart(1).error is expected


@pytest.mark.releases("4.0", "4.1")
def test_4x_duplicate_window_ends_strictly_after_timeout(make, release):
    """§4.1 / §4.3 (4.0+): the old incarnation (fenced, heartbeating) blocks until its contact
    expires — lastContact + timeout < now (strict): still DUPLICATE at exactly +timeout, accepted
    one millisecond later."""
    h = world(make, release)
    h.heartbeat(1, fence=True)
    h.c.advance_clock(5000)
    for b in (2, 3):
        h.heartbeat(b)
    h.c.advance_clock(TIMEOUT - 5000)
    assert h.restart(1).error is Error.DUPLICATE_BROKER_REGISTRATION
    h.c.advance_clock(1)
    assert h.restart(1).error is Error.NONE


# ============================================================================ §4.2 heartbeats


def test_heartbeat_unknown_broker_or_wrong_epoch_is_stale(make, release):
    """§4.2 steps 2–3: no registration → STALE_BROKER_EPOCH; epoch mismatch → STALE_BROKER_EPOCH."""
    h = world(make, release)
    assert h.heartbeat(9, epoch=0).error is Error.STALE_BROKER_EPOCH
    assert h.heartbeat(1, epoch=h.epoch(1) + 1).error is Error.STALE_BROKER_EPOCH
    assert h.heartbeat(1, epoch=-1).error is Error.STALE_BROKER_EPOCH


def test_fenced_want_shutdown_is_shutdown_now(make, release):
    """§4.2 FENCED + WantShutDown → SHUTDOWN_NOW (first row: wins over a caught-up unfence
    request): IsFenced, ShouldShutDown; stays fenced."""
    h = world(make, release)
    response = h.heartbeat(4, shutdown=True)
    assert (response.error, response.is_fenced, response.should_shut_down) == (Error.NONE, True, True)
    assert h.c.broker(4).fenced


def test_fenced_caught_up_heartbeat_unfences(make, release):
    """§4.2 FENCED + !WantFence + offset ≥ register-record offset → UNFENCED: the boundary offset
    itself suffices; an UNFENCE record is written; IsCaughtUp, not fenced."""
    h = world(make, release)
    offset = register_offset(h, 4)
    mark = h.mark()
    response = h.heartbeat(4, offset=offset)
    assert (response.is_caught_up, response.is_fenced, response.should_shut_down) == (True, False, False)
    assert kinds(h.records_since(mark)) == ["unfence"]
    assert h.c.broker(4).fenced is False


def test_fenced_behind_stays_fenced(make, release):
    """§4.2 FENCED otherwise → FENCED: offset below the register-record offset (IsCaughtUp false),
    or WantFence with a caught-up offset; nothing written."""
    h = world(make, release)
    offset = register_offset(h, 4)
    mark = h.mark()
    response = h.heartbeat(4, offset=offset - 1)
    assert (response.is_caught_up, response.is_fenced, response.should_shut_down) == (False, True, False)
    response = h.heartbeat(4, fence=True)
    assert (response.is_caught_up, response.is_fenced, response.should_shut_down) == (True, True, False)
    assert h.records_since(mark) == []


def test_unfenced_want_fence_and_shutdown_is_shutdown_now(make, release):
    """§4.2 UNFENCED + WantFence + WantShutDown → SHUTDOWN_NOW (before the "leads a partition"
    rows): the leader is fenced directly (handleBrokerFenced: leadership moves, then FENCE), no
    InControlledShutdown record."""
    h = world(make, release)
    mark = h.mark()
    response = h.heartbeat(1, fence=True, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (True, True)
    assert kinds(h.records_since(mark)) == ["PartitionChangeRecord", "fence"]
    assert (h.state().leader, h.state().isr) == (2, (2, 3))
    assert (h.c.broker(1).fenced, h.c.broker(1).in_controlled_shutdown) == (True, False)


def test_unfenced_want_fence_is_fenced(make, release, shrink_bump):
    """§4.2 UNFENCED + WantFence → FENCED: a non-leader leaves the ISR (order kept, leader
    unchanged, partitionEpoch+1, leaderEpoch+1 only where a shrink bumps, §4.4), then FENCE."""
    h = world(make, release)
    mark = h.mark()
    response = h.heartbeat(2, fence=True)
    assert (response.is_fenced, response.should_shut_down) == (True, False)
    assert kinds(h.records_since(mark)) == ["PartitionChangeRecord", "fence"]
    assert (h.state().leader, h.state().isr) == (1, (1, 3))
    assert h.epochs() == (1 if shrink_bump(release) else 0, 1)


def test_unfenced_want_shutdown_leading_enters_controlled_shutdown(make, release):
    """§4.2 UNFENCED + WantShutDown + leads ≥ 1 partition → CONTROLLED_SHUTDOWN; §4.4: the state
    is persisted first (InControlledShutdown record), then fencing-style partition updates; the
    broker stays unfenced; reply not fenced, not shutting down."""
    h = world(make, release)
    mark = h.mark()
    response = h.heartbeat(1, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (False, False)
    assert kinds(h.records_since(mark)) == ["in-cs", "PartitionChangeRecord"]
    assert (h.state().leader, h.state().isr, h.epochs()) == (2, (2, 3), (1, 1))
    assert (h.c.broker(1).fenced, h.c.broker(1).in_controlled_shutdown) == (False, True)
    assert h.c.is_active(1) is False


def test_unfenced_want_shutdown_leading_nothing_is_shutdown_now(make, release):
    """§4.2 UNFENCED + WantShutDown + leads nothing → SHUTDOWN_NOW: fenced directly (removed from
    ISRs), no InControlledShutdown record; IsFenced and ShouldShutDown."""
    h = world(make, release)
    mark = h.mark()
    response = h.heartbeat(3, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (True, True)
    assert kinds(h.records_since(mark)) == ["PartitionChangeRecord", "fence"]
    assert h.state().isr == (1, 2)
    assert (h.c.broker(3).fenced, h.c.broker(3).in_controlled_shutdown) == (True, False)


def test_unfenced_plain_heartbeat_stays_unfenced(make, release):
    """§4.2 UNFENCED otherwise → UNFENCED; nothing written. IsCaughtUp still compares the offset
    with the register-record offset (step 8), also for an unfenced broker."""
    h = world(make, release)
    mark = h.mark()
    response = h.heartbeat(2, offset=0)
    assert (response.error, response.is_fenced, response.should_shut_down) == (Error.NONE, False, False)
    assert response.is_caught_up is False
    assert h.heartbeat(2).is_caught_up is True
    assert h.records_since(mark) == []


def test_reregistration_resets_controlled_shutdown_soft_state(make, release):
    """§4.1: every RegisterBrokerRecord replay resets the heartbeat soft state (controlled-shutdown
    offset cleared). Broker 1 in controlled shutdown waits for lagging peers; after a
    same-incarnation re-registration it no longer is in CONTROLLED_SHUTDOWN in the soft state, so
    its next WantShutDown heartbeat is answered SHUTDOWN_NOW at once (3.7+: state copied, so
    UNFENCED leading nothing; 3.3/3.5: fenced, so FENCED + WantShutDown)."""
    h, cs_offset = in_controlled_shutdown(make, release)
    h.heartbeat(2, offset=cs_offset - 1)
    h.heartbeat(3, offset=cs_offset - 1)
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    assert h.register(1).error is Error.NONE
    response = h.heartbeat(1, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (True, True)


@pytest.mark.releases(max="3.9")
def test_controlled_shutdown_still_leading_stays(make, release):
    """§4.2 CONTROLLED_SHUTDOWN + still leads ≥ 1 partition → CONTROLLED_SHUTDOWN. Reachable on a
    3.x cluster with MV < 3.3-IV3 (§4.4): the shutting-down state is not persisted, so broker 1
    stays eligible and acceptable — leader 2 adds it back and a preferred election makes it
    leader again while its soft state is still CONTROLLED_SHUTDOWN."""
    h = world(make, release, metadata_version="3.3-IV2")
    mark = h.mark()
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    assert kinds(h.records_since(mark)) == ["PartitionChangeRecord"]  # no InControlledShutdown record
    assert h.c.broker(1).in_controlled_shutdown is False
    assert h.alter(2, [2, 3, 1]).error is Error.NONE
    assert h.c.elect_leaders(Election.PREFERRED, [("foo", 0)])[0].error is Error.NONE
    assert h.state().leader == 1
    mark = h.mark()
    response = h.heartbeat(1)
    assert (response.is_fenced, response.should_shut_down) == (False, False)
    assert h.records_since(mark) == []


def in_controlled_shutdown(make, release):
    """world + broker 1 in controlled shutdown; returns (harness, controlled-shutdown offset)."""
    h = world(make, release)
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    return h, last_offset(h)


def test_controlled_shutdown_completes_when_others_caught_up(make, release):
    """§4.2 CONTROLLED_SHUTDOWN + leads nothing + offset ≤ lowest active broker offset →
    SHUTDOWN_NOW (flags ignored: a heartbeat without WantShutDown completes it too); §4.6: it is
    fenced (FENCE record, no partition change since it is in no ISR) and keeps
    inControlledShutdown=true."""
    h, _ = in_controlled_shutdown(make, release)
    for other in (2, 3):  # "caught up" needs a heartbeat after their unfencing one (§4.2 row 10)
        h.heartbeat(other)
    mark = h.mark()
    response = h.heartbeat(1)
    assert (response.is_fenced, response.should_shut_down) == (True, True)
    assert kinds(h.records_since(mark)) == ["fence"]
    assert (h.c.broker(1).fenced, h.c.broker(1).in_controlled_shutdown) == (True, True)


def test_controlled_shutdown_waits_for_lowest_active_offset(make, release):
    """§4.2 CONTROLLED_SHUTDOWN otherwise → stays: the controlled-shutdown offset (last offset of
    the batch that entered it, set only the first time, step 9) must be ≤ the lowest offset
    reported by *active* brokers (2 and 3; fenced 4 does not count). Equality suffices. Records
    written later (a new topic) do not move the shutdown offset. WantFence is ignored."""
    h, cs_offset = in_controlled_shutdown(make, release)
    h.heartbeat(2, offset=cs_offset - 1)
    h.heartbeat(3, offset=cs_offset - 1)
    response = h.heartbeat(1, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (False, False)
    h.create("bar", [[2, 3]])
    response = h.heartbeat(1, fence=True)
    assert (response.is_fenced, response.should_shut_down) == (False, False)
    assert h.c.broker(1).fenced is False
    h.heartbeat(2, offset=cs_offset)
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    h.heartbeat(3, offset=cs_offset)
    response = h.heartbeat(1, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (True, True)


def test_controlled_shutdown_without_active_brokers_completes(make, release):
    """§4.2: with no active broker the lowest offset is +∞ → SHUTDOWN_NOW on the next heartbeat.
    A sole ISR member keeps ISR [1] with leader -1 (§4.4, ELR off)."""
    h = make(release)
    h.start(1)
    h.create("foo", [[1]])
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    assert (h.state().leader, h.state().isr) == (-1, (1,))
    response = h.heartbeat(1, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (True, True)
    assert (h.state().leader, h.state().isr) == (-1, (1,))


# ============================================================================ §4.3 session expiry


def test_session_expiry_is_strict(make, release, shrink_bump):
    """§4.3: a session expires when lastContact + broker.session.timeout.ms < now (strict); the
    broker is then fenced (handleBrokerFenced, §4.4)."""
    h = world(make, release)
    h.c.advance_clock(5000)
    h.heartbeat(1)
    h.heartbeat(2)
    h.heartbeat(4, fence=True)
    assert h.c.advance_clock(TIMEOUT - 5000) == []
    assert h.c.broker(3).fenced is False
    assert h.c.advance_clock(1) == [3]
    assert h.c.broker(3).fenced
    assert (h.state().leader, h.state().isr) == (1, (1, 2))
    assert h.epochs() == (1 if shrink_bump(release) else 0, 1)


def test_controlled_shutdown_broker_still_expires(make, release):
    """§4.3: an unfenced broker in controlled shutdown that stops heartbeating is fenced at
    expiry like any other (3.x: "unfenced broker (including one in controlled shutdown)")."""
    h, _ = in_controlled_shutdown(make, release)
    h.c.advance_clock(5000)
    h.heartbeat(2)
    h.heartbeat(3)
    h.heartbeat(4, fence=True)
    assert h.c.advance_clock(TIMEOUT - 5000 + 1) == [1]
    assert h.c.broker(1).fenced


def test_expiry_of_a_fenced_broker(make, release):
    """§4.3: 3.x expires only unfenced brokers — a fenced one never produces anything; 4.x expires
    any tracker entry and fences the broker even if already fenced (a redundant FENCE record)."""
    h = world(make, release)
    h.heartbeat(4, fence=True)
    h.c.advance_clock(5000)
    for b in (1, 2, 3):
        h.heartbeat(b)
    mark = h.mark()
    fenced = h.c.advance_clock(TIMEOUT - 5000 + 1)
    if is_3x(release):
        assert fenced == [] and h.records_since(mark) == []
    else:
        assert fenced == [4]
        assert h.records_since(mark) == [BrokerRegistrationChangeRecord(4, h.epoch(4), fenced=True)]


@pytest.mark.releases("4.0", "4.1")
def test_4x_tracker_entry_with_stale_epoch_is_dropped(make, release):
    """§4.2 step 1 / §4.3 (4.x): a heartbeat records contact for (id, epoch) even when it then
    fails with STALE_BROKER_EPOCH; when that entry expires it is just dropped because the broker
    is registered with a different epoch — the broker is not fenced."""
    h = world(make, release)
    assert h.heartbeat(2, epoch=h.epoch(2) + 100).error is Error.STALE_BROKER_EPOCH
    h.c.advance_clock(5000)
    for b in (1, 2, 3):
        h.heartbeat(b)
    h.heartbeat(4, fence=True)
    mark = h.mark()
    assert h.c.advance_clock(TIMEOUT - 5000 + 1) == []
    assert h.records_since(mark) == []
    assert h.c.broker(2).fenced is False


@pytest.mark.releases(max="3.9")
def test_3x_least_recently_contacted_fenced_first(make, release, shrink_bump):
    """§4.3 (3.x): brokers are fenced one per controller event, least recently contacted first,
    each seeing the previous one's effect: 2 (last contact 0) then 3 (last contact 100)."""
    h = world(make, release)
    h.c.advance_clock(100)
    h.heartbeat(3)
    h.heartbeat(1)
    h.c.advance_clock(4900)
    h.heartbeat(1)
    assert h.c.advance_clock(TIMEOUT - 5000 + 200) == [2, 3]
    assert (h.state().leader, h.state().isr) == (1, (1,))
    assert h.epochs() == (2 if shrink_bump(release) else 0, 2)


# ============================================================================ §4.4 effects


def test_fencing_the_leader_elects_in_assignment_order(make, release):
    """§4.4: the leader fenced with other acceptable ISR members → ISR loses it (order of the
    others kept), leader := first replica in *assignment order* in the new ISR (2, although ISR
    order is [3,2]); both epochs +1."""
    h = world(make, release)
    assert h.alter(1, [3, 1, 2]).error is Error.NONE
    h.c.fence_stale_broker(1)
    assert (h.state().leader, h.state().isr, h.epochs()) == (2, (3, 2), (1, 2))


def test_fencing_a_follower_keeps_isr_order(make, release, shrink_bump):
    """§4.4: a non-leader leaves the ISR, the others keep their order, leader unchanged,
    partitionEpoch+1, leaderEpoch+1 only where a shrink bumps."""
    h = world(make, release)
    h.alter(1, [3, 1, 2])
    h.c.fence_stale_broker(2)
    assert (h.state().leader, h.state().isr) == (1, (3, 1))
    assert h.epochs() == (1 if shrink_bump(release) else 0, 2)


@pytest.mark.releases(max="3.9")
def test_fencing_the_leader_with_only_unacceptable_members_goes_leaderless(make, release):
    """§4.4: leader fenced, ISR has other members but none acceptable → ISR loses the leader,
    leader -1. (3.x: new-incarnation re-registrations leave fenced brokers 2 and 3 in the ISR,
    §4.1.)"""
    h = world(make, release)
    expire_without_check(h)
    h.restart(2)
    h.restart(3)
    assert h.state().isr == (1, 2, 3)
    h.c.fence_stale_broker(1)
    assert (h.state().leader, h.state().isr, h.epochs()) == (-1, (2, 3), (1, 1))


def test_fencing_the_sole_isr_member_keeps_isr(make, release):
    """§4.4 last ISR member stays (ELR off): ISR stays [1], leader -1, leaderEpoch+1,
    partitionEpoch+1; a fenced follower that is not in the ISR changes nothing."""
    h = make(release)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    h.alter(1, [1])
    before = h.epochs()
    mark = h.mark()
    h.c.fence_stale_broker(2)
    assert h.partition_records_since(mark) == []
    h.c.fence_stale_broker(1)
    assert (h.state().leader, h.state().isr) == (-1, (1,))
    assert h.epochs() == (before[0] + 1, before[1] + 1)


def test_unfencing_never_adds_to_an_isr(make, release):
    """§4.4 handleBrokerUnfenced: UNFENCE only; a fenced-away follower is not re-added to the
    ISR (only the leader's AlterPartition does that)."""
    h = world(make, release)
    h.c.fence_stale_broker(3)
    before = h.state()
    mark = h.mark()
    h.unfence(3)
    assert kinds(h.records_since(mark)) == ["unfence"]
    assert h.state() == before


def test_unfencing_elects_leaderless_partitions(make, release):
    """§4.4 handleBrokerUnfenced: UNFENCE first, then every leaderless partition whose ISR holds
    an acceptable member gets a leader (here the unfenced broker itself); a leaderless partition
    whose ISR does not contain it is left alone."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2]])
    h.create("bar", [[3, 2]])
    h.alter(1, [1])
    h.alter(3, [3], topic="bar")
    h.c.fence_stale_broker(1)
    h.c.fence_stale_broker(3)
    foo_before, bar_before = h.epochs("foo"), h.epochs("bar")
    mark = h.mark()
    h.unfence(1)
    assert kinds(h.records_since(mark)) == ["unfence", "PartitionChangeRecord"]
    assert (h.state("foo").leader, h.state("foo").isr) == (1, (1,))
    assert h.epochs("foo") == (foo_before[0] + 1, foo_before[1] + 1)
    assert (h.state("bar").leader, h.epochs("bar")) == (-1, bar_before)


def test_controlled_shutdown_effects_on_partitions(make, release):
    """§4.4 handleBrokerInControlledShutdown: exactly the fencing partition logic — the shutting
    down broker leaves every ISR (leader or not) and loses leadership; it is not acceptable as a
    leader afterwards (not active)."""
    h = world(make, release)
    h.create("bar", [[2, 1, 3]])
    h.heartbeat(1, shutdown=True)
    assert (h.state("foo").leader, h.state("foo").isr) == (2, (2, 3))
    assert (h.state("bar").leader, h.state("bar").isr) == (2, (2, 3))
    assert h.alter(2, [2, 3, 1]) == AlterPartitionPartitionResult(0, Error.INELIGIBLE_REPLICA)


# ------------------------------------------------------------------ unregistration


def test_unregister_unknown_broker(make, release):
    """§4.4 unregisterBroker: not registered → BROKER_ID_NOT_REGISTERED, nothing written."""
    h = world(make, release)
    mark = h.mark()
    assert h.c.unregister_broker(9) is Error.BROKER_ID_NOT_REGISTERED
    assert h.records_since(mark) == []


def test_unregister_live_leader(make, release):
    """§4.4: unregistering a live broker is allowed — fencing-style updates (ISR loses it,
    leadership moves), then UnregisterBrokerRecord; the id stays in the replica list."""
    h = world(make, release)
    epoch = h.epoch(1)
    mark = h.mark()
    assert h.c.unregister_broker(1) is Error.NONE
    records = h.records_since(mark)
    assert kinds(records) == ["PartitionChangeRecord", "UnregisterBrokerRecord"]
    assert records[1] == UnregisterBrokerRecord(1, epoch)
    assert h.c.broker(1) is None
    current = h.state()
    assert (current.replicas, current.isr, current.leader, h.epochs()) == ((1, 2, 3), (2, 3), 2, (1, 1))


def test_unregister_sole_isr_member(make, release):
    """§4.4: the last-ISR-member rule applies — a partition whose only ISR member is unregistered
    keeps ISR [b] with leader -1. Kafka: `QuorumControllerTest.testUnregisterBroker`."""
    h = make(release)
    h.start(1)
    h.create("foo", [[1]])
    assert h.c.unregister_broker(1) is Error.NONE
    assert (h.state().isr, h.state().leader, h.epochs()) == ((1,), -1, (1, 1))


def test_after_unregistration(make, release):
    """§4.4 / §4.2 / §2.2: the unregistered id's heartbeats and AlterPartitions are stale; it may
    register again (no registration to collide with) and gets a new, higher epoch, fenced."""
    h = world(make, release)
    old = h.epoch(3)
    h.c.unregister_broker(3)
    assert h.heartbeat(3, epoch=old).error is Error.STALE_BROKER_EPOCH
    response = h.alter_request(3, [h.topic_entry("foo", [h.item("foo", [1, 2])], 2)], broker_epoch=old)
    assert response.error is Error.STALE_BROKER_EPOCH
    response = h.restart(3)
    assert response.error is Error.NONE and response.broker_epoch > old
    assert h.c.broker(3).fenced


# ============================================================================ §4.5 fail-over


def test_failover_keeps_persisted_state_rebuilds_soft_state(make, release):
    """§4.5: after fail-over, registrations survive; a broker that was in controlled shutdown
    looks UNFENCED to the new controller (no controlled-shutdown offset): a plain heartbeat is
    answered not-fenced and writes nothing; a fenced broker stays fenced until a caught-up
    heartbeat."""
    h = world(make, release)
    h.heartbeat(1, shutdown=True)
    h.c.fail_over()
    assert (h.c.broker(1).fenced, h.c.broker(1).in_controlled_shutdown) == (False, True)
    assert h.c.broker(4).fenced
    mark = h.mark()
    response = h.heartbeat(1)
    assert (response.error, response.is_fenced, response.should_shut_down) == (Error.NONE, False, False)
    assert h.records_since(mark) == []
    assert h.heartbeat(4, offset=register_offset(h, 4) - 1).is_fenced
    assert h.heartbeat(4).is_fenced is False


def test_failover_then_shutdown_request_writes_no_second_cs_record(make, release):
    """§4.5: the next WantShutDown heartbeat after fail-over does not write a second
    InControlledShutdown record. Leading nothing (§4.2 table: UNFENCED + WantShutDown + leads
    nothing), it goes straight to SHUTDOWN_NOW → FENCE only."""
    h = world(make, release)
    h.heartbeat(1, shutdown=True)
    h.c.fail_over()
    mark = h.mark()
    response = h.heartbeat(1, shutdown=True)
    assert (response.is_fenced, response.should_shut_down) == (True, True)
    assert kinds(h.records_since(mark)) == ["fence"]


def test_failover_resets_reported_offsets(make, release):
    """§4.5: the new controller's soft state has metadata offset -1 for every broker, so a
    controlled shutdown started after fail-over cannot complete until the active brokers have
    heartbeated with a high enough offset (§4.2, §4.6)."""
    h = world(make, release)
    h.c.fail_over()
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    assert h.c.broker(1).in_controlled_shutdown
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    h.heartbeat(2)
    assert h.heartbeat(1, shutdown=True).should_shut_down is False
    h.heartbeat(3)
    assert h.heartbeat(1, shutdown=True).should_shut_down is True


# ============================================================================ §4.7 new incarnation, 4.0+


def test_new_incarnation_handler_by_release(make, release):
    """§4.7 (KAFKA-18106, 4.0+; ELR off): each new-incarnation registration of the current leader
    first runs the as-if-fenced update — leadership moves (assignment order) and the leader
    epoch bumps; the last ISR member stays with leader -1. The partition records precede the
    RegisterBrokerRecord. 3.x touches no partition (§4.1): the fenced broker keeps its ISR
    membership and leadership. Kafka: `QuorumControllerTest.testUncleanShutdownElrDisabled`."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    expire_without_check(h)
    expected = {1: (2, (2, 3), (1, 1)), 2: (3, (3,), (2, 2)), 3: (-1, (3,), (3, 3))}
    for broker in (1, 2, 3):
        mark = h.mark()
        assert h.restart(broker).error is Error.NONE
        if is_3x(release):
            assert kinds(h.records_since(mark)) == ["RegisterBrokerRecord"]
            assert (h.state().leader, h.state().isr, h.epochs()) == (1, (1, 2, 3), (0, 0))
        else:
            assert kinds(h.records_since(mark)) == ["PartitionChangeRecord", "RegisterBrokerRecord"]
            assert (h.state().leader, h.state().isr, h.epochs()) == expected[broker]
        assert h.c.broker(broker).fenced


@pytest.mark.releases("4.0", "4.1")
def test_epoch_is_offset_of_the_batch_not_of_the_register_record(make, release):
    """[derived from §4.1 + §4.7] epoch = next write offset when the registration batch is
    generated, and the partition records precede the RegisterBrokerRecord in that batch — so the
    epoch is the offset of the first (partition) record, and unfencing needs an offset ≥ the
    later register-record offset (§4.2)."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    expire_without_check(h)
    first = h.c.next_offset
    response = h.restart(1)
    assert response.broker_epoch == first
    assert register_offset(h, 1) == first + 1
    assert h.heartbeat(1, offset=first).is_fenced
    assert h.heartbeat(1, offset=first + 1).is_fenced is False


@pytest.mark.releases("4.0", "4.1")
@pytest.mark.parametrize(
    ("version", "previous", "clean"),
    [(4, "old", True), (3, "old", True), (4, -1, False), (4, "other", False), (2, "old", False)],
)
def test_clean_vs_unclean_shutdown_with_elr(make, release, version, previous, clean):
    """§4.7: isCleanShutdown = request version ≥ 3 and PreviousBrokerEpoch == the stored epoch.
    With ELR on (min ISR 3): unclean → the broker leaves the ISR and is excluded from ELR; clean →
    the fencing-style update, so it enters ELR (ELR := ISR − target ISR = [1])."""
    h = make(release, elr=True, min_insync_replicas=3)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    expire_without_check(h)
    old = h.epoch(1)
    prev = {"old": old, "other": old + 1}.get(previous, previous)
    assert h.restart(1, previous_broker_epoch=prev, version=version).error is Error.NONE
    current = h.state()
    assert (current.leader, current.isr, h.epochs()) == (2, (2, 3), (1, 1))
    assert current.elr == ((1,) if clean else ())


# ============================================================================ ELR through lifecycle


@pytest.mark.releases("4.0", "4.1")
def test_elr_through_fencing_and_unfencing(make, release):
    """§4.4 / §4.9 (min ISR 2): fencing 3 leaves ISR [1,2] ≥ min ISR (ELR []); fencing 2 shrinks
    below min ISR → ELR [2]; fencing leader 1 empties the ISR → ELR [1,2], leader -1,
    lastKnownElr [1]; unfencing 2 elects it from ELR (ISR [2], ELR [1], lastKnownElr cleared,
    LRS untouched). Kafka: `testEligibleLeaderReplicas_BrokerFence` (order 2 before 3 matters)."""
    h = make(release, elr=True, min_insync_replicas=2)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.c.fence_stale_broker(3)
    assert (h.state().isr, h.state().elr, h.epochs()) == ((1, 2), (), (0, 1))
    h.c.fence_stale_broker(2)
    assert (h.state().isr, h.state().elr, h.epochs()) == ((1,), (2,), (0, 2))
    h.c.fence_stale_broker(1)
    current = h.state()
    assert (current.leader, current.isr, sorted(current.elr), current.last_known_elr) == (-1, (), [1, 2], (1,))
    assert h.epochs() == (1, 3)
    h.unfence(2)
    current = h.state()
    assert (current.leader, current.isr, current.elr, current.last_known_elr) == (2, (2,), (1,), ())
    assert current.leader_recovery_state is LeaderRecoveryState.RECOVERED
    assert h.epochs() == (2, 4)


def test_partition_change_records_only_for_affected_partitions(make, release):
    """§4.4: fencing runs the builder only for partitions with the broker in the ISR."""
    h = world(make, release)
    h.create("bar", [[1, 2]])
    mark = h.mark()
    h.c.fence_stale_broker(3)
    records = h.partition_records_since(mark)
    assert [(r.topic, r.partition) for r in records] == [("foo", 0)]
    assert all(isinstance(r, PartitionChangeRecord) for r in records)


@pytest.mark.releases("4.0", "4.1")
@pytest.mark.parametrize(("clean", "elr_after"), [(False, ()), (True, (2,))])
def test_new_incarnation_of_an_elr_member(make, release, clean, elr_after):
    """§4.7 (ELR on, min ISR 2): an unclean new incarnation also runs over the partitions with the
    broker in ELR and excludes it from ELR ([2] → []); a clean one only runs the fencing-style
    update over partitions with it in the ISR, so its ELR membership is untouched."""
    h = make(release, elr=True, min_insync_replicas=2)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.c.fence_stale_broker(3)
    h.c.fence_stale_broker(2)
    assert (h.state().isr, h.state().elr) == ((1,), (2,))
    old = h.epoch(2)
    mark = h.mark()
    assert h.restart(2, previous_broker_epoch=old if clean else -1).error is Error.NONE
    assert (h.state().leader, h.state().isr, h.state().elr) == (1, (1,), elr_after)
    assert len(h.partition_records_since(mark)) == (0 if clean else 1)


@pytest.mark.releases("4.0", "4.1")
def test_unregistering_an_elr_member_leaves_it_in_elr(make, release):
    """§4.4 unregisterBroker, 4.x: the update also covers partitions with the broker in ELR, "but
    the builder does not actually drop b from ELR in that path [derived, 4.1]" — ELR stays [2]
    and no partition record is written (the spec's §10 lists the intent as an open question)."""
    h = make(release, elr=True, min_insync_replicas=2)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.c.fence_stale_broker(3)
    h.c.fence_stale_broker(2)
    mark = h.mark()
    assert h.c.unregister_broker(2) is Error.NONE
    assert kinds(h.records_since(mark)) == ["UnregisterBrokerRecord"]
    assert (h.state().isr, h.state().elr) == ((1,), (2,))
