"""The black-box cluster properties, each shown failing on a history built to break it and
holding on the honest version of the same history."""

from __future__ import annotations

from typing import Any

from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.catalogue import judge_views as check_history

CONFIG = HistoryConfig(session_timeout_ms=6000, settle_ms=4000, min_insync_replicas=2)


class Builder:
    """Writes a history the way the engine does (op entries, observe entries, times)."""

    def __init__(self) -> None:
        self.history: list[dict[str, Any]] = []
        self.t = 0.0

    def op(self, op: str, args: dict[str, Any], result: dict[str, Any] | None = None, took: float = 0.1) -> None:
        self.history.append({"type": "op", "i": len(self.history), "t": self.t, "op": op, "args": args,
                             "result": result or {}, "t_end": self.t + took})
        self.t += took

    def see(self, leader: int, isr: list[int], hw: int | None, replicas: list[int] | None = None,
            topic: str = "t", brokers: list[int] | None = None) -> None:
        view = {"exists": True, "leader": leader, "isr": isr, "replicas": replicas or [101, 102, 103],
                "leader_epoch": 0, "hw": hw, **({"brokers": brokers} if brokers is not None else {})}
        self.history.append({"type": "observe", "i": len(self.history), "t": self.t, "partition": f"{topic}-0",
                             "view": view})

    def wait(self, seconds: float) -> None:
        self.op("tick", {"ms": int(seconds * 1000)}, took=seconds)


def properties(history: list[dict[str, Any]]) -> list[str]:
    return [v.property for v in check_history(history, CONFIG)]


def acked_then_read(read_back: dict[str, str]) -> list[dict[str, Any]]:
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(101, [101, 102, 103], 0)
    b.op("produce", {"topic": "t", "records": 2, "acks": "all"},
         {"status": "acked", "offsets": [0, 1], "values": ["a", "b"]})
    b.see(101, [101, 102, 103], 2)
    b.op("heal", {"timeout_ms": 1000}, {"settled": True})
    b.see(101, [101, 102, 103], 2)
    b.op("consume", {"topic": "t"}, {"records": {"0": read_back}})
    return b.history


def test_p_ack_holds_when_every_acknowledged_record_reads_back() -> None:
    assert properties(acked_then_read({"0": "a", "1": "b"})) == []


def test_p_ack_fails_on_a_lost_or_replaced_record() -> None:
    assert properties(acked_then_read({"0": "a"})) == ["P-ACK"]
    assert properties(acked_then_read({"0": "a", "1": "x"})) == ["P-ACK"]


def test_p_ack_ignores_acks_1_and_records_whose_whole_isr_lost_its_disk() -> None:
    b = Builder()
    b.op("create_topic", {"topic": "t", "configs": {"min.insync.replicas": "1"}})
    b.see(101, [101], 0)
    b.op("produce", {"topic": "t", "acks": "1"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [1], "values": ["b"]})
    b.see(101, [101], 2)
    b.op("restart", {"broker": 1, "lose": "disk"})  # the only in-sync copy is gone: nothing is promised
    b.op("heal", {})
    b.see(101, [101], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    assert "P-ACK" not in properties(b.history)


def test_p_ack_judges_a_record_whose_isr_kept_a_copy_although_another_broker_lost_its_disk() -> None:
    """KAFKA-14139's shape: acknowledged with ISR {1}; broker 2 (not in that ISR) loses its disk."""
    b = Builder()
    b.op("create_topic", {"topic": "t", "replicas": [1, 2], "configs": {"min.insync.replicas": "1"}})
    b.see(101, [101], 0, [101, 102])
    b.op("produce", {"topic": "t"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(101, [101], 1, [101, 102])
    b.op("restart", {"broker": 2, "lose": "disk"})
    b.see(101, [101, 102], 1, [101, 102])
    b.op("crash", {"broker": 1})
    b.see(102, [102], 0, [101, 102])
    b.op("heal", {})
    b.see(102, [102, 101], 0, [101, 102])
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    assert properties(b.history) == ["P-ACK", "P-HWC"]  # the acknowledgement, then the decline


def last_member_wiped_while_the_other_is_down(down: str = "crash", min_isr: int | None = None) -> list[dict[str, Any]]:
    """Acknowledged with ISR {2, 1}; 1 goes down (`down`: crash, pause or shutdown; its copy intact,
    not yet fenced when observed), 2 restarts with an empty log: fenced, 1 leaves the ISR and 2 —
    empty — is the ISR member left, the leader (a simulated 3.9 cluster lost records this way,
    SimulatedCluster seed 1 run 280). `min_isr`: the topic's min.insync.replicas, if set."""
    b = Builder()
    b.op("create_topic", {"topic": "t", **({"configs": {"min.insync.replicas": str(min_isr)}} if min_isr else {})})
    b.see(102, [102, 101], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0, 1], "values": ["a", "b"]})
    b.see(102, [102, 101], 2)
    b.op(down, {"broker": 1})
    b.see(102, [102, 101], None)
    b.op("restart", {"broker": 2, "lose": "disk"})
    b.see(102, [102], 0)
    b.op("heal", {})
    b.see(102, [102, 101, 103], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


ELR = HistoryConfig(elr=1)


def test_a_disk_loss_of_the_last_live_isr_member_is_outside_the_guarantee_without_elr() -> None:
    """Two failures against min.insync.replicas 2: without ELR nothing is promised after it. A
    member down that is not in the ISR, or a disk loss with another ISR member up, exempts nothing."""
    history = last_member_wiped_while_the_other_is_down()
    assert properties(history) == []
    up = [e for e in history if not (e["type"] == "op" and e["op"] == "crash")]  # 1 stays up: a copy survives
    assert properties(up) == ["P-ACK", "P-ACK", "P-HWC"]
    crash = next(n for n, e in enumerate(history) if e["type"] == "op" and e["op"] == "crash")
    resumed = [*history[:crash + 1], {**history[crash], "op": "resume"}, *history[crash + 1:]]
    assert properties(resumed) == []  # SIGCONT does not bring a crashed broker back
    assert properties(last_member_wiped_while_the_other_is_down("pause")) == []


def test_with_elr_only_a_member_that_keeps_its_registration_keeps_the_copy_electable() -> None:
    """With ELR on (4.1.1) the fenced member moves to the ELR; a paused or cleanly shut down one
    comes back with its registration and is elected from it, so a loss is judged. A crashed one
    registers as an unclean shutdown and leaves the ELR (`ClusterControlManager.registerBroker`
    → `ReplicationControlManager.handleBrokerShutdown`), and the last-known-leader election may
    take the emptied one (SimulatedCluster 4.1 seed 1 runs 280, 450, 533): nothing is promised."""
    judged = ["P-ACK", "P-ACK", "P-HWC"]  # both records, then the decline
    for down in ("pause", "shutdown"):
        assert [v.property for v in check_history(last_member_wiped_while_the_other_is_down(down), ELR)] == judged
    assert [v.property for v in check_history(last_member_wiped_while_the_other_is_down("crash"), ELR)] == []


def test_with_elr_and_min_isr_1_the_elr_is_empty_so_any_down_member_exempts() -> None:
    """min.insync.replicas 1: an ISR of one is not below it, so the ELR stays empty
    (`PartitionChangeBuilder.maybePopulateTargetElr`, 4.1.1) and the emptied member is the ISR
    left, as without ELR (SimulatedCluster 4.1 seed 1 run 554)."""
    paused = last_member_wiped_while_the_other_is_down("pause", min_isr=1)
    assert [v.property for v in check_history(paused, ELR)] == []
    assert [v.property for v in check_history(last_member_wiped_while_the_other_is_down("pause", min_isr=2), ELR)] \
        == ["P-ACK", "P-ACK", "P-HWC"]


def stale_heartbeat_history(release: str = "pass", down: str = "crash") -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 seed 1 run 54's shape: acknowledged with ISR {2, 1}; 1's controller
    link held; 1 leaves the ISR (to the ELR) and restarts with an empty log while held (its new
    registration held too); 2 — the last ISR member — goes down (`down`); the hold ends
    (`release`: the link's mode) and everything heals; 1 leads, empty."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(102, [102, 101], 0)
    b.op("net", {"broker": 1, "link": "controller", "mode": "hold"})
    b.see(102, [102, 101], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0, 1], "values": ["a", "b"]})
    b.see(102, [102, 101], 2)
    b.wait(7)
    b.see(102, [102], 2)
    b.op("restart", {"broker": 1, "lose": "disk"})
    b.see(102, [102], 2)
    b.op(down, {"broker": 2})
    b.see(102, [102], None)
    b.op("net", {"broker": 1, "link": "controller", "mode": release})
    b.op("heal", {})
    b.see(101, [101, 102, 103], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


def test_with_elr_a_dead_incarnations_held_heartbeat_exempts_only_when_the_copies_went_down_uncleanly() -> None:
    """The hold ends: the dead incarnation's held heartbeat unfences its old registration, still
    in the ELR, and it is elected (`BrokerHeartbeatManager.calculateNextBrokerState`, 4.1.1). The
    last ISR member crashed (an unclean shutdown, out of the ELR at its registration): every
    replica that could hold the records went down uncleanly or lost its disk, nothing is promised
    (so also when a cut kept the heartbeat from arriving). It paused instead (it keeps its
    registration and its ELR place): Kafka's own loss within its guarantee, judged. Without ELR
    2 stays the ISR's last member, elected when back: judged."""
    judged = ["P-ACK", "P-ACK", "P-HWC"]
    assert [v.property for v in check_history(stale_heartbeat_history(), ELR)] == []
    assert [v.property for v in check_history(stale_heartbeat_history(release="cut"), ELR)] == []
    assert [v.property for v in check_history(stale_heartbeat_history(down="pause"), ELR)] == judged
    assert properties(stale_heartbeat_history()) == judged


def test_with_elr_a_killed_paused_member_leaves_the_elr_too() -> None:
    """SimulatedCluster 4.1 seed 1 run 870's shape: the leader 1 pauses (fenced, to the ELR),
    the other member 3 restarts with an empty log (judged so far: 1 keeps its ELR place), then
    1 is restarted — a SIGKILL, an unclean shutdown: out of the ELR, the last known leader 3 is
    elected, empty. From that restart nothing is promised; a crash-free history is still judged."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(101, [101, 103], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(101, [101, 103], 1)
    b.op("pause", {"broker": 1})
    b.wait(7)
    b.see(103, [103], 1)
    b.op("restart", {"broker": 3, "lose": "disk"})
    b.see(-1, [], None)
    killed = len(b.history)
    b.op("restart", {"broker": 1})
    b.see(103, [103, 101], 0)
    b.op("heal", {})
    b.see(103, [103, 101, 102], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    assert [v.property for v in check_history(b.history, ELR)] == []
    resumed = [*b.history[:killed], {**b.history[killed], "op": "resume"}, *b.history[killed + 1:]]
    assert [v.property for v in check_history(resumed, ELR)] == ["P-ACK", "P-HWC"]


def elr_member_restarted_then_the_last_isr_member_wiped(killed: bool) -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 run 9ca63220-w0-014410's shape, shrunk: acknowledged with ISR {2, 1, 3};
    2 crashes and is fenced; 1 is restarted "cleanly" — with `killed`, its controller link held, so
    its controlled shutdown never completed and kafka-cluster's terminate timeout SIGKILLed it
    (fenced meanwhile, 1 left the ISR below min.insync.replicas: to the ELR); 3, the last ISR
    member, restarts with an empty log; healed, 3 is elected as the last known leader, empty."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(102, [102, 101, 103], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0, 1], "values": ["a", "b"]})
    b.see(102, [102, 101, 103], 2)
    b.op("crash", {"broker": 2})
    b.wait(6)
    b.see(103, [103, 101], 2)
    if killed:
        b.op("net", {"broker": 1, "link": "controller", "mode": "hold"})
        b.see(103, [103, 101], 2)
    b.op("clean_restart", {"broker": 1}, {"killed": True} if killed else {}, took=60 if killed else 1)
    b.see(103, [103], 2)
    b.op("restart", {"broker": 3, "lose": "disk"})
    b.see(-1, [], None)
    b.op("heal", {})
    b.see(103, [103, 101, 102], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


def test_with_elr_a_clean_restart_killed_for_hanging_is_an_unclean_shutdown() -> None:
    """A shutdown or clean restart whose result says `killed` did not complete its controlled
    shutdown: the broker wrote no clean-shutdown file, registers with PreviousBrokerEpoch -1 and
    `ClusterControlManager.registerBroker` runs the unclean path of `ReplicationControlManager
    .handleBrokerShutdown`, out of the ELR (4.1.1) — like a crash. With every other copy wiped or
    crashed nothing is promised. A clean restart that completed keeps 1's ELR place, and 1 with
    its copy is electable: the loss is judged."""
    assert [v.property for v in check_history(elr_member_restarted_then_the_last_isr_member_wiped(True), ELR)] == []
    assert [v.property for v in check_history(elr_member_restarted_then_the_last_isr_member_wiped(False), ELR)] \
        == ["P-ACK", "P-ACK", "P-HWC"]
    killed_down = last_member_wiped_while_the_other_is_down("shutdown")
    shutdown = next(n for n, e in enumerate(killed_down) if e["type"] == "op" and e["op"] == "shutdown")
    killed_down[shutdown] = {**killed_down[shutdown], "result": {"killed": True}}
    assert [v.property for v in check_history(killed_down, ELR)] == []  # as `crash` in the test above
    assert [v.property for v in check_history(last_member_wiped_while_the_other_is_down("shutdown"), ELR)] \
        == ["P-ACK", "P-ACK", "P-HWC"]


def test_p_hwc_fails_when_the_consumer_visible_high_watermark_goes_back() -> None:
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    for hw in (0, 3, 3, 5, None, 5):
        b.see(101, [101, 102, 103], hw)
    assert properties(b.history) == []
    b.see(102, [102, 103], 4)
    assert properties(b.history) == ["P-HWC"]


def test_p_elig_fails_on_a_broker_down_past_the_session_timeout_left_in_the_isr() -> None:
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.op("crash", {"broker": 3})
    b.wait(5)
    b.see(101, [101, 102, 103], 0)  # within the session timeout: allowed
    assert properties(b.history) == []
    b.wait(6)
    b.see(101, [101, 102], 0)  # fenced and removed
    assert properties(b.history) == []
    b.see(101, [101, 102, 103], 0)  # 11 s down (> 6 + 4): still in the ISR
    assert properties(b.history) == ["P-ELIG"]


def test_p_elig_allows_the_last_member_and_judges_no_view_while_a_controller_link_is_cut() -> None:
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.op("crash", {"broker": 1})
    b.wait(12)
    b.see(-1, [101], 0)  # last member: Kafka keeps it, leaderless (controller.md §4.4)
    assert properties(b.history) == []
    b.op("net", {"broker": 2, "link": "controller", "mode": "cut"})
    b.wait(12)
    b.see(102, [102, 101], 0)  # may be broker 2's stale Metadata: not judged while its link is cut
    assert properties(b.history) == []
    b.op("net", {"broker": 2, "link": "controller", "mode": "pass"})
    b.wait(5)
    b.see(102, [102, 101], 0)
    assert properties(b.history) == ["P-ELIG"]


def test_leader_in_isr() -> None:
    b = Builder()
    b.see(101, [101, 102], 0)
    b.see(-1, [102], 0)  # no leader: nothing to check
    assert properties(b.history) == []
    b.see(103, [101, 102], 0)
    assert properties(b.history) == ["LeaderInIsr"]


def test_p_live_after_heal() -> None:
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(-1, [101], 0)  # before the heal: allowed
    b.op("heal", {}, {"settled": False})
    b.see(101, [101, 102], 0)
    assert properties(b.history) == []
    b.op("heal", {}, {"settled": False})
    b.see(101, [101], 0)  # min.insync.replicas=2 not reached
    assert properties(b.history) == ["P-LIVE"]
    b.op("heal", {}, {"settled": False})
    b.see(-1, [101], 0)
    assert properties(b.history) == ["P-LIVE"]


def test_p_elig_is_not_judged_while_a_brokers_metadata_is_held_back() -> None:
    """Metadata may come from the broker whose metadata log is held: it can be stale."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.op("pause", {"broker": 3})
    b.op("hold_api", {"broker": 1, "api": "Fetch"})
    b.wait(12)
    b.see(101, [101, 102, 103], 0)
    assert properties(b.history) == []
    b.op("release_api", {"broker": 1, "api": "Fetch"})
    b.see(101, [101, 102, 103], 0)  # within the settle time after the release
    assert properties(b.history) == []
    b.wait(5)
    b.see(101, [101, 102, 103], 0)
    assert properties(b.history) == ["P-ELIG"]


def test_p_elig_judges_a_fenced_broker_by_the_metadata_answers_own_broker_list_not_by_the_clock() -> None:
    """A KRaft Metadata answer lists only unfenced brokers, from the same image as the ISR: a down
    broker missing from it yet in an ISR with others is a violation 1 s after the crash — and a
    broker still listed is P-ELIG-clean however long it has been down (that is P-FENCE's)."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(101, [101, 102, 103], 0, brokers=[101, 102, 103])
    b.op("crash", {"broker": 3})
    b.wait(1)
    b.see(101, [101, 102], 0, brokers=[101, 102])  # fenced and removed together: allowed
    assert properties(b.history) == []
    b.see(101, [101, 102, 103], 0, brokers=[101, 102])  # fenced, still a member
    assert properties(b.history) == ["P-ELIG"]

    late = Builder()
    late.op("create_topic", {"topic": "t"})
    late.see(101, [101, 102, 103], 0, brokers=[101, 102, 103])
    late.op("crash", {"broker": 3})
    late.wait(9)
    late.see(101, [101, 102, 103], 0, brokers=[101, 102, 103])  # 9 s: within session + settle
    assert properties(late.history) == []
    late.wait(3)
    late.see(101, [101, 102, 103], 0, brokers=[101, 102, 103])  # 12 s, never fenced
    assert properties(late.history) == ["P-FENCE"]
    late.see(-1, [103], 0, brokers=[101, 102, 103])  # the last member may stay
    assert properties(late.history) == ["P-FENCE"]


def test_p_elig_leaves_out_a_broker_that_was_already_fenced_when_it_went_down() -> None:
    """Without ELR a re-registered broker is fenced until it catches up and keeps its ISR places;
    if it dies then, no session timer runs for it (BrokerHeartbeatManager.findOneStaleBroker looks
    at unfenced brokers only): not a broker the controller fenced while it was down."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.op("crash", {"broker": 3})
    b.op("restart", {"broker": 3, "lose": "none"})
    b.see(101, [101, 102, 103], 0, brokers=[101, 102])  # re-registered, fenced, still in the ISR
    b.op("crash", {"broker": 3})
    b.wait(1)
    b.see(101, [101, 102, 103], 0, brokers=[101, 102])
    assert properties(b.history) == []


def test_p_elig_judges_the_view_at_its_metadata_answer_not_at_the_end_of_the_observation() -> None:
    """The flag of a loaded run (triaged): leader 103 paused, its ISR [103, 101] read 5.5 s later
    (the first Metadata request went to the paused broker and timed out), then ListOffsets to the
    paused leader waited 6 s more: the observation returned 11.5 s after the pause. The ISR is as
    old as the Metadata answer (t = 5.5 s), within session + settle; judging it at the return
    (t_end) was the bug."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.op("pause", {"broker": 3})
    b.history.append({"type": "observe", "i": len(b.history), "t": b.t + 5.5, "t_end": b.t + 11.5,
                      "partition": "t-0", "view": {"exists": True, "leader": 103, "isr": [103, 101],
                                                   "replicas": [103, 101, 102], "leader_epoch": 0, "hw": None,
                                                   "metadata_after_s": 5.5}})
    assert properties(b.history) == []
    stamped_at_return = [dict(e, t=e["t_end"]) if e["type"] == "observe" else e for e in b.history]
    assert properties(stamped_at_return) == ["P-ELIG"]


def test_p_live_is_not_owed_by_a_partition_whose_whole_isr_lost_its_disk() -> None:
    """Real 3.9.0, campaign seed 903 run 9: the last ISR member 101 crashed, then restarted with an
    empty disk; the controller never elected it (its recorded log directory is offline: KIP-858's
    LeaderAcceptor) and the partition stayed offline after the heal — right, with unclean election
    disabled. The same end without the disk loss is a P-LIVE violation."""
    def run(lose: str) -> list[str]:
        b = Builder()
        b.op("create_topic", {"topic": "t", "replicas": [1, 3], "configs": {"min.insync.replicas": "1"}})
        b.see(101, [101, 103], 0, replicas=[101, 103])
        b.op("crash", {"broker": 3})
        b.see(101, [101], 0, replicas=[101, 103])
        b.op("crash", {"broker": 1})
        b.see(-1, [101], None, replicas=[101, 103])
        b.op("restart", {"broker": 1, "lose": lose})
        b.op("heal", {"timeout_ms": 60000}, {"settled": False})
        b.see(-1, [101], None, replicas=[101, 103])
        return properties(b.history)

    assert run("disk") == []
    assert run("none") == ["P-LIVE"]


def test_p_ack_and_p_live_are_not_owed_when_the_last_member_of_an_emptied_isr_loses_its_disk() -> None:
    """ELR on (4.x, KIP-966): when the last ISR member 101 is fenced the ISR empties and 101 moves
    to the ELR, so the observed ISR is []. 101 then restarts with an empty disk: its registration
    is an unclean shutdown that takes it out of the ELR, and its recorded log directory is gone
    (`ReplicationControlManager.handleBrokerShutdown`, `LeaderAcceptor.test`, 4.1.1) — no copy of
    the acknowledged records is electable any more. Kafka keeps the partition offline, or, once
    101 reassigned it to its new directory, the last-known-leader election makes the empty 101
    leader; both are right. The empty ISR must not hide the loss of the last in-sync copy (it did:
    P-ACK and P-LIVE were flagged). Without the disk loss the same offline end is still P-LIVE."""
    def run(lose: str, end: tuple[int, list[int]]) -> list[str]:
        b = Builder()
        b.op("create_topic", {"topic": "t", "replicas": [1, 3], "configs": {"min.insync.replicas": "1"}})
        b.see(101, [101, 103], 0, replicas=[101, 103])
        b.op("produce", {"topic": "t", "records": 2, "acks": "all"},
             {"status": "acked", "offsets": [0, 1], "values": ["a", "b"]})
        b.see(101, [101, 103], 2, replicas=[101, 103])
        b.op("crash", {"broker": 3})
        b.see(101, [101], 2, replicas=[101, 103])
        b.op("crash", {"broker": 1})
        b.see(-1, [], None, replicas=[101, 103])  # ISR [], ELR [101]
        b.op("restart", {"broker": 1, "lose": lose})
        b.see(-1, [], None, replicas=[101, 103])
        b.op("heal", {"timeout_ms": 60000}, {"settled": False})
        leader, isr = end
        b.see(leader, isr, 0 if leader > 0 else None, replicas=[101, 103])
        b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
        return properties(b.history)

    assert run("disk", (-1, [])) == []
    assert run("disk", (101, [101, 103])) == []
    assert run("none", (-1, [])) == ["P-ACK", "P-ACK", "P-LIVE"]


def member_paused_above_min_isr(other_first: bool = False) -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 seed 1 run 282's shape: ISR {1, 3, 2}; 3 pauses and stays paused
    past the session timeout (the view still lists it); then 2 is restarted (a SIGKILL) and 1
    loses its disk. 3 left an ISR of three, so it never joined the ELR; the records' other
    holders went down uncleanly or lost their disk. `other_first`: 2 restarts before the session
    timeout passed — which of 3 and 2 left first is unknown, and 3 may hold an ELR place."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(101, [101, 103, 102], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(101, [101, 103, 102], 1)
    b.op("pause", {"broker": 3})
    if other_first:
        b.op("restart", {"broker": 2})
    b.op("tick", {"ms": 6000})
    b.see(101, [101, 103, 102], 1)
    if not other_first:
        b.op("restart", {"broker": 2})
    b.see(101, [101], 1)
    b.op("restart", {"broker": 1, "lose": "disk"})
    b.see(101, [101], 0)
    b.op("heal", {})
    b.see(101, [101, 102, 103], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


def test_with_elr_a_member_that_left_above_min_isr_holds_no_elr_place() -> None:
    assert [v.property for v in check_history(member_paused_above_min_isr(), ELR)] == []
    assert [v.property for v in check_history(member_paused_above_min_isr(other_first=True), ELR)] \
        == ["P-ACK", "P-HWC"]


def member_shut_down_after_another_crashed(ms_between: int) -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 run af3c0495-w0-000586's shape: ISR {1, 3, 2}; 2 is SIGKILLed,
    `ms_between` later 3 shuts down cleanly and restarts; 1, left alone in the ISR, restarts with
    an empty disk. Whether 2 was still in the ISR when 3 shut down (then 3 left an ISR of
    min.insync.replicas without an ELR place) depends on when the controller fenced 2."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(101, [101, 103, 102], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(101, [101, 103, 102], 1)
    b.op("crash", {"broker": 2})
    b.op("tick", {"ms": ms_between})
    b.see(101, [101, 103, 102] if ms_between < 10000 else [101, 103], 1)  # 2 fenced once past 6 s + 4 s
    b.op("clean_restart", {"broker": 3})
    b.see(101, [101], 1)
    b.op("restart", {"broker": 1, "lose": "disk"})
    b.see(-1, [], None)
    b.op("heal", {})
    b.see(101, [101, 102, 103], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


def test_with_elr_a_member_shut_down_before_a_crashed_one_may_be_fenced_holds_no_elr_place() -> None:
    """Within the session timeout and the settle time after 2 went down it may still be in the
    ISR: 3's controlled shutdown then leaves an ISR of two (min.insync.replicas) and 3 joins no ELR
    (`ReplicationControlManager.handleBrokerInControlledShutdown`, `PartitionChangeBuilder
    .maybePopulateTargetElr`, 4.1.1); the copies left went down uncleanly or lost their disk:
    nothing is promised. Past it, 2 was surely fenced first, 3 left an ISR below min ISR and kept
    an ELR place with its copy: the loss is judged."""
    assert [v.property for v in check_history(member_shut_down_after_another_crashed(6000), ELR)] == []
    assert [v.property for v in check_history(member_shut_down_after_another_crashed(11000), ELR)] \
        == ["P-ACK", "P-HWC"]


def test_a_member_cut_from_the_controller_counts_as_down_when_the_last_live_one_loses_its_disk() -> None:
    """SimulatedCluster 4.1 run af3c0495-w0-006275's shape (min.insync.replicas 1, so no ELR):
    acknowledged with ISR {2, 1}; 1's controller link is cut, 2 restarts with an empty log. 1,
    alive with its copy, is fenced one session timeout later as a crashed broker is
    (`ReplicationControlManager.handleBrokerFenced`, 4.1.1), and the empty 2 is the ISR left.
    A cut replication link leaves 1 registered: the loss is judged."""
    def run(link: str) -> list[str]:
        history = last_member_wiped_while_the_other_is_down("crash", min_isr=1)
        return [v.property for v in check_history([
            {**e, "op": "net", "args": {"broker": 1, "link": link, "mode": "cut"}}
            if e["type"] == "op" and e["op"] == "crash" else e for e in history], ELR)]
    assert run("controller") == []
    assert run("replication") == ["P-ACK", "P-ACK", "P-HWC"]


def copies_gone_twice(second: str) -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 run af3c0495-w0-002568's shape, with ELR: acknowledged with ISR {3, 2};
    3 restarts with an empty disk, then 2 is SIGKILLed and restarts with its log (every copy went
    down uncleanly or lost its disk: exposed). 2 comes back as the ISR with the high watermark it
    had; then it goes down again (`second`: a disk-loss restart, or a clean restart) and the high
    watermark reads 0."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(103, [103, 102], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(103, [103, 102], 1)
    b.op("restart", {"broker": 3, "lose": "disk"})
    b.see(102, [102], 1)
    b.op("restart", {"broker": 2, "lose": "none"})
    b.see(102, [102], 1)
    if second == "disk":
        b.op("restart", {"broker": 2, "lose": "disk"})
    else:
        b.op("clean_restart", {"broker": 2})
    b.see(102, [102], 0)
    return b.history


def test_with_elr_copies_gone_again_after_one_came_back_is_a_new_exposure_point() -> None:
    """Once an observation shows a copy electable again (2 back in the ISR with its log), the next
    time every copy is gone — 2 loses its disk — starts a new exposure point: the high watermark
    may go back there (it was flagged: the first point had passed). A clean restart keeps the
    copy: the decline is judged."""
    assert [v.property for v in check_history(copies_gone_twice("disk"), ELR)] == []
    assert [v.property for v in check_history(copies_gone_twice("clean"), ELR)] == ["P-HWC"]


def min_isr_1_member_shut_down_before_the_paused_leader_is_fenced(ms_between: int) -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 run af3c0495-w0-002703's shape (ELR on, min.insync.replicas 1):
    acknowledged with ISR {3, 1}; 3 pauses, `ms_between` later 1 shuts down cleanly and restarts;
    the ISR is seen empty; 3 restarts with an empty disk and leads."""
    b = Builder()
    b.op("create_topic", {"topic": "t", "replicas": [3, 1], "configs": {"min.insync.replicas": "1"}})
    b.see(103, [103, 101], 0, replicas=[103, 101])
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(103, [103, 101], 1, replicas=[103, 101])
    b.op("pause", {"broker": 3})
    b.op("tick", {"ms": ms_between})
    b.op("clean_restart", {"broker": 1})
    b.see(-1, [], None, replicas=[103, 101])
    b.op("restart", {"broker": 3, "lose": "disk"})
    b.see(103, [103, 101], 0, replicas=[103, 101])
    b.op("heal", {})
    b.see(103, [103, 101], 0, replicas=[103, 101])
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


def test_with_elr_and_min_isr_1_a_member_shut_down_before_the_last_is_fenced_holds_no_copy() -> None:
    """1's controlled shutdown while 3 may still be in the ISR leaves an ISR of one (not below
    min.insync.replicas 1): 1 joins no ELR; 3, fenced, is the ELR and the last known leader, and
    its disk-loss restart (an unclean registration) makes it, empty, the leader: nothing is
    promised. Once 3 was surely fenced first, 1 was the last ISR member and went to the ELR with
    its copy: the loss is judged."""
    assert [v.property for v in check_history(min_isr_1_member_shut_down_before_the_paused_leader_is_fenced(6000),
                                              ELR)] == []
    assert [v.property for v in check_history(min_isr_1_member_shut_down_before_the_paused_leader_is_fenced(11000),
                                              ELR)] == ["P-ACK", "P-HWC"]


def two_members_shrunk_between_views(seen_between: list[int] | None) -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 run af3c0495-w0-022063's shape (also 5331, 9044, 9045): acknowledged
    with ISR {1, 3, 2}; the leader 1 shrinks the ISR to {1} (its followers stopped fetching); a
    view sees it go from three to one, or (`seen_between`) an ISR in between. Then 1 crashes and 2
    restarts with an empty disk; after the heal 2 leads an empty log."""
    b = Builder()
    b.op("create_topic", {"topic": "t"})
    b.see(101, [101, 103, 102], 0)
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(101, [101, 103, 102], 1)
    b.op("net", {"broker": 1, "link": "replication", "mode": "cut"})
    if seen_between:
        b.see(101, seen_between, 1)
    b.see(101, [101], 1)
    b.op("crash", {"broker": 1})
    b.op("restart", {"broker": 2, "lose": "disk"})
    b.see(-1, [], None)
    b.op("heal", {})
    b.see(102, [102, 103, 101], 0)
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


def test_with_elr_members_shrunk_between_two_views_may_have_left_without_an_elr_place() -> None:
    """Kafka's leader removes followers as each passes replica.lag.time.max.ms
    (`Partition.maybeShrinkIsr`), one AlterPartition per check: the first to go left an ISR still
    at min.insync.replicas and joined no ELR (`PartitionChangeBuilder.maybePopulateTargetElr`,
    4.1.1); only the removals that take the ISR below it add to the ELR. When one view shows
    {1, 3, 2} and the next {1}, either of 3 and 2 may be the ELR's only member: 2 is, and its
    disk is lost, 1 crashed — nothing is promised. When a view showed {1, 3} in between, 3 joined
    the ELR with its copy: the loss is judged."""
    assert [v.property for v in check_history(two_members_shrunk_between_views(None), ELR)] == []
    assert [v.property for v in check_history(two_members_shrunk_between_views([101, 103]), ELR)] \
        == ["P-ACK", "P-HWC"]


def min_isr_1_killed_then_restarted(lose: str) -> list[dict[str, Any]]:
    """SimulatedCluster 4.1 run 642b69eb-w0-010078's shape (ELR on, min.insync.replicas 1):
    acknowledged with ISR {1, 2}; 2 pauses, 1 is SIGKILLed and restarted, the ISR is seen empty,
    2 restarts losing `lose`; after the heal 2 leads an empty log."""
    b = Builder()
    b.op("create_topic", {"topic": "t", "replicas": [1, 2], "configs": {"min.insync.replicas": "1"}})
    b.see(101, [101, 102], 0, replicas=[101, 102])
    b.op("produce", {"topic": "t", "acks": "all"}, {"status": "acked", "offsets": [0], "values": ["a"]})
    b.see(101, [101, 102], 1, replicas=[101, 102])
    b.op("pause", {"broker": 2})
    b.op("restart", {"broker": 1, "lose": "none"})
    b.see(-1, [], None, replicas=[101, 102])
    b.op("restart", {"broker": 2, "lose": lose})
    b.op("heal", {})
    b.see(102, [102, 101], 0, replicas=[101, 102])
    b.op("consume", {"topic": "t"}, {"records": {"0": {}}})
    return b.history


def test_with_elr_and_min_isr_1_every_copy_killed_or_wiped_is_exposed() -> None:
    """With ELR on the ISR may empty whatever min.insync.replicas is, so rule 3 holds with min ISR
    1: 1 was SIGKILLed (its re-registration takes it out of the ISR and the ELR,
    `ReplicationControlManager.handleBrokerShutdown`, 4.1.1) and 2 lost its disk — the
    last-known-leader election may take the empty 2. With no disk lost the logs hold the records:
    judged."""
    assert [v.property for v in check_history(min_isr_1_killed_then_restarted("disk"), ELR)] == []
    assert [v.property for v in check_history(min_isr_1_killed_then_restarted("none"), ELR)] == ["P-ACK", "P-HWC"]
