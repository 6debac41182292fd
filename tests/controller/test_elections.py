"""§4.8 — leader elections: ElectLeaders(PREFERRED / UNCLEAN) and the automatic unclean
election of 3.9+ (KAFKA-12670) on fencing and unfencing."""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import ElectionResult
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.state import LeaderRecoveryState

RECOVERING = LeaderRecoveryState.RECOVERING


def imbalanced(make, release, **config):
    """foo = [1,2,3] created while 1 was fenced → ISR [2,3], leader 2; then 1 is unfenced (not
    added to the ISR, §4.4)."""
    h = make(release, **config)
    h.register(1)
    h.start(2, 3)
    h.create("foo", [[1, 2, 3]])
    h.unfence(1)
    assert (h.state().leader, h.state().isr, h.epochs()) == (2, (2, 3), (0, 0))
    return h


def leaderless(make, release, **config):
    """foo = [1,2,3], shrunk to [1] and 1 fenced → ISR [1], leader -1; 2 and 3 active."""
    h = make(release, **config)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    assert (h.state().leader, h.state().isr) == (-1, (1,))
    return h


def elect(h, election, *partitions):
    return h.c.elect_leaders(election, list(partitions or [("foo", 0)]))


# ------------------------------------------------------------------------------ PREFERRED


def test_preferred_not_needed_when_leader_is_replica_zero(make, release):
    """§4.8: ElectLeaders(PREFERRED) → ELECTION_NOT_NEEDED if leader == replicas[0]; nothing
    written."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    mark = h.mark()
    assert elect(h, Election.PREFERRED) == [ElectionResult("foo", 0, Error.ELECTION_NOT_NEEDED)]
    assert h.records_since(mark) == []


def test_preferred_unavailable_when_replica_zero_not_in_isr(make, release):
    """§4.8: leader ≠ replicas[0] but replicas[0] is not in the ISR → the build keeps the current
    leader, no record → PREFERRED_LEADER_NOT_AVAILABLE."""
    h = imbalanced(make, release)
    mark = h.mark()
    assert elect(h, Election.PREFERRED) == [ElectionResult("foo", 0, Error.PREFERRED_LEADER_NOT_AVAILABLE)]
    assert h.records_since(mark) == []


def test_preferred_moves_leadership_to_replica_zero(make, release):
    """§4.8 / §3.2 PREFERRED (a): once replicas[0] is in the ISR and acceptable it becomes leader
    (leaderEpoch+1, partitionEpoch+1, ISR unchanged)."""
    h = imbalanced(make, release)
    assert h.alter(2, [2, 3, 1]).error is Error.NONE
    assert elect(h, Election.PREFERRED) == [ElectionResult("foo", 0, Error.NONE)]
    assert (h.state().leader, h.state().isr, h.epochs()) == (1, (2, 3, 1), (1, 2))
    assert elect(h, Election.PREFERRED) == [ElectionResult("foo", 0, Error.ELECTION_NOT_NEEDED)]


def test_preferred_unavailable_when_replica_zero_shutting_down(make, release):
    """§4.8 / §3.3: acceptability = active — replicas[0] in controlled shutdown (removed from the
    ISR by it) cannot be elected → PREFERRED_LEADER_NOT_AVAILABLE."""
    h = imbalanced(make, release)
    h.alter(2, [2, 3, 1])
    h.create("bar", [[1, 2]])
    h.heartbeat(1, shutdown=True)
    assert elect(h, Election.PREFERRED) == [ElectionResult("foo", 0, Error.PREFERRED_LEADER_NOT_AVAILABLE)]


def test_preferred_never_elects_uncleanly(make, release):
    """§3.2: PREFERRED never does an unclean election — a leaderless partition whose ISR holds
    no acceptable broker stays leaderless (PREFERRED_LEADER_NOT_AVAILABLE)."""
    h = leaderless(make, release)
    assert elect(h, Election.PREFERRED) == [ElectionResult("foo", 0, Error.PREFERRED_LEADER_NOT_AVAILABLE)]
    assert h.state().leader == -1


# ------------------------------------------------------------------------------ UNCLEAN


def test_unclean_not_needed_when_partition_has_a_leader(make, release):
    """§4.8: ElectLeaders(UNCLEAN) → ELECTION_NOT_NEEDED if the partition has a leader."""
    h = imbalanced(make, release)
    mark = h.mark()
    assert elect(h, Election.UNCLEAN) == [ElectionResult("foo", 0, Error.ELECTION_NOT_NEEDED)]
    assert h.records_since(mark) == []


def test_unclean_elects_first_active_replica(make, release):
    """§4.8 (available in every release regardless of config) / §3.2 UNCLEAN: the first active
    replica in assignment order (2) → ISR [2], LRS RECOVERING, leaderEpoch+1, partitionEpoch+1."""
    h = leaderless(make, release)
    before = h.epochs()
    assert elect(h, Election.UNCLEAN) == [ElectionResult("foo", 0, Error.NONE)]
    current = h.state()
    assert (current.leader, current.isr, current.leader_recovery_state) == (2, (2,), RECOVERING)
    assert h.epochs() == (before[0] + 1, before[1] + 1)


def test_unclean_skips_inactive_replicas(make, release):
    """§3.2 UNCLEAN: fenced (2) and shutting-down replicas are skipped → 3."""
    h = leaderless(make, release)
    h.c.fence_stale_broker(2)
    assert elect(h, Election.UNCLEAN) == [ElectionResult("foo", 0, Error.NONE)]
    assert (h.state().leader, h.state().isr) == (3, (3,))


def test_unclean_without_candidates(make, release):
    """§4.8: no acceptable replica → no record → ELIGIBLE_LEADERS_NOT_AVAILABLE."""
    h = leaderless(make, release)
    h.c.fence_stale_broker(2)
    h.c.fence_stale_broker(3)
    mark = h.mark()
    assert elect(h, Election.UNCLEAN) == [ElectionResult("foo", 0, Error.ELIGIBLE_LEADERS_NOT_AVAILABLE)]
    assert h.records_since(mark) == []


def test_results_per_partition_in_request_order(make, release):
    """§4.8: each requested partition gets its own result, in request order."""
    h = leaderless(make, release)
    h.create("bar", [[2, 3]])
    results = elect(h, Election.UNCLEAN, ("bar", 0), ("foo", 0))
    assert results == [ElectionResult("bar", 0, Error.ELECTION_NOT_NEEDED), ElectionResult("foo", 0, Error.NONE)]


# ------------------------------------------------------------------------------ automatic unclean


def test_fencing_with_unclean_topic(make, release, shrink_bump):
    """§4.4 / §4.8 (KAFKA-12670, 3.9+): the sole ISR member fenced on a topic with
    unclean.leader.election.enable=true → the first acceptable replica (2) becomes leader,
    ISR [2], RECOVERING. 3.3–3.8 ignore the config: ISR [1] stays with leader -1."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]], configs={"unclean.leader.election.enable": "true"})
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    current = h.state()
    if release in ("3.9", "4.0", "4.1"):
        assert (current.leader, current.isr, current.leader_recovery_state) == (2, (2,), RECOVERING)
    else:
        assert (current.leader, current.isr, current.leader_recovery_state) == (-1, (1,), LeaderRecoveryState(0))
    assert h.epochs() == ((2 if shrink_bump(release) else 1), 2)


@pytest.mark.releases(min="3.9")
def test_unfencing_with_unclean_topic(make, release):
    """§4.4 handleBrokerUnfenced (3.9+): a leaderless partition gets an unclean leader when the
    topic allows it — broker 2, unfenced after the sole ISR member 1 was fenced, becomes leader
    with ISR [2], RECOVERING."""
    h = make(release)
    h.start(1, 2)
    h.create("foo", [[1, 2]], configs={"unclean.leader.election.enable": "true"})
    h.alter(1, [1])
    h.c.fence_stale_broker(2)
    h.c.fence_stale_broker(1)
    assert (h.state().leader, h.state().isr) == (-1, (1,))
    h.unfence(2)
    current = h.state()
    assert (current.leader, current.isr, current.leader_recovery_state) == (2, (2,), RECOVERING)


@pytest.mark.releases(min="3.9")
@pytest.mark.parametrize(
    ("cluster", "topic", "unclean"),
    [(True, None, True), (True, "false", False), (False, "true", True), (False, None, False)],
)
def test_effective_unclean_config(make, release, cluster, topic, unclean):
    """§2.6 / §6: the *effective* unclean.leader.election.enable of the topic decides (topic
    config over the cluster default)."""
    h = make(release, unclean_leader_election_enable=cluster)
    h.start(1, 2)
    h.create("foo", [[1, 2]], configs=None if topic is None else {"unclean.leader.election.enable": topic})
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    assert h.state().leader == (2 if unclean else -1)


@pytest.mark.releases(max="3.8")
def test_cluster_unclean_config_ignored_before_3_9(make, release):
    """§4.8: in 3.3–3.8 the KRaft controller ignores unclean.leader.election.enable entirely
    (also at cluster level)."""
    h = make(release, unclean_leader_election_enable=True)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    assert (h.state().leader, h.state().isr) == (-1, (1,))


@pytest.mark.releases("4.0", "4.1")
def test_unclean_election_clears_elr(make, release):
    """§4.8.5 / §4.9: with ELR on, an unclean ElectLeaders clears ELR and lastKnownElr."""
    h = make(release, elr=True, min_insync_replicas=2)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.alter(1, [1, 2])
    h.c.fence_stale_broker(2)
    assert h.state().elr == (2,)
    h.c.fence_stale_broker(1)
    assert (h.state().isr, sorted(h.state().elr), h.state().last_known_elr) == ((), [1, 2], (1,))
    assert elect(h, Election.UNCLEAN) == [ElectionResult("foo", 0, Error.NONE)]
    current = h.state()
    assert (current.leader, current.isr, current.elr, current.last_known_elr) == (3, (3,), (), ())
    assert current.leader_recovery_state is RECOVERING
