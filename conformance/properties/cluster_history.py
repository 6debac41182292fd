"""Black-box cluster properties judged on a history of operations and observations (the shape
`isrcheck.conformance.engine.cluster_history` records; Jepsen's checker role). They need no
ground truth — only what a client and an operator see — so they apply to any cluster target,
and re-judge a run offline from its record (`isrcheck check`).

* **P-ACK** — every record acknowledged to an acks=all producer is read back, at its offset,
  after the heal (bugs.md property table; KIP-903);
* **P-HWC** — the consumer-visible high watermark (ListOffsets latest) of a partition never
  decreases (KIP-207; leader.md §15);
* **P-ELIG** — a broker the controller has fenced (as the Metadata answer's own broker list shows)
  while it is down is in no ISR with other members (controller.md §4.3, §4.4; KIP-841); without a
  broker list, by the clock: down past the session timeout + settle time;
* **P-FENCE** — a broker down (killed, stopped, paused, cut off from the controllers) for longer
  than the session timeout + settle time is fenced (the one timing property);
* **LeaderInIsr** — a partition with a leader lists it in its ISR (controller.md §3.2);
* **P-LIVE** — after the heal, within its bound, every partition has a leader and
  min(min.insync.replicas, replicas) in-sync replicas (bugs.md property table), unless its whole
  ISR lost its disks.

Faults that legitimately lose data are exempt: a record (and a high watermark) is no longer
protected once every broker of the ISR observed when it was acknowledged has lost its log
directory since (Kafka promises nothing past losing every in-sync copy).

The properties only a simulation can judge — they read replicas' logs, HWs and in-flight
requests — are `GROUND_TRUTH_ONLY` (`isrcheck.conformance.properties.cluster_level`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

GROUND_TRUTH_ONLY = frozenset({"P-LOG", "P-HWM", "P-1IF", "P-LEAD", "P-HWV"})
"""cluster_level.py properties that need every replica's log, HW or in-flight requests."""

BLACK_BOX = ("P-ACK", "P-HWC", "P-ELIG", "P-FENCE", "LeaderInIsr", "P-LIVE")
DOWN_OPS = {"crash", "pause", "shutdown"}
UP_OPS = {"restart", "resume", "clean_restart", "heal"}


@dataclass(frozen=True)
class HistoryConfig:
    """What the judge needs to know about the cluster (Kafka configuration, not its state)."""

    session_timeout_ms: int = 6000
    settle_ms: int = 4000
    """Metadata settles within this after the session timeout expired (heartbeat interval,
    controller processing, Metadata propagation to the broker answering)."""
    min_insync_replicas: int = 2

    def to_json(self) -> dict[str, int]:
        return {"session_timeout_ms": self.session_timeout_ms, "settle_ms": self.settle_ms,
                "min_insync_replicas": self.min_insync_replicas}

    @staticmethod
    def from_json(data: dict[str, Any]) -> HistoryConfig:
        return HistoryConfig(**{k: int(v) for k, v in data.items() if k in HistoryConfig.__dataclass_fields__})


@dataclass(frozen=True)
class Violation:
    property: str
    i: int
    """The history entry where it shows."""
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property, "step": self.i, "message": self.message, "evidence": self.evidence}


def ops(history: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e["type"] == "op"]


def observations(history: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e["type"] == "observe"]


def broker_id(args: dict[str, Any]) -> int:
    b = int(args.get("broker", 1))
    return b if b > 100 else 100 + b


def topic_min_isr(history: list[dict[str, Any]], topic: str, config: HistoryConfig) -> int:
    for e in ops(history):
        if e["op"] == "create_topic" and e["args"].get("topic") == topic:
            value = (e["args"].get("configs") or {}).get("min.insync.replicas")
            if value is not None:
                return int(value)
    return config.min_insync_replicas


def exposure_points(history: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Per partition, the history indices at which every broker of its last observed non-empty
    ISR had lost its log directory (disk-loss restarts) since being observed in it: from there on,
    what was committed before is not protected.

    An empty ISR does not replace the last non-empty one. Without ELR the ISR never empties (the
    last member stays when it is fenced). With ELR on (4.x; KIP-966) it does: when its last member
    is fenced the ISR becomes empty and that member moves to the ELR
    (`PartitionChangeBuilder.maybePopulateTargetElr` and `build`, "the ISR is allowed to be
    empty", 4.0.1 and 4.1.1), so the copies a clean election can still use are those of the last
    non-empty ISR. A disk-loss restart of that member then leaves nothing electable with the data:
    its registration is an unclean shutdown that takes it out of the ELR
    (`ReplicationControlManager.handleBrokerShutdown`), and the last-known-leader election
    (`PartitionChangeBuilder.canElectLastKnownLeader`) accepts it only once its recorded log
    directory is online again (`ReplicationControlManager.LeaderAcceptor.test`) — i.e. after the
    broker reassigned the partition to its new, empty directory (`ReplicaManager
    .maybeUpdateTopicAssignment` → AssignReplicasToDirs). Offline, or led by the empty replica:
    either is Kafka's answer once every in-sync copy is gone."""
    points: dict[str, list[int]] = {}
    last_isr: dict[str, set[int]] = {}
    wiped: set[int] = set()
    for e in history:
        if e["type"] == "observe" and e["view"].get("exists"):
            isr = set(e["view"].get("isr", []))
            wiped -= isr  # back in an ISR: it holds a copy again (as far as anyone can see)
            if isr:
                last_isr[e["partition"]] = isr
        elif e["type"] == "op" and e["op"] == "restart" and e["args"].get("lose") == "disk":
            wiped.add(broker_id(e["args"]))
            for partition, isr in last_isr.items():
                if isr and isr <= wiped:
                    points.setdefault(partition, []).append(e["i"])
    return points


def p_ack(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-ACK: each acks=all acknowledgement (value at offset) is read back by the last consume."""
    exposed = exposure_points(history)
    read: dict[str, dict[str, str]] = {}
    for e in ops(history):
        if e["op"] == "consume" and "records" in e["result"]:
            for partition, records in e["result"]["records"].items():
                read[f"{e['args']['topic']}-{partition}"] = records
    violations = []
    for e in ops(history):
        if e["op"] != "produce" or str(e["args"].get("acks", "all")) != "all":
            continue
        partition = f"{e['args']['topic']}-{int(e['args'].get('partition', 0))}"
        if partition not in read:
            continue  # never read back (the run ended early): nothing to judge
        if any(point > e["i"] for point in exposed.get(partition, [])):
            continue
        seen = read[partition]
        for offset, value in zip(e["result"].get("offsets", []), e["result"].get("values", []), strict=False):
            found = seen.get(str(offset))
            if found != value:
                violations.append(Violation(
                    "P-ACK", e["i"], f"{partition}: record {value!r} acknowledged (acks=all) at offset {offset} "
                    + ("is missing after the heal" if found is None else f"reads back as {found!r}"),
                    {"offset": offset, "value": value, "found": found, "read_back": len(seen)}))
    return violations


def p_hwc(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-HWC: ListOffsets(latest) never goes backwards (KIP-207 made it monotonic across leader
    changes: a new leader answers OFFSET_NOT_AVAILABLE until its HW caught up)."""
    exposed = exposure_points(history)
    highest: dict[str, tuple[int, int]] = {}
    violations = []
    for e in history:
        if e["type"] == "op" and e["op"] == "restart" and e["args"].get("lose") == "disk":
            for partition, points in exposed.items():
                if e["i"] in points:
                    highest.pop(partition, None)
        if e["type"] != "observe" or e["view"].get("hw") is None:
            continue
        partition, hw = e["partition"], int(e["view"]["hw"])
        best = highest.get(partition)
        if best is not None and hw < best[0]:
            violations.append(Violation("P-HWC", e["i"], f"{partition}: the high watermark a consumer sees went "
                                        f"back from {best[0]} (entry {best[1]}) to {hw}",
                                        {"before": best[0], "after": hw, "leader": e["view"].get("leader")}))
        if best is None or hw != best[0]:
            highest[partition] = (hw, e["i"])  # after a decline, report only a further one
    return violations


def down_periods(history: list[dict[str, Any]], config: HistoryConfig) -> list[tuple[dict[str, Any], dict[int, float],
                                                                                 dict[int, bool]]]:
    """For every observation that may be judged (no broker's metadata held back, not within the
    quiet time after a release or a controller fail-over): the brokers down at that point, with
    when they went down (SIGKILL/SIGSTOP/SIGTERM, controller links cut or held, heartbeats held;
    not restarted since) and whether the last observation before that listed them as unfenced."""
    bound_s = (config.session_timeout_ms + config.settle_ms) / 1000
    down_since: dict[int, float] = {}
    listed_when_down: dict[int, bool] = {}
    listed: set[int] | None = None
    blocked: set[int] = set()
    quiet_until = 0.0
    judged = []

    def went_down(broker: int, t: float) -> None:
        if broker not in down_since:
            down_since[broker] = t
            listed_when_down[broker] = listed is not None and broker in listed

    for e in history:
        if e["type"] == "op":
            op, args = e["op"], e["args"]
            was_blocked = bool(blocked)
            if op in DOWN_OPS:
                went_down(broker_id(args), e["t_end"])
            elif op == "net" and args.get("link") == "controller":
                if args.get("mode") in ("cut", "hold"):
                    went_down(broker_id(args), e["t_end"])
                    blocked.add(broker_id(args))
                else:
                    down_since.pop(broker_id(args), None)
                    blocked.discard(broker_id(args))
            elif op == "hold_api" and args.get("api") in ("Fetch", "BrokerHeartbeat"):
                blocked.add(broker_id(args))
                if args.get("api") == "BrokerHeartbeat":
                    went_down(broker_id(args), e["t_end"])
            elif op == "release_api" and args.get("api") in ("Fetch", "BrokerHeartbeat"):
                blocked.discard(broker_id(args))
                if args.get("api") == "BrokerHeartbeat":
                    down_since.pop(broker_id(args), None)
            elif op in UP_OPS:
                if op == "heal":
                    down_since.clear()
                    blocked.clear()
                else:
                    down_since.pop(broker_id(args), None)
            elif op == "fail_over_controller":
                quiet_until = e["t_end"] + bound_s
            if was_blocked and not blocked:
                quiet_until = max(quiet_until, e["t_end"] + config.settle_ms / 1000)
            continue
        if "brokers" in e["view"]:
            listed = set(e["view"]["brokers"])
        if blocked or not e["view"].get("exists") or e["t"] < quiet_until:
            continue  # a broker's metadata is held back: whatever answers Metadata may be stale
        judged.append((e, dict(down_since), {b: listed_when_down.get(b, False) for b in down_since}))
    return judged


def p_elig(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-ELIG (black-box form; controller.md §4.3, §4.4, KIP-841): a broker the controller has
    fenced is in no ISR with other members. Judged on the controller's own view, not a clock: a
    KRaft broker's Metadata answer lists only unfenced brokers, from the same metadata image as
    the ISR it returns, so a broker that was listed when it went down (it had an unfenced
    registration), is still down, is no longer listed (fenced — its session expired or it shut
    down) and is in an ISR with other members is a violation however late or early it is seen.
    ("Listed when it went down" leaves out a broker re-registered and still fenced when it went
    down: without ELR such a broker keeps its ISR places — `handleBrokerUncleanShutdown` does
    nothing before ELR — and `BrokerHeartbeatManager` runs no session timer for a fenced broker.)

    Views without a broker list (other targets; records before the list was observed) are judged
    by the clock instead: down for longer than the session timeout + settle time, measured to when
    the Metadata was answered (the entry's ``t``), still in an ISR with other members."""
    bound_s = (config.session_timeout_ms + config.settle_ms) / 1000
    violations = []
    for e, down_since, listed_when_down in down_periods(history, config):
        view, t = e["view"], e["t"]
        isr = view.get("isr", [])
        if len(isr) < 2:
            continue
        for broker in isr:
            since = down_since.get(broker)
            if since is None:
                continue
            if "brokers" in view:
                if listed_when_down[broker] and broker not in view["brokers"]:
                    violations.append(Violation(
                        "P-ELIG", e["i"], f"{e['partition']}: broker {broker}, down for {t - since:.1f} s and fenced "
                        f"(not among the brokers {view['brokers']} of the same Metadata answer), is still in the ISR "
                        f"{isr}", {"broker": broker, "isr": isr, "down_s": round(t - since, 3), "fenced": True,
                                   "brokers": view["brokers"]}))
            elif t - since > bound_s:
                violations.append(Violation(
                    "P-ELIG", e["i"], f"{e['partition']}: broker {broker}, down for {t - since:.1f} s (session "
                    f"timeout {config.session_timeout_ms} ms), is still in the ISR {isr}",
                    {"broker": broker, "isr": isr, "down_s": round(t - since, 3)}))
    return violations


def p_fence(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-FENCE (liveness of fencing; controller.md §4.3): a broker down for longer than the session
    timeout + settle time — measured to when the Metadata was answered — is fenced: the Metadata
    answer no longer lists it, or it is at least out of every ISR with other members. Only views
    that carry a broker list are judged (without one, P-ELIG's clock rule covers it). This is the
    one timing property: a controller starved on a loaded machine fences late and shows here, not
    as P-ELIG; the evidence gives the delay."""
    bound_s = (config.session_timeout_ms + config.settle_ms) / 1000
    violations = []
    for e, down_since, _listed in down_periods(history, config):
        view, t = e["view"], e["t"]
        isr = view.get("isr", [])
        if "brokers" not in view or len(isr) < 2:
            continue
        for broker in isr:
            since = down_since.get(broker)
            if since is not None and broker in view["brokers"] and t - since > bound_s:
                violations.append(Violation(
                    "P-FENCE", e["i"], f"{e['partition']}: broker {broker}, down for {t - since:.1f} s (session "
                    f"timeout {config.session_timeout_ms} ms), is still unfenced and in the ISR {isr}",
                    {"broker": broker, "isr": isr, "down_s": round(t - since, 3), "fenced": False}))
    return violations


def leader_in_isr(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """LeaderInIsr: a leader elected from the ISR stays in it (controller.md §3.2)."""
    return [Violation("LeaderInIsr", e["i"], f"{e['partition']}: leader {e['view']['leader']} is not in the ISR "
                      f"{e['view']['isr']}", {"leader": e["view"]["leader"], "isr": e["view"]["isr"]})
            for e in observations(history)
            if e["view"].get("exists") and e["view"].get("leader", -1) >= 0
            and e["view"]["leader"] not in e["view"].get("isr", [])]


def p_live(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """P-LIVE: after the (last) heal — everything running, every link passing, its bound spent
    waiting — every partition observed has a leader and min(min.insync.replicas, |replicas|)
    in-sync replicas. Not judged for a partition whose whole ISR lost its log directories
    (`exposure_points`): with unclean election disabled Kafka may rightly keep it offline — from
    3.7 the controller elects only a replica whose recorded log directory is online
    (`ReplicationControlManager.LeaderAcceptor`, KIP-858), and a disk-loss restart registers a new
    directory, so the emptied last ISR member is not elected until its own AssignReplicasToDirs
    records the new directory; the next election visiting the partition then elects it, empty
    (3.3 elects it at its unfence; conformance/scenarios/cluster/kip858_last_member_disk_loss.yaml)."""
    heals = [e for e in ops(history) if e["op"] == "heal"]
    if not heals:
        return []
    heal = heals[-1]
    exposed = exposure_points(history)
    latest: dict[str, dict[str, Any]] = {}
    for e in observations(history):
        if e["i"] > heal["i"]:
            latest[e["partition"]] = e
    violations = []
    for partition, e in sorted(latest.items()):
        if exposed.get(partition):
            continue  # every in-sync copy was lost: with unclean election disabled it may stay offline
        view = e["view"]
        need = min(topic_min_isr(history, partition.rsplit("-", 1)[0], config), len(view.get("replicas", [])) or 1)
        if not view.get("exists") or view.get("leader", -1) < 0 or len(view.get("isr", [])) < need:
            violations.append(Violation("P-LIVE", e["i"], f"{partition}: after the heal ({heal['args']}) it has "
                                        f"leader {view.get('leader')} and ISR {view.get('isr')} (needs {need} in "
                                        "sync)", {"view": view}))
    return violations


CHECKS = {"P-ACK": p_ack, "P-HWC": p_hwc, "P-ELIG": p_elig, "P-FENCE": p_fence, "LeaderInIsr": leader_in_isr,
          "P-LIVE": p_live}


def check_history(history: list[dict[str, Any]], config: HistoryConfig) -> list[Violation]:
    """Every black-box property on one history, in history order."""
    found = [v for check in CHECKS.values() for v in check(history, config)]
    return sorted(found, key=lambda v: (v.i, v.property))
