"""The reference controller as a `Target` (controller level), optionally with a mutant."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import CONTROLLER, Args, Result, Target, UnsupportedConfiguration
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.errors import Error
from isrcheck.reference_impl.messages import (
    AlterPartitionItem,
    AlterPartitionRequest,
    AlterPartitionTopic,
    BrokerRegistrationRequest,
    HeartbeatRequest,
    HeartbeatResponse,
    IsrMember,
)
from isrcheck.reference_impl.partition_change import Election
from isrcheck.reference_impl.release import ClusterConfig, profile_named
from isrcheck.reference_impl.state import LeaderRecoveryState

CAUGHT_UP_OFFSET = 2**62
"""controller.md §9.2: a huge CurrentMetadataOffset makes every offset condition true."""

CONFIG_KEYS = (
    "unclean_leader_election_enable", "eligible_leader_replicas", "min_insync_replicas",
    "metadata_version", "broker_session_timeout_ms",
)


def build_config(release: str, config: Mapping[str, Any]) -> ClusterConfig:
    try:
        return ClusterConfig.for_profile(profile_named(release), **{k: config[k] for k in config})
    except (TypeError, ValueError) as error:
        raise UnsupportedConfiguration(str(error)) from None


class ReferenceTarget(Target):
    name = "reference"
    levels = frozenset({CONTROLLER})

    def __init__(self, controller_class: type[Controller] = Controller) -> None:
        self.controller_class = controller_class
        self.controller = controller_class()
        self.incarnations = itertools.count(1)

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        self.controller = self.controller_class(profile_named(release), build_config(release, config))

    def broker_epoch(self, broker: int) -> int:
        registration = self.controller.broker(broker)
        return -1 if registration is None else registration.epoch

    def heartbeat(self, args: Args, **overrides: bool) -> Result:
        broker = int(args["broker"])
        epoch = int(args.get("broker_epoch", self.broker_epoch(broker)))
        caught_up = bool(args.get("caught_up", True))
        offset = CAUGHT_UP_OFFSET if caught_up else self.controller.register_offsets.get(broker, 0) - 1
        response = self.controller.heartbeat(
            HeartbeatRequest(
                broker, epoch, offset,
                want_fence=overrides.get("want_fence", bool(args.get("want_fence", False))),
                want_shut_down=overrides.get("want_shut_down", bool(args.get("want_shut_down", False))),
            )
        )
        return heartbeat_result(response)

    def execute(self, op: str, args: Args) -> Result:
        c = self.controller
        match op:
            case "register_broker":
                previous = args.get("previous_broker_epoch")
                response = c.register_broker(
                    BrokerRegistrationRequest(
                        int(args["broker"]), str(args["incarnation"]), -1 if previous is None else int(previous)
                    )
                )
                return {"error": response.error.name, "broker_epoch": response.broker_epoch}
            case "heartbeat":
                return self.heartbeat(args)
            case "unfence_broker":
                return self.heartbeat({"broker": args["broker"]}, want_fence=False, want_shut_down=False)
            case "controlled_shutdown":
                return self.heartbeat({"broker": args["broker"]}, want_fence=False, want_shut_down=True)
            case "fence_broker":
                c.fence_stale_broker(int(args["broker"]))
                return {}
            case "unregister_broker":
                return {"error": c.unregister_broker(int(args["broker"])).name}
            case "create_topic":
                configs = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in
                           (args.get("configs") or {}).items()}
                return {"error": c.create_topic(str(args["topic"]), args["assignment"], configs).name}
            case "create_partitions":
                return {"error": c.create_partitions(str(args["topic"]), int(args["count"]), args["assignment"]).name}
            case "alter_partition":
                return self.alter_partition(args)
            case "elect_leaders":
                election = Election.PREFERRED if args["type"] == "preferred" else Election.UNCLEAN
                results = c.elect_leaders(election, [(str(t), int(p)) for t, p in args["partitions"]])
                return {"errors": [[r.topic, r.partition, r.error.name] for r in results]}
            case "fail_over_controller":
                c.fail_over()
                return {}
            case "reassign":
                return {"error": c.reassign(str(args["topic"]), int(args["partition"]), args["replicas"]).name}
        raise ValueError(f"unknown operation {op!r}")

    def alter_partition(self, args: Args) -> Result:
        c = self.controller
        version = int(args["version"])
        topic = str(args["topic"])
        item = AlterPartitionItem(
            int(args["partition"]), int(args["leader_epoch"]), int(args["partition_epoch"]),
            tuple(IsrMember(int(b), int(e)) for b, e in args["isr"]),
            int(LeaderRecoveryState[str(args.get("leader_recovery_state", "RECOVERED"))]),
        )
        if version < 2:
            request_topic = AlterPartitionTopic((item,), topic_name=topic)
        else:
            request_topic = AlterPartitionTopic((item,), topic_id=c.topic_ids.get(topic, "unknown-topic-id"))
        response = c.alter_partition(
            AlterPartitionRequest(version, int(args["broker"]), int(args["broker_epoch"]), (request_topic,))
        )
        if response.error is not Error.NONE:
            return {"top_level_error": response.error.name, "error": None}
        result = response.topics[0].partitions[0]
        return {
            "top_level_error": "NONE",
            "error": result.error.name,
            "leader": result.leader,
            "leader_epoch": result.leader_epoch,
            "isr": list(result.isr),
            "partition_epoch": result.partition_epoch,
            "leader_recovery_state": LeaderRecoveryState(result.leader_recovery_state).name,
        }

    def observe(self, what: str, args: Args) -> Result:
        if what == "broker":
            registration = self.controller.broker(int(args["broker"]))
            if registration is None:
                return {"registered": False, "fenced": True, "in_controlled_shutdown": False, "broker_epoch": -1}
            return {
                "registered": True,
                "fenced": registration.fenced,
                "in_controlled_shutdown": registration.in_controlled_shutdown,
                "broker_epoch": registration.epoch,
            }
        if what == "partition":
            state = self.controller.partition(str(args["topic"]), int(args.get("partition", 0)))
            if state is None:
                return {"exists": False}
            return {
                "exists": True,
                "leader": state.leader,
                "isr": list(state.isr),
                "replicas": list(state.replicas),
                "leader_epoch": state.leader_epoch,
                "partition_epoch": state.partition_epoch,
                "leader_recovery_state": state.leader_recovery_state.name,
                "elr": list(state.elr),
                "last_known_elr": list(state.last_known_elr),
                "adding": list(state.adding),
                "removing": list(state.removing),
            }
        raise ValueError(f"cannot observe {what!r}")


def heartbeat_result(response: HeartbeatResponse) -> Result:
    return {
        "error": response.error.name,
        "is_caught_up": response.is_caught_up,
        "is_fenced": response.is_fenced,
        "should_shut_down": response.should_shut_down,
    }
