"""The reference cluster model as a `Target` (cluster level; docs/cluster-scenarios.md).

Every operation is followed by `Cluster.settle()` — the network delivers everything not held,
in send order, without time passing. The checker that owns the run (the scenario `Session`)
judges every step property on `ground_truth()` after each operation; this target judges nothing. The engine's cluster
machine turns settling off (`settle=False`) and moves the
network itself with `events` (one scheduler event at a time, in an order drawn by Hypothesis),
so that messages race. Controller-level operations act on the cluster's controller (admin requests) or
through its brokers (registration, heartbeats, controlled shutdown).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import CLUSTER, Args, Result, Target, TargetFailure, UnsupportedConfiguration
from isrcheck.adapters.reference.controller_target import ReferenceTarget, build_config
from isrcheck.contract.history.ground_truth import ClusterObservation
from isrcheck.reference_impl.alter_partition_manager import AlterPartitionManager
from isrcheck.reference_impl.broker_config import BrokerConfig
from isrcheck.reference_impl.cluster import Cluster, QuiescenceError
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.follower import FollowerRules
from isrcheck.reference_impl.leader_rules import LeaderRules
from isrcheck.reference_impl.network import Selector
from isrcheck.reference_impl.release import profile_named
from isrcheck.reference_impl.rpc import Node

BROKER_CONFIG_KEYS = frozenset({"replica_lag_time_max_ms"})
"""Scenario `config` keys that are broker settings (`BrokerConfig`); the rest go to the controller."""

DIRECT_CONTROLLER_OPERATIONS = frozenset({
    "create_topic", "create_partitions", "elect_leaders", "reassign", "fence_broker", "unregister_broker",
    "alter_partition",
})
"""Controller-level operations that act on the cluster's controller directly (admin requests, or
an AlterPartition from a fake broker); their metadata then propagates to the brokers."""


def acks_value(raw: Any) -> int:
    if raw in ("all", -1, "-1"):
        return -1
    if raw in (0, 1, "0", "1"):
        return int(raw)
    raise ValueError(f"acks must be all, 1 or 0, not {raw!r}")


def node(raw: Any) -> Node | None:
    if raw is None:
        return None
    if isinstance(raw, int):
        return raw
    text = str(raw)
    return int(text) if text.lstrip("-").isdigit() else text


def selector(args: Args) -> Selector:
    return Selector(args.get("kind"), node(args.get("from")), node(args.get("to")))


class ReferenceClusterTarget(Target):
    name = "reference"
    levels = frozenset({CLUSTER})

    def __init__(
        self,
        *,
        controller_class: type[Controller] = Controller,
        leader_rules: LeaderRules | None = None,
        follower_rules: FollowerRules | None = None,
        manager_class: type[AlterPartitionManager] = AlterPartitionManager,
        broker_config: BrokerConfig | None = None,
        settle: bool = True,
        quiescence_limit: int | None = None,
    ) -> None:
        self.settles = settle
        self.quiescence_limit = quiescence_limit
        self.options: dict[str, Any] = {
            "controller_class": controller_class, "leader_rules": leader_rules, "follower_rules": follower_rules,
            "manager_class": manager_class,
        }
        self.broker_config = BrokerConfig() if broker_config is None else broker_config
        self._cluster: Cluster | None = None

    @property
    def cluster(self) -> Cluster:
        if self._cluster is None:
            raise TargetFailure("error", "the cluster target was not opened")
        return self._cluster

    # ---------------------------------------------------------------- lifecycle

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        controller_config = {k: v for k, v in config.items() if k not in BROKER_CONFIG_KEYS}
        broker_config = self.broker_config
        try:
            if "replica_lag_time_max_ms" in config:
                broker_config = broker_config.with_lag(int(config["replica_lag_time_max_ms"]))
        except (TypeError, ValueError) as error:
            raise UnsupportedConfiguration(str(error)) from None
        cluster_config = build_config(release, controller_config)
        self._cluster = Cluster(profile_named(release), cluster_config, broker_config, **self.options)
        if self.quiescence_limit is not None:
            self._cluster.quiescence_limit = self.quiescence_limit

    def close(self) -> None:
        self._cluster = None

    # ---------------------------------------------------------------- operations

    def execute(self, op: str, args: Args) -> Result:
        cluster = self.cluster
        cluster.next_step()
        try:
            result = self.run(op, args)
            self.settle()
        except ValueError as error:
            raise TargetFailure("error", f"{op}: {error}") from None
        except (QuiescenceError, RecursionError) as error:
            raise TargetFailure("livelock", f"{op}: the cluster never went quiet ({type(error).__name__})") from None
        return result

    def ground_truth(self) -> ClusterObservation:
        return self.cluster.observe()

    def run(self, op: str, args: Args) -> Result:
        cluster = self.cluster
        if op in DIRECT_CONTROLLER_OPERATIONS:
            if op == "elect_leaders" and args.get("type") == "unclean":
                cluster.request_unclean_election([(str(t), int(p)) for t, p in args["partitions"]])
            delegate = ReferenceTarget()
            delegate.controller = cluster.controller
            result = delegate.execute(op, args)
            cluster.controller_changed()
            return result
        match op:
            case "register_broker":
                return self.register(int(args["broker"]), args.get("incarnation"))
            case "unfence_broker":
                broker = int(args["broker"])
                cluster.wait_unfenced([broker])
                return self.heartbeat_result(broker)
            case "heartbeat":
                broker = int(args["broker"])
                process = cluster.brokers.get(broker)
                if process is None or not process.alive:
                    raise ValueError(f"broker {broker} is not running")
                process.heartbeat()
                self.settle()
                return self.heartbeat_result(broker)
            case "controlled_shutdown":
                broker = int(args["broker"])
                cluster.controlled_shutdown(broker)
                self.settle()
                return self.heartbeat_result(broker)
            case "fail_over_controller":
                cluster.fail_over_controller(bool(args.get("zombie", False)))
                return {}
            case "produce":
                state = cluster.produce(
                    str(args["topic"]), int(args.get("partition", 0)), acks_value(args.get("acks", "all")),
                    int(args.get("records", 1)), None if args.get("to") is None else int(args["to"]),
                )
                self.settle()
                return {"error": state.error, "offset": state.base_offset, "request": state.request,
                        "status": state.status}
            case "fetch":
                leader = args.get("leader")
                return {"sent": cluster.fetch_now(int(args["broker"]), None if leader is None else int(leader))}
            case "deliver" | "drop" | "duplicate":
                return self.network_operation(op, args)
            case "hold":
                chosen = selector(args)
                cluster.hold(chosen)
                return {"held": len(cluster.network.matching(chosen))}
            case "release":
                chosen = selector(args)
                cluster.release(None if chosen == Selector() else chosen)
                self.settle()
                return {"held": len(cluster.network.matching(chosen))}
            case "events":
                rng = random.Random(int(args.get("seed", 0)))
                happened, moved, timers = 0, [], 0
                for _ in range(int(args.get("count", 1))):
                    # one scheduler event delivers at most one message, the only one it takes out of
                    # flight (`Cluster.step`): counting deliveries names it without copying the network
                    deliveries = cluster.deliveries
                    if cluster.step(rng):
                        happened += 1
                        if cluster.deliveries != deliveries and cluster.last_delivered is not None:
                            moved.append(_message_name(cluster.last_delivered))
                        else:
                            timers += 1
                # `moved` names what the scheduler did (a reader of a counterexample needs to know which
                # messages a drawn seed delivered); informational, like a log line, not a result to compare
                return {"moved": _moved_text(moved, timers), "events": happened}
            case "tick":
                cluster.advance(int(args["ms"]))
                return {"now_ms": cluster.now_ms}
            case "crash":
                cluster.crash(int(args["broker"]), str(args.get("lose", "none")))
                return {}
            case "restart":
                broker = int(args["broker"])
                running = cluster.brokers.get(broker)
                if running is not None and running.alive:
                    # The generator draws from the reference; an implementation may legitimately
                    # have restarted (or never lost) this broker already, so "restart" means
                    # "make sure it runs".
                    return {"registered": running.epoch >= 0, "broker_epoch": running.epoch}
                process = cluster.restart(broker)
                self.settle()
                return {"registered": process.epoch >= 0, "broker_epoch": process.epoch}
            case "lag_metadata":
                broker = int(args["broker"])
                cluster.lag_metadata(broker)
                return {"metadata_offset": self.metadata_offset(broker)}
            case "sync_metadata":
                broker = int(args["broker"])
                offset = args.get("offset")
                cluster.sync_metadata(broker, None if offset is None else int(offset))
                return {"metadata_offset": self.metadata_offset(broker)}
            case "flush":
                cluster.flush(int(args["broker"]))
                return {}
            case "heal":
                ms = args.get("ms")
                until = self.heal_until
                cluster.heal(
                    restart=bool(args.get("restart", False)),
                    until=None if until is None else (lambda: until(cluster.observe())),
                    probe=bool(args.get("probe", False)), max_ms=None if ms is None else int(ms),
                )
                return {}
        raise ValueError(f"operation {op!r} is not supported at the cluster level")

    def settle(self) -> None:
        if self.settles:
            self.cluster.settle()

    def register(self, broker: int, incarnation: Any) -> Result:
        cluster = self.cluster
        process = cluster.brokers.get(broker)
        if process is None or not process.alive:
            process = cluster.start_broker(broker, None if incarnation is None else str(incarnation))
        self.settle()
        error = process.registration_error
        return {"error": "NONE" if process.epoch >= 0 else (error.name if error is not None else "REQUEST_TIMED_OUT"),
                "broker_epoch": process.epoch}

    def heartbeat_result(self, broker: int) -> Result:
        process = self.cluster.brokers.get(broker)
        response = None if process is None else process.last_heartbeat
        if response is None:
            return {"error": "REQUEST_TIMED_OUT", "is_caught_up": False, "is_fenced": True, "should_shut_down": False}
        return {"error": response.error.name, "is_caught_up": response.is_caught_up, "is_fenced": response.is_fenced,
                "should_shut_down": response.should_shut_down}

    def metadata_offset(self, broker: int) -> int:
        process = self.cluster.brokers.get(broker)
        return -1 if process is None else process.cache.offset

    def network_operation(self, op: str, args: Args) -> Result:
        cluster = self.cluster
        count = args.get("count")
        messages = cluster.network.matching(selector(args))
        if count is not None:
            messages = messages[:int(count)]
        for message in messages:
            if message.id not in cluster.network.inflight:
                continue
            if op == "deliver":
                cluster.deliver(message)
            elif op == "drop":
                cluster.drop(message)
            else:
                cluster.duplicate(message)
        key = {"deliver": "delivered", "drop": "dropped", "duplicate": "duplicated"}[op]
        return {key: len(messages)}

    # ---------------------------------------------------------------- observation

    def observe(self, what: str, args: Args) -> Result:
        cluster = self.cluster
        if what in ("partition", "broker"):
            delegate = ReferenceTarget()
            delegate.controller = cluster.controller
            return delegate.observe(what, args)
        observation = cluster.observe()
        if what == "messages":
            matching = cluster.network.matching(selector(args))
            return {"count": len(matching), "held": sum(1 for m in matching if cluster.network.is_held(m))}
        if what == "produce":
            state = cluster.produces.get(int(args["request"]))
            if state is None:
                raise TargetFailure("error", f"no produce request {args['request']}")
            return {"status": state.status, "error": state.error, "offset": state.base_offset}
        tp = (str(args.get("topic")), int(args.get("partition", 0)))
        if what == "leader":
            broker = args.get("broker")
            if broker is None:
                partition = observation.partitions.get(tp)
                broker = -1 if partition is None else partition.leader
            view = observation.replica(int(broker), tp)
            if view is None:
                return {"leader": int(broker), "role": "none"}
            return {
                "leader": view.broker, "role": view.role, "leader_epoch": view.leader_epoch,
                "partition_epoch": view.partition_epoch, "isr": list(view.isr), "maximal_isr": list(view.maximal_isr),
                "pending": view.pending, "proposed_isr": list(view.proposed_isr), "hw": view.hw, "leo": view.leo,
                "epoch_start_offset": view.epoch_start_offset,
            }
        if what == "replica":
            broker = int(args["broker"])
            view = observation.replica(broker, tp)
            process = observation.brokers.get(broker)
            result: dict[str, Any] = {
                "status": "absent" if process is None else process.status,
                "broker_epoch": -1 if process is None else process.broker_epoch,
                "metadata_offset": -1 if process is None else process.metadata_offset,
            }
            if view is None:
                return {**result, "role": "none", "leo": 0, "hw": 0, "epochs": []}
            return {
                **result, "role": view.role, "leader": view.leader, "leader_epoch": view.leader_epoch,
                "partition_epoch": view.partition_epoch, "hw": view.hw, "leo": view.leo,
                "epochs": [epoch for epoch, _ in view.log],
            }
        raise ValueError(f"cannot observe {what!r}")


def _moved_text(moved: list[str], timers: int, shown: int = 6) -> str:
    """`Fetch 3→2, FetchResponse 2→3, +2 timers`: the first messages delivered, then counts."""
    parts = moved[:shown] + ([f"+{len(moved) - shown} more"] if len(moved) > shown else [])
    parts += [f"+{timers} timer{'s' if timers != 1 else ''}"] if timers else []
    return ", ".join(parts) or "nothing"


def _message_name(message: Any) -> str:
    """`Fetch 2→1`: a delivered message as a counterexample shows it (brokers by id)."""
    return f"{message.kind} {message.src}→{message.dst}"
