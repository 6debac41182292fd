"""Broker processes (controller.md §4 seen from the broker), crashes and data loss, metadata lag,
controller fail-over with a zombie, and the network's hold / drop / duplicate."""

from __future__ import annotations

from cluster_helpers import TOPIC, TP, leader_partition, new_cluster
from isrcheck.reference_impl.cluster import Cluster
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import (
    AlterPartitionItem,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopic,
    IsrMember,
)
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.rpc import (
    ALTER_PARTITION,
    ALTER_PARTITION_RESPONSE,
    FETCH,
    HEARTBEAT,
    METADATA,
    ZOMBIE_NODE,
)


def test_start_registers_and_unfences() -> None:
    """controller.md §4.1/§4.2: each broker registers (broker epoch = log offset) and is unfenced
    once its metadata has caught up with its registration."""
    cluster = new_cluster(assignment=None)
    for broker in (1, 2, 3):
        registration = cluster.controller.broker(broker)
        assert registration is not None and not registration.fenced
        assert cluster.brokers[broker].epoch == registration.epoch


def test_topic_creation_reaches_every_replica() -> None:
    """leader.md §10: the metadata log makes broker 1 the leader and 2, 3 followers."""
    cluster = new_cluster()
    roles = {b: cluster.brokers[b].partitions[TP].role for b in (1, 2, 3)}
    assert roles == {1: "leader", 2: "follower", 3: "follower"}
    assert all(cluster.brokers[b].cache.offset == len(cluster.controller.log) for b in (1, 2, 3))


def test_crash_restart_is_a_new_incarnation_after_the_session() -> None:
    """controller.md §4.1: a new incarnation is refused while the old session is valid, then
    registers with a new broker epoch; the old one was fenced and left the ISR."""
    cluster = new_cluster(session_ms=9000)
    old_epoch = cluster.brokers[3].epoch
    cluster.crash(3)
    process = cluster.restart(3)
    cluster.settle()
    assert process.epoch == -1 and process.registration_error is not None
    assert process.registration_error.name == "DUPLICATE_BROKER_REGISTRATION"
    cluster.advance(12_000)
    assert process.epoch > old_epoch
    assert cluster.controller.partition(*TP).isr in ((1, 2), (1, 2, 3))
    cluster.advance(12_000)
    assert cluster.controller.partition(*TP).isr == (1, 2, 3)


def test_crash_losing_the_disk_or_unflushed_data() -> None:
    """`crash` with lose=disk empties the broker's disk; lose=unflushed keeps what was flushed."""
    cluster = new_cluster()
    cluster.produce(TOPIC, 0, -1, 3)
    cluster.advance(1000)
    cluster.flush(2)
    cluster.produce(TOPIC, 0, -1, 2)
    cluster.advance(1000)
    cluster.crash(2, "unflushed")
    cluster.crash(3, "disk")
    assert cluster.disks[2].logs[TP].leo == 3
    assert TP not in cluster.disks[3].logs
    assert [(loss.broker, loss.kind) for loss in cluster.data_loss] == [(2, "unflushed"), (3, "disk")]


def test_a_restarted_broker_does_not_act_on_its_past() -> None:
    """A new incarnation applies metadata only once registered, and touches partitions only once its
    cache has reached its own registration (KRaft's initial catch-up)."""
    cluster = new_cluster()
    cluster.crash(1)
    process = cluster.restart(1)
    cluster.sync_metadata(1, 9)
    assert process.partitions == {} and process.cache.offset == 0
    cluster.advance(12_000)
    assert process.epoch > 0 and process.partitions[TP].role == "follower"
    assert leader_partition(cluster).broker_id == 2


def test_metadata_lag_and_sync() -> None:
    """A lagging broker has applied the log only up to an offset; `sync_metadata` moves it."""
    cluster = new_cluster()
    cluster.lag_metadata(2)
    before = cluster.brokers[2].cache.offset
    cluster.create_topic("bar", [[1, 2, 3]])
    cluster.settle()
    assert cluster.brokers[2].cache.offset == before
    assert any(m.kind == METADATA and m.dst == 2 for m in cluster.network.inflight.values())
    cluster.sync_metadata(2, before + 1)
    assert cluster.brokers[2].cache.offset == before + 1
    cluster.sync_metadata(2)
    assert cluster.brokers[2].cache.offset == len(cluster.controller.log)
    assert ("bar", 0) in cluster.brokers[2].partitions


def test_session_expiry_fences_a_silent_broker() -> None:
    """controller.md §4.3: held heartbeats → fenced after the session timeout, out of the ISR; when
    they flow again the broker is unfenced (and rejoins through the leader)."""
    cluster = new_cluster(session_ms=9000, lag_ms=10_000)
    cluster.hold(Selector(HEARTBEAT, 3))
    cluster.advance(10_000)
    assert cluster.controller.broker(3).fenced and cluster.controller.partition(*TP).isr == (1, 2)
    cluster.release()
    cluster.advance(5000)
    assert not cluster.controller.broker(3).fenced and cluster.controller.partition(*TP).isr == (1, 2, 3)


def test_controlled_shutdown_then_restart_is_clean() -> None:
    """controller.md §4.6/§4.7: the broker leaves the ISRs, stops after SHUTDOWN_NOW with its logs
    flushed, and re-registers with PreviousBrokerEpoch."""
    cluster = new_cluster()
    cluster.produce(TOPIC, 0, -1, 2)
    cluster.advance(1000)
    epoch = cluster.brokers[3].epoch
    cluster.controlled_shutdown(3)
    cluster.advance(3000)
    assert cluster.brokers[3].status == "stopped"
    assert cluster.disks[3].clean_shutdown_epoch == epoch and cluster.disks[3].logs[TP].flushed == 2
    cluster.restart(3)
    cluster.advance(12_000)  # 4.x: the old incarnation's session must end first (controller.md §4.1)
    assert cluster.controller.partition(*TP).isr == (1, 2, 3)


def test_zombie_controller_answers_until_not_controller() -> None:
    """§12 / bugs.md B21: after a fail-over with a zombie, AlterPartition goes to the zombie, which
    cannot commit: NOT_CONTROLLER makes the broker rediscover the active controller and resend."""
    cluster = new_cluster(lag_ms=10_000)
    cluster.fail_over_controller(zombie=True)
    assert cluster.brokers[1].manager.route == ZOMBIE_NODE
    cluster.hold(Selector(FETCH, 3))
    cluster.hold(Selector(ALTER_PARTITION))
    cluster.produce(TOPIC, 0, 1, 1)
    cluster.advance(16_000)
    held = [m for m in cluster.network.inflight.values() if m.kind == ALTER_PARTITION]
    assert [m.dst for m in held] == [ZOMBIE_NODE]
    cluster.release(Selector(ALTER_PARTITION))
    cluster.settle()
    assert cluster.brokers[1].manager.route == "controller"
    assert cluster.controller.partition(*TP).isr == (1, 2)
    assert leader_partition(cluster).state.isr == (1, 2)


def test_a_later_zombie_answers_from_its_own_state() -> None:
    """The cluster answers each distinct request to a zombie once; a zombie left by a later
    fail-over froze a later state, and must not be handed the first one's answers. The same
    proposal (partition epoch P) is valid for the first zombie (NOT_CONTROLLER: it cannot commit)
    and stale for the second, frozen after an ISR change moved the epoch past P."""
    cluster = new_cluster()
    epoch = cluster.controller.partition(*TP).partition_epoch
    leader_epoch = cluster.controller.partition(*TP).leader_epoch
    members = tuple(IsrMember(b, cluster.controller.broker(b).epoch) for b in (1, 2))
    topic_id = next(key for key, name in cluster.controller.topic_names.items() if name == TOPIC)
    proposal = AlterPartitionRequest(3, 1, cluster.controller.broker(1).epoch, (
        AlterPartitionTopic((AlterPartitionItem(0, leader_epoch, epoch, members),), topic_id=topic_id),))

    def zombie_answer() -> AlterPartitionResponse:
        cluster.hold(Selector(ALTER_PARTITION_RESPONSE))
        cluster.deliver(cluster.send(ALTER_PARTITION, 1, ZOMBIE_NODE, proposal))
        reply = next(m for m in cluster.network.inflight.values() if m.kind == ALTER_PARTITION_RESPONSE)
        del cluster.network.inflight[reply.id]
        cluster.release(Selector(ALTER_PARTITION_RESPONSE))
        assert isinstance(reply.payload, AlterPartitionResponse)
        return reply.payload

    cluster.fail_over_controller(zombie=True)
    assert zombie_answer().error is Error.NOT_CONTROLLER
    cluster.retire_zombie()
    cluster.hold(Selector(FETCH, 3))
    cluster.produce(TOPIC, 0, 1, 1)
    cluster.advance(16_000)
    assert cluster.controller.partition(*TP).isr == (1, 2)
    cluster.fail_over_controller(zombie=True)
    answer = zombie_answer()
    assert answer.error is Error.NONE
    assert [p.error for t in answer.topics for p in t.partitions] == [Error.INVALID_UPDATE_VERSION]


def test_drop_hold_duplicate() -> None:
    """The network: held messages wait; a dropped fetch is retried after the back-off; a duplicated
    fetch response is ignored (correlation ids)."""
    cluster = new_cluster()
    cluster.hold(Selector(FETCH, 2))
    cluster.produce(TOPIC, 0, 1, 1)
    cluster.advance(600)
    held = [m for m in cluster.network.inflight.values() if m.kind == FETCH and m.src == 2]
    assert len(held) == 1
    cluster.drop(held[0])
    cluster.release()
    cluster.advance(1500)
    assert cluster.brokers[2].partitions[TP].log.leo == 1
    cluster.produce(TOPIC, 0, 1, 1)
    cluster.hold(Selector("FetchResponse", 1, 2))
    cluster.advance(600)
    response = next(m for m in cluster.network.inflight.values() if m.kind == "FetchResponse" and m.dst == 2)
    cluster.duplicate(response)
    cluster.release()
    cluster.settle()
    assert cluster.brokers[2].partitions[TP].log.leo == 2


def test_settle_and_advance_fire_timers_in_order() -> None:
    """The clock: `advance` fires timers in (due, sequence) order and never goes backwards."""
    cluster: Cluster = new_cluster()
    times = []
    before = cluster.now_ms
    for _ in range(5):
        cluster.fire_next_timer()
        times.append(cluster.now_ms)
    assert times == sorted(times) and times[0] >= before
