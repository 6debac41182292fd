"""The simulated cluster plug-in (adapters/plugins/simulated_cluster.py): the reference model behind
the black-box interface, and its deposed-controller variant — the interleaving that loses with
the changed rule and not without it, and the campaigns that reach it with the `deposed_controller`
composite fault and without it (bench/deposed_controller.py measures the runs on three seeds)."""

from __future__ import annotations

from typing import Any

import pytest
from isrcheck.adapters.plugins.simulated_cluster import DeposedControllerCluster, SimulatedCluster
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign
from isrcheck.conformance.engine.cluster_history import run_history
from isrcheck.conformance.generator import black_box_faults
from isrcheck.conformance.generator.black_box_faults import DEPOSED_CONTROLLER
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.catalogue import judge_views

CONFIG = HistoryConfig(session_timeout_ms=6000, min_insync_replicas=2)
DEPOSED = "isrcheck.adapters.plugins.simulated_cluster:DeposedControllerCluster"
SOUND = "isrcheck.adapters.plugins.simulated_cluster:SimulatedCluster"
TOPIC = [("create_topic", {"topic": "t", "replicas": [1, 2], "configs": {"min.insync.replicas": "1"}}),
         ("produce", {"topic": "t", "records": 2, "acks": "all"})]
PRIMITIVE = [
    ("fail_over_controller", {}),
    ("net", {"broker": 1, "link": "replication", "mode": "cut"}),
    ("tick", {"ms": 5000}),
    ("produce", {"topic": "t", "records": 3, "acks": "all"}),
    ("crash", {"broker": 1}),
    ("tick", {"ms": 9000}),
]


def judged(target: Any, steps: list[tuple[str, dict[str, Any]]], release: str = "3.9") -> tuple[list[Any], set[str]]:
    history, violations = run_history(target, release, steps, CONFIG)
    return history, {v.property for v in violations}


@pytest.mark.parametrize("release", ["3.9", "4.1"])
def test_a_deposed_controllers_election_loses_what_the_leader_alone_acknowledged(release: str) -> None:
    """Leader 1 of [1, 2] stops serving 2 after the fail-over; the ISR shrinks to {1}; 3 records
    are acknowledged; 1 crashes. The reference leaves the partition without a leader until 1 is
    back (no loss); the deposed controller, whose ISR still holds 2, elects 2."""
    history, flagged = judged(SimulatedCluster(), TOPIC + PRIMITIVE, release)
    assert flagged == set()
    views = [e["view"] for e in history if e["type"] == "observe"]
    assert [101] in [v["isr"] for v in views]  # the shrink happened: the acks came from the leader alone
    assert views[-1]["hw"] == 5
    history, flagged = judged(DeposedControllerCluster(), TOPIC + PRIMITIVE, release)
    assert flagged == {"P-ACK", "P-HWC"}
    assert any(e["type"] == "observe" and e["view"]["leader"] == 102 and e["view"]["isr"] == [102] for e in history)


def test_the_composite_fault_alone_reaches_the_loss_and_only_with_the_changed_rule() -> None:
    step = (DEPOSED_CONTROLLER, {"topic": "t", "records": 2, "leader_fault": "crash", "after_ms": 9000})
    history, flagged = judged(DeposedControllerCluster(), [*TOPIC, step])
    ops = [e["op"] for e in history if e["type"] == "op" and e["args"].get("by") == DEPOSED_CONTROLLER]
    assert ops == ["fail_over_controller", "net", "produce", "wait_isr", "produce", "crash", "tick"]
    assert "P-ACK" in flagged
    assert judged(SimulatedCluster(), [*TOPIC, step])[1] == set()
    restart = (DEPOSED_CONTROLLER, {**step[1], "leader_fault": "clean_restart"})
    assert "P-ACK" in judged(DeposedControllerCluster(), [*TOPIC, restart])[1]  # controlled shutdown: at once


def test_a_follower_restarted_since_the_fail_over_is_not_elected_by_the_deposed_controller() -> None:
    """The deposed controller knows the broker epochs it had: 2 restarted (a new epoch) is not
    its to elect, so the same loss needs 2 to stay registered."""
    steps = [*TOPIC, PRIMITIVE[0], ("restart", {"broker": 2, "lose": "none"}), *PRIMITIVE[1:]]
    assert judged(DeposedControllerCluster(), steps)[1] == set()


def campaign(adapter: str, seed: int, runs: int) -> Any:
    return run_campaign(CampaignConfig(adapter=adapter, level="cluster", examples=runs, steps=50, seed=seed,
                                       release="3.9", stop_at_first=False))


def test_a_campaign_finds_the_deposed_controller_with_the_composite_and_not_without(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 1001, 40 runs (bench/deposed_controller.py: first finding at run 3 with the composite,
    185 without it)."""
    found = campaign(DEPOSED, 1001, 40)
    assert found.runs == 40 and found.found
    assert {s.split(":")[2] for s in found.signatures} & {"P-ACK", "P-HWC"}
    assert not campaign(SOUND, 1001, 40).found  # the same runs on the sound cluster
    monkeypatch.setattr(black_box_faults, "DEPOSED_CONTROLLER_WEIGHT", 0)
    off = campaign(DEPOSED, 1001, 40)
    assert off.runs == 40 and not off.found


class KillsRecorded(SimulatedCluster):
    """The sound simulated cluster, noting every broker it SIGKILLs."""

    def __init__(self) -> None:
        super().__init__()
        self.killed: list[int] = []

    def crash(self, broker: int, lose: str = "none") -> None:
        self.killed.append(broker)
        super().crash(broker, lose)


def test_a_controlled_shutdown_waiting_on_a_broker_cut_from_the_controller_is_not_killed() -> None:
    """Broker 1's controller link is cut, then 2 is shut down cleanly (clean_restart). The
    controller lets 2 stop only once every other active broker's metadata reached 2's
    controlled-shutdown offset (`BrokerHeartbeatManager.calculateNextBrokerState`, 4.1.1): 1
    counts as active until it is fenced, a session timeout (6 s) after its last heartbeat. The
    real broker waits for that and stops cleanly well within kafka-cluster's 60 s terminate
    timeout; the model killed it after 6 s — an unclean shutdown that takes it out of the ELR
    (SimulatedCluster 4.1 run af3c0495-w0-017160 lost acknowledged records that way)."""
    target = KillsRecorded()
    target.open("4.1", {})
    try:
        target.execute("create_topic", {"topic": "t", "replicas": [2, 1, 3]})
        epoch_before = target.cluster.controller.brokers[2].epoch
        target.execute("net", {"broker": 1, "link": "controller", "mode": "cut"})
        assert target.execute("clean_restart", {"broker": 2}) == {}  # not `killed`
        assert target.cluster.controller.brokers[2].epoch != epoch_before  # 2 did restart
        assert target.cluster.controller.brokers[1].fenced  # what 2's shutdown waited for
        assert target.killed == []
    finally:
        target.close()


KILLED_RESTART = [
    ("create_topic", {"topic": "t", "replicas": [2, 1, 3], "configs": {}}),
    ("produce", {"topic": "t", "records": 4, "acks": "all"}),
    ("clean_restart", {"broker": 1}),
    ("crash", {"broker": 2}),
    ("tick", {"ms": 6000}),
    ("net", {"broker": 1, "link": "controller", "mode": "hold"}),
    ("clean_restart", {"broker": 1}),
    ("restart", {"broker": 3, "lose": "disk"}),
]
"""SimulatedCluster 4.1 run 9ca63220-w0-014410 (an unseeded 600 s campaign's one flagged run of
18,030), shrunk from 83 operations: 1's clean restart while its controller link is held never
gets the controller's approval and is killed after the terminate timeout."""


def test_a_clean_restart_killed_for_hanging_says_so_and_is_judged_as_unclean() -> None:
    """The first clean restart completes (`{}`); the second, its controller link held, is killed
    (`{"killed": true}`): 1, fenced meanwhile into the ELR, re-registers as an unclean shutdown
    and leaves it, 3 — the last known leader — restarts empty and is elected at the heal: every
    copy went down uncleanly or was wiped, nothing is promised. The same history with the
    result as it was recorded before (no `killed`) is judged a loss — the false alarm. Without
    the held link the restart completes, 1 keeps its ELR place and leads with the records."""
    elr = HistoryConfig(session_timeout_ms=6000, min_insync_replicas=2, elr=1)
    target = KillsRecorded()
    history, violations = run_history(target, "4.1", KILLED_RESTART, elr)
    assert [v.property for v in violations] == []
    restarts = [e for e in history if e["type"] == "op" and e["op"] == "clean_restart"]
    assert [e["result"] for e in restarts] == [{}, {"killed": True}]
    assert target.killed.count(1) == 1
    views = [e["view"] for e in history if e["type"] == "observe"]
    assert views[-1]["leader"] == 103 and views[-1]["hw"] == 0  # the records are gone
    unreported = [{**e, "result": {}} if e in restarts else e for e in history]
    assert "P-ACK" in {v.property for v in judge_views(unreported, elr)}
    held_link = KILLED_RESTART.index(("net", {"broker": 1, "link": "controller", "mode": "hold"}))
    history, violations = run_history(SimulatedCluster(), "4.1", KILLED_RESTART[:held_link] +
                                      KILLED_RESTART[held_link + 1:], elr)
    assert [v.property for v in violations] == []
    assert all(e["result"] == {} for e in history if e["type"] == "op" and e["op"] == "clean_restart")
    assert [e["view"]["hw"] for e in history if e["type"] == "observe"][-1] == 4
