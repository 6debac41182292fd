"""Benchmark: where a kafka-local step's time goes — a controller campaign against a real KRaft
controller process, timed per operation.

    ISRCHECK_KAFKA_PORTS=26000-26999 python bench/kafka_local_ops.py --kafka 4.1 [--kafka-home DIR]
        [--examples 20] [--steps 30] [--seed 7] [--session-timeout-ms 3000] [--json]

It runs `run_campaign` (controller level, the same seed on every release) with `KafkaWireTarget`'s
`execute` and `sleep` wrapped: for each operation it prints how often it ran, its mean and total
wall time, and how much of that the target spent sleeping — waiting for the controller to expire a
broker session (`wait_for_expiry`, `register_after_expiry`: §4.1 check 3 / §4.3 on 4.x, where a
session is a contact per (broker, epoch) that only its expiry removes,
`BrokerHeartbeatTracker.maybeRemoveExpired` at 4.0.1 / 4.1.1). The engine's steps per second and
the load average are printed with the figures: on a shared 2-core machine they vary several-fold.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from isrcheck.adapters.kafka_jvm.target import SHARED_KAFKA
from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

CALLS: dict[str, int] = defaultdict(int)
SECONDS: dict[str, float] = defaultdict(float)
SLEPT: dict[str, float] = defaultdict(float)
WAITS: dict[str, int] = defaultdict(int)
CURRENT: list[str] = []


def instrument() -> None:
    """Wrap `execute` (wall time per op) and `sleep` (time waited, charged to the current op)."""
    execute, sleep = KafkaWireTarget.execute, KafkaWireTarget.sleep

    def timed_execute(self: KafkaWireTarget, op: str, args: Any) -> Any:
        CURRENT.append(op)
        started, slept = time.perf_counter(), SLEPT.get(op, 0.0)
        try:
            return execute(self, op, args)
        finally:
            CURRENT.pop()
            CALLS[op] += 1
            SECONDS[op] += time.perf_counter() - started
            if SLEPT.get(op, 0.0) > slept:
                WAITS[op] += 1

    def timed_sleep(self: KafkaWireTarget, seconds: float) -> None:
        started = time.perf_counter()
        try:
            sleep(self, seconds)
        finally:
            SLEPT[CURRENT[-1] if CURRENT else "(between operations)"] += time.perf_counter() - started

    def timed(name: str, method: Any) -> Any:
        def call(self: KafkaWireTarget, *args: Any) -> Any:
            CURRENT.append(name)
            started = time.perf_counter()
            try:
                return method(self, *args)
            finally:
                CURRENT.pop()
                CALLS[name] += 1
                SECONDS[name] += time.perf_counter() - started
        return call

    KafkaWireTarget.open = timed("(open: controller start or reuse, anchor)", KafkaWireTarget.open)  # type: ignore[method-assign]
    KafkaWireTarget.close = timed("(close: delete topics, unregister)", KafkaWireTarget.close)  # type: ignore[method-assign]
    KafkaWireTarget.execute = timed_execute  # type: ignore[method-assign]
    KafkaWireTarget.sleep = timed_sleep  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="4.1", help="release line (default 4.1)")
    parser.add_argument("--kafka-home", help=f"default {SHARED_KAFKA}/<release>")
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--session-timeout-ms", type=int, default=None, help="kafka-local's (default 3000)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = Path(args.kafka_home) if args.kafka_home else SHARED_KAFKA / args.kafka
    adapter = f"kafka-local,kafka-home={home}"
    if args.session_timeout_ms is not None:
        adapter += f",session-timeout-ms={args.session_timeout_ms}"
    instrument()
    load_before = [round(x, 1) for x in os.getloadavg()]
    config = CampaignConfig(adapter=adapter, release=args.kafka, examples=args.examples, steps=args.steps,
                            seed=args.seed, batch_size=args.examples, stop_at_first=False)
    started = time.perf_counter()
    result = run_campaign(config)
    elapsed = time.perf_counter() - started
    ops = {op: {"calls": CALLS[op], "waits": WAITS.get(op, 0), "seconds": round(SECONDS[op], 2),
                "mean_ms": round(1000 * SECONDS[op] / CALLS[op], 1), "slept_s": round(SLEPT.get(op, 0.0), 2)}
           for op in sorted(CALLS, key=lambda o: -SECONDS[o])}
    load_after = [round(x, 1) for x in os.getloadavg()]
    report = {"kafka": args.kafka, "adapter": adapter, "load_average": [load_before, load_after],
              "runs": result.runs, "steps": result.steps, "seconds": round(elapsed, 1),
              "steps_per_second": round(result.steps / elapsed, 1), "findings": dict(result.signatures),
              "execute_seconds": round(sum(SECONDS.values()), 1), "slept_seconds": round(sum(SLEPT.values()), 1),
              "ops": ops}
    waits = sum(WAITS.values())
    timeout_ms = args.session_timeout_ms or 3000
    slept = sum(SLEPT.values())
    report["bound"] = {
        "waiting_operations": waits, "session_timeout_ms": timeout_ms,
        "mean_wait_s": round(slept / waits, 3) if waits else 0.0,
        "steps_per_second_without_waits": round(result.steps / max(1e-9, elapsed - slept), 1),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Kafka {args.kafka}: {adapter}; load average {report['load_average'][0]} -> {report['load_average'][1]}")
    print(f"campaign: {result.runs} runs, {result.steps} steps in {elapsed:.1f} s = {report['steps_per_second']} "
          f"steps/s; findings {report['findings'] or 'none'}")
    print(f"time in the target: {report['execute_seconds']} s, "
          f"of it sleeping (session waits): {report['slept_seconds']} s")
    print(f"{'operation':42s} {'calls':>6s} {'waits':>6s} {'mean ms':>8s} {'total s':>8s} {'slept s':>8s}")
    for op, figure in ops.items():
        print(f"{op:42s} {figure['calls']:>6d} {figure['waits']:>6d} {figure['mean_ms']:>8.1f} "
              f"{figure['seconds']:>8.2f} {figure['slept_s']:>8.2f}")
    bound = report["bound"]
    print(f"bound: {waits} of {result.steps} steps waited for a broker session to expire, {bound['mean_wait_s']} s "
          f"each on average with broker.session.timeout.ms={timeout_ms}; without those waits the same campaign "
          f"ran at {bound['steps_per_second_without_waits']} steps/s.")
    if waits:
        print("  On 4.x a session is a contact per (broker id, epoch) in BrokerHeartbeatTracker that only its "
              "expiry removes (KAFKA-17793), so a new incarnation of a broker the reference has just fenced is "
              "refused (DUPLICATE_BROKER_REGISTRATION) until the timeout has passed since that broker's last "
              "heartbeat; 3.x lets a fenced broker's new incarnation in at once. The wait scales with "
              "session-timeout-ms= (kafka-local's option); below about 1000 ms the ghosts' background "
              "heartbeats (every timeout/4) risk a spurious expiry on a loaded machine.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
