"""Benchmark: AlterPartition round trips per second through kafka-wire against serve-controller on
loopback (target ≥ 2,000/s), and the engine's steps per second over the wire.

    python bench/wire.py [--seconds 5] [--kafka 3.9] [--examples 40] [--lengths 40,400] [--kafka-home DIR]
                         [--ports 25000-25999] [--json]

Three figures for AlterPartition (each a leader toggling its ISR between [1,2,3] and [1,2] with
the epochs of the previous answer, so every request writes one PartitionChangeRecord):

* ``raw``      — one KafkaConnection, kio entities built by hand (the wire + server floor);
* ``target``   — `KafkaWireTarget.execute("alter_partition", ...)` with resolved arguments;
* ``resolved`` — as the scenario runner does it: `current` epochs read through `observe`
  (metadata-log replay) before each request.

Then `run_campaign` with the kafka-wire adapter (controller machine, 3.9, 30 steps per run) next
to the same campaign against the in-process reference. The server is a child process, so
client and server use both cores of the machine.

Then the same wire campaign at each of ``--lengths`` runs (each against a fresh server, whose
log grows with every run): the engine's steps per second must not fall with the campaign's
length (the issue-18 target; every run once reconnected and replayed the whole log). The last
tenth of the longest campaign is also shown on its own.

Servers listen on a free port of ``--ports`` (default 25000–25999; helpers sharing the machine
each pass their own range).

With ``--kafka-home DIR`` (a real Kafka distribution of that release, e.g. ../shared/kafka/3.9)
the same campaign also runs against a real controller-only node on loopback (`kafka-local`,
observation by Raft Fetch; target ≥ 100 engine steps/s).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from isrcheck.adapters.kafka_wire.controller_endpoints import LISTENING, FixedEndpoint
from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
from isrcheck.adapters.wire.apis import ALTER_PARTITION, nested_class
from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

PORTS = range(25000, 26000)


def port_range(text: str) -> range | None:
    """`LOW-HIGH`, inclusive; None unless it is a non-empty range of TCP ports."""
    low, _, high = text.partition("-")
    try:
        ports = range(int(low), int(high) + 1)
    except ValueError:
        return None
    return ports if ports and ports.start >= 1 and ports.stop <= 65536 else None


def free_port() -> int:
    for port in PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def start_server(release: str, log_dir: str, session_ms: int = 3000) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "isrcheck", "serve-controller", "--kafka", release, "--port", str(free_port()),
         "--metadata-log", log_dir, "--session-timeout-ms", str(session_ms)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None
    match = LISTENING.search(process.stdout.readline())
    if match is None:
        process.kill()
        raise SystemExit("serve-controller did not start")
    return process, int(match.group(2))


@contextlib.contextmanager
def served(release: str, session_ms: int = 3000) -> Iterator[tuple[int, str]]:
    """A fresh serve-controller (its own metadata log: no replay of another's) for the block:
    (port, log directory); stopped and its log removed after."""
    log_dir = tempfile.mkdtemp(prefix="isrcheck-bench-")
    process, port = start_server(release, log_dir, session_ms)
    try:
        yield port, log_dir
    finally:
        process.terminate()
        process.wait(10)
        shutil.rmtree(log_dir, ignore_errors=True)


def prepared_target(port: int, log_dir: str, release: str) -> KafkaWireTarget:
    target = KafkaWireTarget(FixedEndpoint("127.0.0.1", port, log_dir, 3000))
    target.open(release, {})
    for broker in (1, 2, 3):
        target.execute("register_broker", {"broker": broker, "incarnation": f"b{broker}"})
        target.execute("unfence_broker", {"broker": broker})
    target.execute("create_topic", {"topic": "bench", "assignment": [[1, 2, 3]]})
    return target


def rate(seconds: float, step: Any) -> dict[str, float]:
    count, started = 0, time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        for _ in range(50):
            step()
        count += 50
    elapsed = time.perf_counter() - started
    return {"round_trips": count, "seconds": round(elapsed, 3), "per_second": round(count / elapsed, 1),
            "mean_ms": round(elapsed / count * 1000, 3)}


def bench_alter_partition(port: int, log_dir: str, release: str, seconds: float) -> dict[str, Any]:
    target = prepared_target(port, log_dir, release)
    epoch = target.observe("broker", {"broker": 1})["broker_epoch"]
    state = {"isr": [1, 2, 3], "le": 0, "pe": 0}

    def via_target() -> None:
        isr = [1, 2] if len(state["isr"]) == 3 else [1, 2, 3]
        result = target.execute("alter_partition", {
            "version": 3, "broker": 1, "broker_epoch": epoch, "topic": "bench", "partition": 0,
            "leader_epoch": state["le"], "partition_epoch": state["pe"], "isr": [[b, -1] for b in isr],
        })
        assert result["error"] == "NONE", result
        state.update(isr=result["isr"], le=result["leader_epoch"], pe=result["partition_epoch"])

    def resolved() -> None:
        current = target.observe("partition", {"topic": "bench", "partition": 0})
        state.update(le=current["leader_epoch"], pe=current["partition_epoch"], isr=current["isr"])
        via_target()

    connection = target.connection
    assert connection is not None
    classes = connection.classes_for(ALTER_PARTITION, 3)
    part_cls, topic_cls = nested_class(classes.request, "PartitionData"), nested_class(classes.request, "TopicData")
    member_cls = nested_class(classes.request, "BrokerState")
    ns = target.namespace
    topic_id = target.topic_id(ns.topic("bench"))

    def raw() -> None:
        isr = [1, 2] if len(state["isr"]) == 3 else [1, 2, 3]
        request = classes.request(broker_id=ns.broker(1), broker_epoch=epoch, topics=(topic_cls(
            topic_id=topic_id, partitions=(part_cls(
                partition_index=0, leader_epoch=state["le"], partition_epoch=state["pe"],
                new_isr_with_epochs=tuple(member_cls(broker_id=ns.broker(b), broker_epoch=-1) for b in isr),
            ),)),))
        answer = connection.request(request).topics[0].partitions[0]
        state.update(isr=isr, le=answer.leader_epoch, pe=answer.partition_epoch)

    results = {"raw": rate(seconds, raw)}
    target.sync()
    current = target.observe("partition", {"topic": "bench", "partition": 0})
    state.update(le=current["leader_epoch"], pe=current["partition_epoch"], isr=current["isr"])
    results["target"] = rate(seconds, via_target)
    results["resolved"] = rate(seconds, resolved)
    target.close()
    target.shutdown()
    return results


def bench_engine(port: int, log_dir: str, release: str, examples: int) -> dict[str, Any]:
    figures = {}
    for label, adapter in (("kafka-wire", f"kafka-wire,bootstrap=127.0.0.1:{port},metadata-log={log_dir}"),
                           ("reference", "reference")):
        config = CampaignConfig(adapter=adapter, release=release, examples=examples, steps=30, seed=7,
                                batch_size=examples, stop_at_first=True)
        result = run_campaign(config)
        figures[label] = {"runs": result.runs, "steps": result.steps, "seconds": round(result.seconds, 2),
                          "steps_per_second": round(result.steps / result.seconds, 1),
                          "findings": dict(result.signatures)}
    return figures


def bench_sessions(release: str, examples: int, sessions: list[int]) -> dict[str, Any]:
    """The engine against an already-running serve-controller (docs/running.md's wire example), one
    server per session timeout, the same seeded runs: a fencing step waits out a broker session,
    so the session timeout bounds the rate."""
    figures = {}
    for session_ms in sessions:
        with served(release, session_ms) as (port, log_dir):
            adapter = f"kafka-wire,bootstrap=127.0.0.1:{port},metadata-log={log_dir},session-timeout-ms={session_ms}"
            result = run_campaign(CampaignConfig(adapter=adapter, release=release, examples=examples, steps=30, seed=7,
                                                 batch_size=examples, stop_at_first=True))
        figures[str(session_ms)] = {"runs": result.runs, "steps": result.steps, "seconds": round(result.seconds, 2),
                                    "steps_per_second": round(result.steps / result.seconds, 1)}
    return figures


def bench_campaign_length(port: int, log_dir: str, release: str, runs: int) -> dict[str, Any]:
    """One wire campaign of `runs` runs (batches of 20, whatever the length): steps/s overall and
    over its last tenth of runs."""
    marks: list[tuple[int, int, float]] = []
    config = CampaignConfig(adapter=f"kafka-wire,bootstrap=127.0.0.1:{port},metadata-log={log_dir}", release=release,
                            examples=runs, steps=30, seed=7, batch_size=20, stop_at_first=True)
    result = run_campaign(config, on_progress=lambda done, steps, found, s: marks.append((done, steps, s)))
    start = next((m for m in reversed(marks) if m[0] <= 0.9 * result.runs), None)
    last = None
    if start is not None and marks[-1][2] > start[2]:
        last = round((marks[-1][1] - start[1]) / (marks[-1][2] - start[2]), 1)
    return {"runs": result.runs, "steps": result.steps, "seconds": round(result.seconds, 2),
            "steps_per_second": round(result.steps / result.seconds, 1), "last_tenth_steps_per_second": last,
            "findings": dict(result.signatures)}


def bench_engine_real(home: str, release: str, examples: int) -> dict[str, Any]:
    """The same campaign against a real KRaft controller started from `home` (its JVM start is
    excluded: one warm-up run first)."""
    adapter = f"kafka-local,kafka-home={home}"
    warm = run_campaign(CampaignConfig(adapter=adapter, release=release, examples=1, steps=5, seed=1, batch_size=1))
    config = CampaignConfig(adapter=adapter, release=release, examples=examples, steps=30, seed=7,
                            batch_size=examples, stop_at_first=True)
    result = run_campaign(config)
    return {"runs": result.runs, "steps": result.steps, "seconds": round(result.seconds, 2),
            "steps_per_second": round(result.steps / result.seconds, 1), "findings": dict(result.signatures),
            "warm_up_seconds": round(warm.seconds, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per AlterPartition figure")
    parser.add_argument("--kafka", default="3.9")
    parser.add_argument("--examples", type=int, default=40, help="engine runs")
    parser.add_argument("--lengths", default="40,400", help="wire campaign lengths (runs) to compare")
    parser.add_argument("--parts", default="alter_partition,engine,lengths",
                        help="which figures (default all: alter_partition,engine,lengths)")
    parser.add_argument("--kafka-home", help="also run the engine against a real controller from this KAFKA_HOME")
    parser.add_argument("--ports", default="25000-25999", help="servers listen on a free port of LOW-HIGH")
    parser.add_argument("--sessions", default="9000,1000",
                        help="session timeouts (ms) of the running-server figure (part `sessions`)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    global PORTS
    ports = port_range(args.ports)
    if ports is None:
        print(f"bench/wire.py: --ports wants LOW-HIGH within 1-65535, not {args.ports!r}", file=sys.stderr)
        return 2
    PORTS = ports
    report: dict[str, Any] = {"kafka": args.kafka, "cpus": os.cpu_count()}
    wanted = set(args.parts.split(","))
    parts: list[tuple[str, Any]] = [
        (name, bench) for name, bench in (
            ("alter_partition", lambda p, d: bench_alter_partition(p, d, args.kafka, args.seconds)),
            ("engine", lambda p, d: bench_engine(p, d, args.kafka, args.examples)),
        ) if name in wanted
    ]
    lengths = [int(n) for n in args.lengths.split(",") if n] if "lengths" in wanted else []
    for runs in lengths:
        parts.append((f"length {runs}", lambda p, d, n=runs: bench_campaign_length(p, d, args.kafka, n)))
    for part, bench in parts:
        with served(args.kafka) as (port, log_dir):
            report[part] = bench(port, log_dir)
    report["campaign_length"] = {str(n): report.pop(f"length {n}") for n in lengths}
    if "sessions" in wanted:
        report["sessions"] = bench_sessions(args.kafka, args.examples, [int(s) for s in args.sessions.split(",") if s])
    if args.kafka_home:
        report.setdefault("engine", {})["kafka-local"] = bench_engine_real(args.kafka_home, args.kafka, args.examples)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for label, figure in report.get("alter_partition", {}).items():
            print(f"AlterPartition {label:9s} {figure['per_second']:>9,.0f}/s  ({figure['mean_ms']:.3f} ms mean)")
        for label, figure in report.get("engine", {}).items():
            print(f"engine {label:10s} {figure['steps_per_second']:>9,.1f} steps/s  "
                  f"({figure['runs']} runs, {figure['steps']} steps)")
        for session_ms, figure in report.get("sessions", {}).items():
            print(f"running server, session {int(session_ms):>5} ms {figure['steps_per_second']:>9,.1f} steps/s  "
                  f"({figure['runs']} runs, {figure['steps']} steps, {figure['seconds']} s)")
        by_length = report["campaign_length"]
        for runs, figure in by_length.items():
            print(f"wire campaign of {runs:>5} runs {figure['steps_per_second']:>9,.1f} steps/s  "
                  f"(last tenth {figure['last_tenth_steps_per_second'] or 0:,.1f} steps/s; {figure['runs']} runs, "
                  f"{figure['steps']} steps, {figure['seconds']} s)")
        if len(by_length) > 1:
            first, last = by_length[str(min(lengths))], by_length[str(max(lengths))]
            print(f"steps/s at {max(lengths)} runs / at {min(lengths)} runs: "
                  f"{last['steps_per_second'] / first['steps_per_second']:.2f} (target: not below 1, within noise)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
