"""An example cluster-level plug-in: a toy three-broker "Kafka" in memory that answers the black-box
cluster operations of `isrcheck.adapters.real_kafka.kafka_cluster` — how a third-party target
offers the cluster level (declare `black_box_history = True`; the engine records the history and
judges it: docs/real-kafka.md), and answers the optional replica-log observation
(`observes_replica_logs`: every replica's log after the heal, what P-LOG is judged on). Three
variants:

* `ToyCluster` — one partition, replicas [1, 2, 3], min.insync.replicas 2: acks=all needs two
  live in-sync copies; a failed broker leaves the ISR at once; a restarted broker rejoins after
  copying the leader's log; a new leader comes from the ISR. Nothing is lost.
* `LossyCluster` — the same, except that a broker restarted with an empty log directory rejoins
  the ISR *before* catching up (KAFKA-14139's outcome): a leader failure can then elect it.
* `RestampingCluster` — the same as `ToyCluster`, except that a follower catching up stamps the
  records it copies with the current leader epoch instead of the epoch they were written in. A
  consumer, reading the leader, sees nothing wrong; only the replicas' logs disagree below the
  high watermark (found by P-LOG alone).

    isrcheck run --adapter isrcheck.adapters.plugins.example_cluster:LossyCluster --level cluster

Not a model of Kafka's timing: every operation takes effect at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isrcheck.adapters.base import CLUSTER, REPLICA_LOGS, Args, Result, Target

BROKERS = (1, 2, 3)


class ToyCluster(Target):
    name = "toy-cluster"
    levels = frozenset({CLUSTER})
    black_box_history = True
    observes_replica_logs = True
    lossy = False
    restamps = False

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        self.logs: dict[int, list[tuple[int, str]]] = {b: [] for b in BROKERS}
        """Each broker's log: (leader epoch, value) at each offset."""
        self.up = set(BROKERS)
        self.isr = list(BROKERS)
        self.leader = 1
        self.epoch = 0
        self.hw = 0
        self.counter = 0
        self.topic: str | None = None

    def execute(self, op: str, args: Args) -> Result:
        b = int(args.get("broker", 1))
        match op:
            case "create_topic":
                self.topic = str(args["topic"])
            case "produce":
                return self.produce(int(args.get("records", 1)), str(args.get("acks", "all")))
            case "consume":
                log = self.logs[self.leader][: self.hw] if self.leader > 0 else []
                return {"records": {"0": {str(i): v for i, (_, v) in enumerate(log)}}}
            case "crash" | "pause" | "shutdown":
                self.fail(b)
            case "restart" | "resume" | "clean_restart":
                if op != "resume":
                    self.fail(b)  # restarting a running broker stops it first
                self.recover(b, wipe=args.get("lose") == "disk")
            case "heal":
                for broker in BROKERS:
                    self.recover(broker, wipe=False)
                for broker in BROKERS:  # those recovered before the leader came back follow it now
                    self.recover(broker, wipe=False)
                return {"settled": True}
        return {}  # net, tick, holds, fail-over: no effect on this toy

    def produce(self, records: int, acks: str) -> Result:
        if self.leader < 0 or (acks == "all" and len(self.isr) < 2):
            return {"status": "failed", "error": "NOT_ENOUGH_REPLICAS", "offsets": [], "values": []}
        offsets, values = [], []
        for _ in range(records):
            self.counter += 1
            value = f"toy-{self.counter}"
            for broker in self.isr:
                self.logs[broker].append((self.epoch, value))
            offsets.append(len(self.logs[self.leader]) - 1)
            values.append(value)
        self.hw = min(len(self.logs[m]) for m in self.isr)
        return {"status": "acked", "error": "NONE", "offsets": offsets, "values": values}

    def fail(self, broker: int) -> None:
        if broker not in self.up:
            return
        self.up.discard(broker)
        if broker in self.isr and len(self.isr) > 1:
            self.isr.remove(broker)
        if broker == self.leader:
            candidates = [m for m in self.isr if m in self.up]
            self.leader = candidates[0] if candidates else -1
            self.epoch += 1

    def recover(self, broker: int, wipe: bool) -> None:
        if wipe:
            self.logs[broker] = []
            if broker in self.isr:  # an in-sync copy is gone: the HW is what the ISR still holds
                self.hw = min(len(self.logs[m]) for m in self.isr)
        self.up.add(broker)
        if self.leader < 0 and broker in self.isr:
            self.leader, self.epoch = broker, self.epoch + 1
        if broker == self.leader:
            return
        if self.lossy and wipe and broker not in self.isr:
            self.isr.append(broker)  # admitted before it caught up
            return
        if self.leader > 0:
            copied = self.logs[self.leader]  # follows (and truncates to) the leader
            self.logs[broker] = [(self.epoch, v) for _, v in copied] if self.restamps else list(copied)
            if broker not in self.isr:
                self.isr.append(broker)
            self.hw = min(len(self.logs[m]) for m in self.isr)

    def observe(self, what: str, args: Args) -> Result:
        if what == REPLICA_LOGS:
            return {"replicas": {str(100 + b): [[offset, epoch, None, value] for offset, (epoch, value)
                                                in enumerate(self.logs[b])] for b in BROKERS}}
        if self.topic is None:
            return {"exists": False}
        hw = self.hw if self.leader > 0 else None
        return {"exists": True, "leader": 100 + self.leader if self.leader > 0 else -1,
                "isr": [100 + m for m in self.isr], "replicas": [100 + b for b in BROKERS],
                "leader_epoch": self.epoch, "hw": hw}


class LossyCluster(ToyCluster):
    name = "toy-cluster-lossy"
    lossy = True


class RestampingCluster(ToyCluster):
    name = "toy-cluster-restamping"
    restamps = True
