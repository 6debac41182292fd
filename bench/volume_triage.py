"""How bench/volume.py triages a finding against real Kafka that no known-divergence rule matched:
a finding is a claim about someone else's code, so each rule here recognises one cause that a
person triaged (replayed, compared across releases, read in Kafka's source) — on the run's own
record and history, not on its signature string, so the same signature from another cause stays
`FINDING (untriaged)` until someone looks at it.

    python bench/volume_triage.py RECORDS.jsonl ...     # each finding run's triage, or "untriaged"
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

KIP_903_FIXED = ("3.5", "3.7", "3.8", "3.9", "4.0", "4.1")


def stale_expansion_of_an_emptied_replica(record: dict[str, Any]) -> bool:
    """KAFKA-14139's shape, read off the run's history: leader L's AlterPartition is held, broker B
    restarts with an empty disk, L's replication link is cut, the held request is released, and an
    observation while L is still cut off (and still running) shows B in the ISR — B cannot have
    caught up from L, so only the stale request admitted it. Before KIP-903 (3.5) the request names
    no broker epochs: `ReplicationControlManager.validateAlterPartitionData` at 3.3.2 checks the
    leader and partition epochs and that no member is fenced or shutting down
    (`ineligibleReplicasForIsr`, KIP-841) — the restarted broker is registered and unfenced again,
    so it passes."""
    if record["level"] != "cluster" or record["release"] in KIP_903_FIXED or not record.get("history"):
        return False
    held: set[int] = set()
    cut: set[int] = set()
    emptied: set[int] = set()
    watch: dict[int, set[int]] = {}  # a released leader, still cut off → the emptied brokers to look for
    for e in record["history"]["entries"]:
        if e["type"] == "observe":
            isr = {node - 100 for node in e["view"].get("isr", [])} if e["view"].get("exists") else set()
            if any(isr & brokers for brokers in watch.values()):
                return True
            continue
        op, args = e["op"], e["args"]
        if op == "hold_api" and args.get("api") == "AlterPartition":
            held.add(args["broker"])
        elif op == "restart" and args.get("lose") == "disk" and held:
            emptied.add(args["broker"])
        elif op == "net" and args.get("link") == "replication":
            (cut.add if args.get("mode") == "cut" else cut.discard)(args["broker"])
            if args.get("mode") != "cut":
                watch.pop(args["broker"], None)
        elif op == "heal":
            cut.clear()
            watch.clear()
        elif op in ("crash", "restart", "clean_restart"):  # the leader's links or its leadership change
            cut.discard(args["broker"])
            watch.pop(args["broker"], None)
        elif op == "release_api" and args.get("api") == "AlterPartition" and args["broker"] in held & cut:
            held.discard(args["broker"])
            watch[args["broker"]] = emptied - {args["broker"]}
    return False


def port_taken_at_start(record: dict[str, Any]) -> bool:
    """The cluster could not start because another process held a port of its block: isrcheck's
    failure (kafka-cluster now moves to another block, `PortsTaken`), not the target's."""
    return any(f["kind"] == "crash" and f["operation"] == "open" and "Address already in use" in f["message"]
               for f in record["findings"])


TRIAGE_RULES: dict[str, tuple[Callable[[dict[str, Any]], bool], str]] = {
    "isrcheck adapter bug, fixed (port race at start)": (
        port_taken_at_start,
        "another process took a port of the block kafka-cluster had chosen, between its look and the "
        "bind; the adapter now starts the cluster on another block (adapters/real_kafka/kafka_cluster.py, "
        "`PortsTaken`), so such a run is no longer a crash"),
    "KAFKA-14139 (real Kafka bug before 3.5)": (
        stale_expansion_of_an_emptied_replica,
        "a stale AlterPartition, held while a follower restarted with an empty disk and released while "
        "the leader replicated to no one, admits the emptied follower to the ISR; its election loses the "
        "records acknowledged before (P-ACK, P-HWC). Fixed in 3.5 by KIP-903 (the request names broker "
        "epochs). The first such run, replayed step by step with `isrcheck replay`, loses the same records "
        "on 3.3.2; on 3.5.2 the same steps lose nothing: the emptied follower stays out of the ISR "
        "(ISR [103]) and the partition waits for its leader"),
}
"""A finding against real Kafka is a claim about Kafka: each rule recognises one triaged cause on the
run's own history (not its signature), so the same signature from another cause stays untriaged."""


def triage_of(record: dict[str, Any]) -> str | None:
    """The label of the first rule that recognises the run, or None."""
    return next((label for label, (rule, _) in TRIAGE_RULES.items() if rule(record)), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", nargs="+", type=Path, help="run record files (.jsonl)")
    args = parser.parse_args(argv)
    from isrcheck.reports.records_io import RecordReader

    for record in RecordReader(args.records):
        if record["findings"]:
            print(f"{record['run_id']} {record['release']} {record['outcome']}: "
                  f"{triage_of(record) or 'FINDING (untriaged)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
