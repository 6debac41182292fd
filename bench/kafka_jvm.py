"""Benchmark: steps per second against Kafka's own controller classes (kafka-jvm) beside the
in-process reference and, with --with-kafka-local, the over-the-wire real controller, in one run
(target ≥ 1,000 steps/s against Kafka's code, campaign included).

    python bench/kafka_jvm.py [--kafka 3.9] [--kafka-home DIR] [--seconds 5] [--examples 200] [--json]
                              [--with-kafka-local]

Figures (docs/kafka-jvm.md):

* ``ops``: operations per second through `Target.execute`, each answered by Kafka's code:
  ``alter_partition`` — a leader toggling its ISR between [1,2,3] and [1,2] with the epochs of the
  previous answer (every request writes one PartitionChangeRecord); ``heartbeat`` — a no-op
  heartbeat of an unfenced broker; ``step`` — one AlterPartition plus the observation of the
  partition and the leader, as the engine does it. The same three against the in-process
  reference (`ReferenceTarget`).
* ``jvm_start_s``: from starting the JVM to the answer to its first `open` (each campaign pays it
  once: its runs share one JVM).
* ``engine``: `run_campaign` steps per second (controller machine, same seed and size), wall time
  of the whole campaign, the JVM's start included: the reference alone; kafka-jvm judged by the
  properties alone (``--no-differential``: every step runs on Kafka's code only); kafka-jvm with
  the differential (every step runs on both).
* ``--with-kafka-local``: the same engine figure over the wire against a real controller process
  of the same release (`kafka-local`, `session-timeout-ms=20000` so that a loaded machine does not
  expire its ghost brokers; ports from $ISRCHECK_KAFKA_PORTS), on a tenth of the runs: slow (tens
  of steps per second) and off by default.

The machine's load average is printed with the figures: on a shared 2-core machine they vary
several-fold with what else runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from isrcheck.adapters.base import Target
from isrcheck.adapters.kafka_jvm.target import SHARED_KAFKA, KafkaJvmTarget
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign


def rate(seconds: float, step: Callable[[], None]) -> dict[str, float]:
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for _ in range(20):
            step()
        count += 20
    elapsed = time.perf_counter() - started
    return {"ops": count, "seconds": round(elapsed, 3), "per_second": round(count / elapsed, 1)}


def prepared(target: Target, release: str) -> int:
    target.open(release, {})
    for broker in (1, 2, 3):
        target.execute("register_broker", {"broker": broker, "incarnation": f"b{broker}"})
        target.execute("unfence_broker", {"broker": broker})
    target.execute("create_topic", {"topic": "bench", "assignment": [[1, 2, 3]]})
    return int(target.observe("broker", {"broker": 1})["broker_epoch"])


def bench_ops(target: Target, release: str, seconds: float) -> dict[str, Any]:
    epoch = prepared(target, release)
    state = {"isr": [1, 2, 3], "le": 0, "pe": 0}

    def alter_partition() -> None:
        isr = [1, 2] if len(state["isr"]) == 3 else [1, 2, 3]
        result = target.execute("alter_partition", {
            "version": 2, "broker": 1, "broker_epoch": epoch, "topic": "bench", "partition": 0,
            "leader_epoch": state["le"], "partition_epoch": state["pe"], "isr": [[b, -1] for b in isr],
            "leader_recovery_state": "RECOVERED",
        })
        assert result["error"] == "NONE", result
        state.update(isr=result["isr"], le=result["leader_epoch"], pe=result["partition_epoch"])

    def heartbeat() -> None:
        result = target.execute("heartbeat", {"broker": 2, "broker_epoch": target.observe("broker", {"broker": 2})[
            "broker_epoch"], "want_fence": False, "want_shut_down": False, "caught_up": True})
        assert result["error"] == "NONE", result

    def step() -> None:  # kafka-jvm: one round trip (the observations come with the answer)
        alter_partition()
        target.observe("partition", {"topic": "bench", "partition": 0})
        target.observe("broker", {"broker": 1})

    rate(min(2.0, seconds), step)  # warm-up (the JVM's compiler; the reference's caches)
    figures = {"alter_partition": rate(seconds, alter_partition), "heartbeat": rate(seconds, heartbeat),
               "step": rate(seconds, step)}
    target.close()
    return figures


def bench_engine(adapter: str, release: str, examples: int, differential: bool = True) -> dict[str, Any]:
    config = CampaignConfig(adapter=adapter, release=release, examples=examples, steps=50, seed=7,
                            batch_size=examples, stop_at_first=False, differential=differential)
    started = time.perf_counter()
    result = run_campaign(config)
    elapsed = time.perf_counter() - started
    return {"runs": result.runs, "steps": result.steps, "seconds": round(elapsed, 2),
            "steps_per_second": round(result.steps / elapsed, 1), "findings": dict(result.signatures)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="3.9", help="release line (default 3.9)")
    parser.add_argument("--kafka-home", help=f"default {SHARED_KAFKA}/<release>")
    parser.add_argument("--seconds", type=float, default=5.0, help="per ops figure")
    parser.add_argument("--examples", type=int, default=200, help="engine runs per campaign")
    parser.add_argument("--with-kafka-local", action="store_true", help="add the over-the-wire real controller")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = Path(args.kafka_home) if args.kafka_home else SHARED_KAFKA / args.kafka
    adapter = f"kafka-jvm,kafka-home={home}"
    report: dict[str, Any] = {"kafka": args.kafka, "kafka_home": str(home), "cpus": os.cpu_count(),
                              "load_average_before": [round(x, 1) for x in os.getloadavg()]}
    jvm = KafkaJvmTarget(kafka_home=str(home))
    try:
        started = time.perf_counter()
        jvm.open(args.kafka, {})
        report["jvm_start_s"] = round(time.perf_counter() - started, 3)
        jvm.close()
        report["ops"] = {"kafka-jvm": bench_ops(jvm, args.kafka, args.seconds),
                         "reference": bench_ops(ReferenceTarget(), args.kafka, args.seconds)}
    finally:
        jvm.shutdown()
    report["engine"] = {
        "reference": bench_engine("reference", args.kafka, args.examples),
        "kafka-jvm (properties only)": bench_engine(adapter, args.kafka, args.examples, differential=False),
        "kafka-jvm + reference (differential)": bench_engine(adapter, args.kafka, args.examples),
    }
    if args.with_kafka_local:
        report["engine"]["kafka-local (over the wire)"] = bench_engine(
            f"kafka-local,kafka-home={home},session-timeout-ms=20000", args.kafka, max(2, args.examples // 10))
    report["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Kafka {args.kafka} ({home}); load average {report['load_average_before']} -> "
          f"{report['load_average_after']} on {report['cpus']} cpus")
    print(f"kafka-jvm start (JVM up, first open answered): {report['jvm_start_s']:.2f} s")
    for name, figures in report["ops"].items():
        for label, figure in figures.items():
            print(f"ops    {name:10s} {label:16s} {figure['per_second']:>9,.0f}/s")
    for name, figure in report["engine"].items():
        print(f"engine {name:38s} {figure['steps_per_second']:>8,.1f} steps/s  ({figure['runs']} runs, "
              f"{figure['steps']} steps, findings {figure['findings'] or 'none'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
