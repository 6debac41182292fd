"""What a dead broker incarnation sent, in the simulated cluster plug-in: delivered as
`kafka-cluster`'s proxies deliver it (adapters/real_kafka/tcp_proxy.py). A `hold` forwards at the
release what it held of a connection whose client has since closed, so a dead incarnation's held
heartbeat still reaches the controller — and Kafka takes it for the registered broker's
(`ClusterControlManager.checkBrokerEpoch` compares the epoch only; `BrokerHeartbeatManager
.calculateNextBrokerState` unfences once the offset passed the registration record, 4.1.1). A
`cut` closes the connections: lost. A paused (SIGSTOPped) process sends nothing: what the model's
paused broker queued never arrives once it is killed; and a paused broker told to shut down is
resumed first, as kafka-cluster's SIGTERM is preceded by a SIGCONT."""

from __future__ import annotations

import pytest
from isrcheck.adapters.plugins.simulated_cluster import SESSION_TIMEOUT_MS, SimulatedCluster
from isrcheck.reference_impl.rpc import HEARTBEAT


def opened() -> SimulatedCluster:
    target = SimulatedCluster()
    target.open("4.1", {})
    target.execute("create_topic", {"topic": "t", "replicas": [1, 2, 3]})
    return target


def heartbeats_in_flight(target: SimulatedCluster, broker: int, serial: int) -> list[int]:
    return [m.id for m in target.cluster.network.inflight.values()
            if m.kind == HEARTBEAT and m.src == broker and m.src_serial == serial]


@pytest.mark.parametrize("mode", ["hold", "cut"])
def test_a_dead_incarnations_heartbeat_held_by_a_hold_arrives_and_one_held_by_a_cut_does_not(mode: str) -> None:
    target = opened()
    target.execute("net", {"broker": 1, "link": "controller", "mode": mode})
    target.execute("tick", {"ms": SESSION_TIMEOUT_MS + 1000})
    controller = target.cluster.controller
    old = controller.brokers[1]
    assert old.fenced  # its session expired: fenced, its registration kept
    first = target.cluster.brokers[1].serial
    held = heartbeats_in_flight(target, 1, first)
    assert held
    target.execute("restart", {"broker": 1, "lose": "disk"})  # the new incarnation's registration is held too
    assert target.cluster.brokers[1].serial != first
    assert heartbeats_in_flight(target, 1, first) == (held if mode == "hold" else [])
    assert controller.brokers[1].epoch == old.epoch and controller.brokers[1].fenced
    target.execute("net", {"broker": 1, "link": "controller", "mode": "pass"})
    now = controller.brokers[1]
    if mode == "hold":  # the dead incarnation's heartbeat unfenced the old registration; the new one is refused
        assert (now.epoch, now.incarnation, now.fenced) == (old.epoch, old.incarnation, False)
    else:  # nothing of the dead incarnation arrived: the new one registered
        assert now.epoch != old.epoch and now.incarnation != old.incarnation


def test_what_a_paused_incarnation_queued_is_dropped_when_it_is_killed_what_it_sent_before_is_not() -> None:
    target = opened()
    target.execute("net", {"broker": 1, "link": "controller", "mode": "hold"})
    target.execute("tick", {"ms": 1000})
    first = target.cluster.brokers[1].serial
    before_pause = heartbeats_in_flight(target, 1, first)
    target.execute("pause", {"broker": 1})
    target.execute("tick", {"ms": 2000})
    queued = heartbeats_in_flight(target, 1, first)
    assert before_pause and len(queued) > len(before_pause)  # the model's paused broker went on queueing
    target.execute("restart", {"broker": 1, "lose": "disk"})
    assert heartbeats_in_flight(target, 1, first) == before_pause


def test_a_paused_broker_shut_down_is_resumed_first_and_shuts_down_cleanly() -> None:
    """kafka-cluster's clean_restart of a SIGSTOPped broker sends SIGCONT, then SIGTERM
    (`ProcessNode.terminate`): a controlled shutdown the controller accepts, not a kill."""
    target = opened()
    target.execute("pause", {"broker": 1})
    target.execute("tick", {"ms": 1000})
    serial = target.cluster.brokers[1].serial
    target.execute("shutdown", {"broker": 1})
    assert not target.cluster.alive(1)
    assert target.cluster.controlled_shutdowns.get(1) == serial
