"""§2.2–§2.4 — AlterPartition top-level processing, topic resolution and the per-partition
validation table (every row, and which row wins when several apply).

The common starting point (`prepared`) is the same in every release:
replicas [1,2,3], ISR [2,3,1], leader 2, leaderEpoch 1, partitionEpoch 2, LRS RECOVERED —
reached by fencing the first leader (1 → 2, both epochs +1) and letting 2 add 1 back
(expansion: partitionEpoch +1 only, §2.6).
"""

from __future__ import annotations

import pytest
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import (
    AlterPartitionItem,
    AlterPartitionPartitionResult,
    AlterPartitionTopic,
    IsrMember,
)
from isrcheck.reference_impl.partition_change import Election

LE, PE = 1, 2
"""Epochs of the prepared partition."""


def prepared(make, release, **config):
    h = make(release, **config)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.c.fence_stale_broker(1)
    h.unfence(1)
    assert h.alter(2, [2, 3, 1]).error is Error.NONE
    current = h.state()
    assert (current.replicas, current.isr, current.leader) == ((1, 2, 3), (2, 3, 1), 2)
    assert (current.leader_epoch, current.partition_epoch) == (LE, PE)
    return h


def rejected(h, result, error, partition=0):
    """§2.7: an error entry carries only the index and the code; §2.4: no record is written."""
    assert result == AlterPartitionPartitionResult(partition, error)


def unchanged(h, mark):
    assert h.records_since(mark) == []
    assert h.epochs() == (LE, PE)
    assert h.state().isr == (2, 3, 1)


# ---------------------------------------------------------------------------------------- §2.2


def test_empty_topics_short_cut_skips_broker_epoch_check(make, release):
    """§2.2 step 2: an empty Topics list is answered with an empty success before the broker
    epoch is checked — even for a wrong epoch or an unregistered broker id."""
    h = prepared(make, release)
    mark = h.mark()
    assert h.alter_request(2, [], broker_epoch=h.epoch(2) + 1000).error is Error.NONE
    response = h.alter_request(99, [], broker_epoch=-1)
    assert (response.error, response.topics) == (Error.NONE, ())
    assert h.records_since(mark) == []


@pytest.mark.parametrize("wrong", ["unregistered", "epoch+1", "epoch-1", "minus-one"])
def test_stale_broker_epoch_is_a_top_level_error(make, release, wrong):
    """§2.2 step 4: BrokerId not registered, or registered epoch ≠ BrokerEpoch (-1 is not special)
    → top-level STALE_BROKER_EPOCH, no per-partition results, no records."""
    h = prepared(make, release)
    broker, epoch = {
        "unregistered": (9, 0),
        "epoch+1": (2, h.epoch(2) + 1),
        "epoch-1": (2, h.epoch(2) - 1),
        "minus-one": (2, -1),
    }[wrong]
    mark = h.mark()
    item = h.item("foo", [2, 3])
    response = h.alter_request(broker, [h.topic_entry("foo", [item], 2)], broker_epoch=epoch)
    assert (response.error, response.topics) == (Error.STALE_BROKER_EPOCH, ())
    unchanged(h, mark)


def test_fenced_requester_passes_the_top_level_check(make, release):
    """§2.2 step 4: being fenced is not checked at the top level — a fenced non-leader with the
    right epoch gets a per-partition answer (row 5, INVALID_REQUEST), not STALE_BROKER_EPOCH."""
    h = prepared(make, release)
    h.c.fence_stale_broker(3)
    assert h.c.broker(3).fenced
    mark = h.mark()
    rejected(h, h.alter(3, [2, 1]), Error.INVALID_REQUEST)
    assert h.records_since(mark) == []


def test_leader_recovery_state_outside_0_1_fails_the_whole_request(make, release):
    """§2.2 step 6: an LRS byte that is neither 0 nor 1 makes the whole request fail with
    top-level UNKNOWN_SERVER_ERROR (no topics, no records) — also for the other, valid entries."""
    h = prepared(make, release)
    h.create("bar", [[1, 2, 3]])
    mark = h.mark()
    bad = h.item("foo", [2, 3, 1], lrs=2)
    good = h.item("bar", [1, 2])
    response = h.alter_request(
        2, [h.topic_entry("bar", [good], 2), h.topic_entry("foo", [bad], 2)], broker_epoch=h.epoch(2)
    )
    assert (response.error, response.topics) == (Error.UNKNOWN_SERVER_ERROR, ())
    assert h.records_since(mark) == []
    assert h.epochs("bar") == (0, 0)


# ---------------------------------------------------------------------------------------- §2.3


@pytest.mark.parametrize("topic_id", ["unknown", None, "00000000-0000-0000-0000-000000000000"])
def test_unknown_null_or_zero_topic_id_gives_unknown_topic_id(make, release, topic_id):
    """§2.3 (v2/v3): TopicId null, zero UUID or unknown → every partition listed under that topic
    gets UNKNOWN_TOPIC_ID; no further checks (the epochs here would fail rows 2 and 4)."""
    h = prepared(make, release)
    items = (
        AlterPartitionItem(0, LE + 5, PE, (IsrMember(2),)),
        AlterPartitionItem(7, LE - 1, PE, (IsrMember(2),)),
    )
    tid = "0b8b0bd3-0000-4000-8000-00000000abcd" if topic_id == "unknown" else topic_id
    mark = h.mark()
    response = h.alter_request(2, [AlterPartitionTopic(items, topic_id=tid)], version=2)
    assert response.error is Error.NONE
    (topic,) = response.topics
    assert topic.topic_id == tid
    assert topic.partitions == (
        AlterPartitionPartitionResult(0, Error.UNKNOWN_TOPIC_ID),
        AlterPartitionPartitionResult(7, Error.UNKNOWN_TOPIC_ID),
    )
    unchanged(h, mark)


@pytest.mark.releases(max="3.9")
@pytest.mark.parametrize("version", [0, 1])
def test_unknown_topic_name_gives_unknown_topic_or_partition(make, release, version):
    """§2.3 (v0/v1, 3.x only): unknown TopicName → every partition gets
    UNKNOWN_TOPIC_OR_PARTITION."""
    h = prepared(make, release)
    items = (AlterPartitionItem(0, LE, PE, (IsrMember(2),)), AlterPartitionItem(1, LE, PE, (IsrMember(2),)))
    response = h.alter_request(2, [AlterPartitionTopic(items, topic_name="nope")], version=version)
    (topic,) = response.topics
    assert topic.topic_name == "nope"
    assert topic.partitions == (
        AlterPartitionPartitionResult(0, Error.UNKNOWN_TOPIC_OR_PARTITION),
        AlterPartitionPartitionResult(1, Error.UNKNOWN_TOPIC_OR_PARTITION),
    )


@pytest.mark.parametrize("version", [0, 2])
def test_response_echoes_topics_in_request_order(make, release, version):
    """§2.3: response topic entries echo the request's TopicId (v2+) / TopicName (v0-1) in
    request order; an unknown topic between two known ones gets its own unknown-topic error and
    does not disturb them."""
    h = prepared(make, release)
    if not h.serves(version):
        pytest.skip("version not served by this release (§2.1)")
    h.create("bar", [[2, 1, 3]])
    foo = h.topic_entry("foo", [h.item("foo", [2, 3, 1])], version)
    ghost = h.topic_entry("ghost", [h.item("foo", [2])], version)
    bar = h.topic_entry("bar", [h.item("bar", [2, 1, 3])], version)
    response = h.alter_request(2, [foo, ghost, bar], version=version)
    assert [(t.topic_name, t.topic_id) for t in response.topics] == [
        (foo.topic_name, foo.topic_id), (ghost.topic_name, ghost.topic_id), (bar.topic_name, bar.topic_id)
    ]
    unknown = Error.UNKNOWN_TOPIC_ID if version >= 2 else Error.UNKNOWN_TOPIC_OR_PARTITION
    assert [t.partitions[0].error for t in response.topics] == [Error.NONE, unknown, Error.NONE]
    assert response.topics[1].partitions == (AlterPartitionPartitionResult(0, unknown),)


# ---------------------------------------------------------------------------------------- §2.4 rows


def test_row1_unknown_partition_index(make, release):
    """§2.4 row 1: partition index unknown in the topic → UNKNOWN_TOPIC_OR_PARTITION."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(2, [2, 3, 1], partition=1, leader_epoch=LE, partition_epoch=PE),
             Error.UNKNOWN_TOPIC_OR_PARTITION, partition=1)
    unchanged(h, mark)


def test_row2_leader_epoch_ahead_is_not_controller(make, release):
    """§2.4 row 2 (KAFKA-14154): req.leaderEpoch > cur.leaderEpoch → NOT_CONTROLLER."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(2, [2, 3], leader_epoch=LE + 1), Error.NOT_CONTROLLER)
    unchanged(h, mark)


def test_row3_partition_epoch_ahead_is_not_controller(make, release):
    """§2.4 row 3: req.partitionEpoch > cur.partitionEpoch → NOT_CONTROLLER."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(2, [2, 3], partition_epoch=PE + 1), Error.NOT_CONTROLLER)
    unchanged(h, mark)


def test_row4_leader_epoch_behind_is_fenced_leader_epoch(make, release):
    """§2.4 row 4: req.leaderEpoch < cur.leaderEpoch → FENCED_LEADER_EPOCH."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(2, [2, 3], leader_epoch=LE - 1), Error.FENCED_LEADER_EPOCH)
    unchanged(h, mark)


@pytest.mark.parametrize("requester", [1, 3])
def test_row5_requester_not_leader_is_invalid_request(make, release, requester):
    """§2.4 row 5: a registered broker with the right epoch that is not the leader →
    INVALID_REQUEST, never NOT_LEADER_OR_FOLLOWER."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(requester, [2, 3, 1]), Error.INVALID_REQUEST)
    unchanged(h, mark)


def test_row5_leaderless_partition_can_never_be_altered(make, release):
    """§2.4 row 5 / §2.8: cur.leader = -1 → every requester (even the former leader, still
    registered with its epoch) gets INVALID_REQUEST."""
    h = make(release)
    h.start(1, 2)
    h.create("foo", [[1, 2]])
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    assert (h.state().leader, h.state().isr) == (-1, (1,))
    for requester, isr in ((1, [1]), (2, [1, 2]), (2, [2])):
        rejected(h, h.alter(requester, isr), Error.INVALID_REQUEST)


def test_row6_partition_epoch_behind_is_invalid_update_version(make, release):
    """§2.4 row 6: req.partitionEpoch < cur.partitionEpoch → INVALID_UPDATE_VERSION."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(2, [2, 3], partition_epoch=PE - 1), Error.INVALID_UPDATE_VERSION)
    unchanged(h, mark)


@pytest.mark.parametrize(
    "isr", [[2, -1], [2, 3, 3], [2, 2], [2, 4], [2, 3, 1, 4]], ids=["negative", "dup", "dup-leader", "non-replica",
                                                                   "extra-non-replica"]
)
def test_row7_bad_isr_is_invalid_request(make, release, isr):
    """§2.4 row 7 (`Replicas.validateIsr`): a negative, duplicate or non-replica id (broker 4 is
    registered and active but not a replica) → INVALID_REQUEST."""
    h = prepared(make, release)
    h.start(4)
    mark = h.mark()
    rejected(h, h.alter(2, isr), Error.INVALID_REQUEST)
    unchanged(h, mark)


@pytest.mark.parametrize("isr", [[3, 1], [1], []], ids=["others", "one", "empty"])
def test_row8_isr_without_leader_is_invalid_request(make, release, isr):
    """§2.4 row 8: newIsr not containing cur.leader → INVALID_REQUEST (this is what rejects an
    empty ISR, which passes row 7)."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(2, isr), Error.INVALID_REQUEST)
    unchanged(h, mark)


def recovering_partition(make, release):
    """A RECOVERING partition led by 2 with ISR [2] (unclean ElectLeaders, §4.8):
    replicas [1,2,3]; 1 shrinks to [1], is fenced (leader -1), UNCLEAN elects 2."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3]])
    h.alter(1, [1])
    h.c.fence_stale_broker(1)
    (result,) = h.c.elect_leaders(Election.UNCLEAN, [("foo", 0)])
    assert result.error is Error.NONE
    current = h.state()
    assert (current.leader, current.isr, int(current.leader_recovery_state)) == (2, (2,), 1)
    return h


def test_row9_recovering_with_more_than_one_member(make, release):
    """§2.4 row 9: requested LRS RECOVERING and len(newIsr) > 1 → INVALID_REQUEST (the partition
    is RECOVERING, so row 10 does not apply)."""
    h = recovering_partition(make, release)
    before = h.epochs()
    rejected(h, h.alter(2, [2, 3], lrs=1), Error.INVALID_REQUEST)
    assert h.epochs() == before


def test_row10_recovered_to_recovering(make, release):
    """§2.4 row 10: cur.LRS RECOVERED and requested RECOVERING (single-member ISR, so row 9 does
    not apply) → INVALID_REQUEST; the same request with RECOVERED is accepted."""
    h = prepared(make, release)
    mark = h.mark()
    rejected(h, h.alter(2, [2], lrs=1), Error.INVALID_REQUEST)
    unchanged(h, mark)
    assert h.alter(2, [2], lrs=0).error is Error.NONE


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_row11_ineligible_member_error_by_version(make, release, version):
    """§2.4 row 11 / §7: an ineligible (here fenced) member → INELIGIBLE_REPLICA for v ≥ 2,
    OPERATION_NOT_ATTEMPTED for v0/v1 (3.x only; 4.0+ serves v2–v3, 3.3 serves v0–v2)."""
    h = prepared(make, release)
    if not h.serves(version):
        pytest.skip("version not served by this release (§2.1)")
    h.c.fence_stale_broker(3)
    assert h.state().isr == (2, 1)
    before = h.epochs()
    mark = h.mark()
    expected = Error.INELIGIBLE_REPLICA if version >= 2 else Error.OPERATION_NOT_ATTEMPTED
    rejected(h, h.alter(2, [2, 1, 3], version=version), expected)
    assert h.records_since(mark) == []
    assert h.epochs() == before


# ---------------------------------------------------------------------------------------- §2.4 order


# (id, requester, partition, leader-epoch delta, partition-epoch delta, ISR, LRS, expected)
ORDER_CASES = [
    ("row1>row2 unknown partition, leader epoch ahead", 2, 4, +1, 0, [2, 1], 0, Error.UNKNOWN_TOPIC_OR_PARTITION),
    ("row2>row5 leader epoch ahead, not leader", 1, 0, +1, 0, [2, 1], 0, Error.NOT_CONTROLLER),
    ("row2>row6 leader epoch ahead, partition epoch behind", 2, 0, +1, -1, [2, 1], 0, Error.NOT_CONTROLLER),
    ("row3>row4 leader epoch behind, partition epoch ahead", 2, 0, -1, +1, [2, 1], 0, Error.NOT_CONTROLLER),
    ("row3>row5 partition epoch ahead, not leader", 1, 0, 0, +1, [2, 1], 0, Error.NOT_CONTROLLER),
    ("row4>row5 leader epoch behind, not leader", 1, 0, -1, 0, [2, 1], 0, Error.FENCED_LEADER_EPOCH),
    ("row4>row6 both epochs behind", 2, 0, -1, -1, [2, 1], 0, Error.FENCED_LEADER_EPOCH),
    ("row4>row7 leader epoch behind, duplicate ISR", 2, 0, -1, 0, [2, 2], 0, Error.FENCED_LEADER_EPOCH),
    ("row5>row6 not leader, partition epoch behind", 1, 0, 0, -1, [2, 1], 0, Error.INVALID_REQUEST),
    ("row5>row11 not leader, fenced member", 1, 0, 0, 0, [2, 1, 3], 0, Error.INVALID_REQUEST),
    ("row6>row7 partition epoch behind, duplicate ISR", 2, 0, 0, -1, [2, 1, 1], 0, Error.INVALID_UPDATE_VERSION),
    ("row6>row11 partition epoch behind, fenced member", 2, 0, 0, -1, [2, 1, 3], 0, Error.INVALID_UPDATE_VERSION),
    ("row7>row11 unregistered non-replica", 2, 0, 0, 0, [2, 1, 9], 0, Error.INVALID_REQUEST),
    ("row8>row11 leader missing, fenced member", 2, 0, 0, 0, [1, 3], 0, Error.INVALID_REQUEST),
    ("row9>row11 RECOVERING, two members, one fenced", 2, 0, 0, 0, [2, 3], 1, Error.INVALID_REQUEST),
]


@pytest.mark.parametrize(
    ("requester", "partition", "dle", "dpe", "isr", "lrs", "expected"),
    [case[1:] for case in ORDER_CASES],
    ids=[case[0].split()[0] for case in ORDER_CASES],
)
def test_first_matching_row_wins(make, release, requester, partition, dle, dpe, isr, lrs, expected):
    """§2.4: rows are checked in table order and the first hit wins. In particular the two
    NOT_CONTROLLER checks precede FENCED_LEADER_EPOCH (lower leader epoch + higher partition
    epoch → NOT_CONTROLLER), row 5 precedes row 6, and every structural check (rows 5–10)
    precedes eligibility (row 11). Broker 3 is a fenced replica, broker 9 is unknown."""
    h = prepared(make, release)
    h.c.fence_stale_broker(3)
    assert h.state().isr == (2, 1)
    le, pe = h.epochs()
    mark = h.mark()
    result = h.alter(requester, isr, partition=partition, leader_epoch=le + dle, partition_epoch=pe + dpe, lrs=lrs)
    rejected(h, result, expected, partition=partition)
    assert h.records_since(mark) == []


@pytest.mark.releases(min="3.5")
def test_row10_precedes_row11(make, release):
    """§2.4: row 10 (RECOVERED → RECOVERING) is checked before eligibility: a single-member ISR
    naming the leader with a stale broker epoch (v3, KIP-903) and LRS RECOVERING →
    INVALID_REQUEST, not INELIGIBLE_REPLICA."""
    h = prepared(make, release)
    stale = IsrMember(2, h.epoch(2) + 1)
    rejected(h, h.alter(2, [stale], version=3, lrs=1), Error.INVALID_REQUEST)
    rejected(h, h.alter(2, [stale], version=3, lrs=0), Error.INELIGIBLE_REPLICA)


def test_errors_stay_per_partition(make, release):
    """§2.4 note: errors on a partition do not affect other partitions in the same request —
    foo-0 fails (row 2) while foo-1 and bar-0 in the same request are applied."""
    h = make(release)
    h.start(1, 2, 3)
    h.create("foo", [[1, 2, 3], [1, 2, 3]])
    h.create("bar", [[1, 2, 3]])
    bad = h.item("foo", [1, 2], partition=0, leader_epoch=1)
    good = h.item("foo", [1, 2], partition=1)
    other = h.item("bar", [1, 3, 2])
    response = h.alter_request(1, [h.topic_entry("foo", [bad, good], 2), h.topic_entry("bar", [other], 2)])
    (foo, bar) = response.topics
    assert foo.partitions[0] == AlterPartitionPartitionResult(0, Error.NOT_CONTROLLER)
    assert (foo.partitions[1].error, foo.partitions[1].isr, foo.partitions[1].partition_epoch) == (
        Error.NONE, (1, 2), 1)
    assert (bar.partitions[0].error, bar.partitions[0].isr, bar.partitions[0].partition_epoch) == (
        Error.NONE, (1, 3, 2), 1)
    assert h.state("foo", 0).isr == (1, 2, 3) and h.epochs("foo", 0) == (0, 0)
    assert h.state("foo", 1).isr == (1, 2)
