"""Run the equal-epoch reproducer once on real brokers and keep its full evidence in a directory
(docs/evidence/<name>/): the history (every operation and observation, judged again by
`isrcheck check`-style code), every node's server/controller/state-change logs trimmed to the
run's window, and the controller's metadata log as `kafka-dump-log.sh --cluster-metadata-decoder`
prints it (record lines only: batch headers and the NO_OP_RECORDs the controller writes every
500 ms left out).

    python3 bench/equal_epoch_evidence.py --kafka 3.9 --out docs/evidence/equal-epoch-defaults-3.9
    python3 bench/equal_epoch_evidence.py --kafka 3.9 --classpath partition-patched.jar --out DIR

Kafka's default timings (`kafka-defaults=1`); the steps are
`isrcheck.conformance.engine.cluster_history.equal_epoch_default_steps` (docs/upstream/equal-epoch-isr-expansion.md).
Prints the verdict and the timeline; exit 0 when the run completed, whatever it found.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from isrcheck.adapters.real_kafka.cluster_processes import KAFKA_SESSION_TIMEOUT_MS, resolve_kafka_home
from isrcheck.adapters.real_kafka.kafka_cluster import KafkaClusterTarget
from isrcheck.conformance.engine.cluster_history import equal_epoch_default_steps, run_history
from isrcheck.conformance.properties.black_box_history import HistoryConfig

LOGS = ("server.log", "controller.log", "state-change.log")
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")
NOISE = ("GroupCoordinator", "GroupMetadataManager", "TransactionCoordinator", "Log4jControllerRegistration",
         "[SocketServer", "DataPlaneAcceptor", "AppInfoParser", "[BrokerToControllerChannelManager", "MetadataLoader",
         "kafka.server.metadata.BrokerMetadataPublisher", "LogLoader", "ProducerStateManager", "SnapshotFile",
         "[ExpirationReaper", "[ThrottledChannelReaper", "JmxReporter", "KafkaScheduler", "[LogDirFailureHandler",
         "SharePartitionManager", "ClientQuotaMetadataManager", "DynamicConfigPublisher")


def trimmed(text: str, start: str) -> str:
    """The log lines stamped at or after `start`: continuation lines (the config dump printed at
    every start) and routine start-up components (`NOISE`) left out."""
    kept = []
    for line in text.splitlines():
        match = STAMP.match(line)
        if match and match.group(1) >= start and not any(n in line for n in NOISE):
            kept.append(line)
    return "\n".join(kept) + ("\n" if kept else "")


def metadata_records(dump: str) -> str:
    """The record lines of a `--cluster-metadata-decoder` dump (each has its offset, CreateTime and
    payload), without the batch headers and without NO_OP_RECORDs."""
    return "".join(line + "\n" for line in dump.splitlines()
                   if line.startswith("| offset:") and "NO_OP_RECORD" not in line)


def window_start(logs: Path, topic: str) -> str:
    """One second before the first log line naming the topic (its creation)."""
    stamps = []
    for path in logs.glob("*/state-change.log"):
        for line in path.read_text(errors="replace").splitlines():
            match = STAMP.match(line)
            if match and topic in line:
                stamps.append(match.group(1))
                break
    first = min(stamps)
    seconds = int(first[17:19]) - 1
    return first[:17] + f"{max(seconds, 0):02d}" + first[19:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="3.9")
    parser.add_argument("--kafka-home")
    parser.add_argument("--classpath", help="jar or class directory put first on every node's class path")
    parser.add_argument("--trigger", default="shutdown", choices=("shutdown", "crash"))
    parser.add_argument("--first-change", default="shrink", choices=("shrink", "expansion"),
                        help="the change the leader learns from its answer (3.3/3.5: expansion)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    home = resolve_kafka_home(args.kafka, args.kafka_home)
    if home is None:
        print(f"equal_epoch_evidence: no KAFKA_HOME for {args.kafka}", file=sys.stderr)
        return 2
    options = {"kafka-home": str(home), "kafka-defaults": "1"}
    if args.classpath:
        options["classpath"] = args.classpath
    target = KafkaClusterTarget(options)
    saved = Path(tempfile.mkdtemp(prefix="isrcheck-evidence-"))
    close = target.close

    def close_after_saving() -> None:  # the logs and the metadata log, before the cluster removes them
        cluster = target.cluster
        workdir = getattr(cluster, "workdir", None)
        if workdir is not None:
            shutil.copytree(workdir / "logs", saved / "logs")
            shutil.copytree(workdir / "data" / "controller-1" / "__cluster_metadata-0", saved / "metadata")
        target.keep_logs = False  # saved here: the cluster's own copy can go
        close()

    target.close = close_after_saving  # type: ignore[method-assign]
    steps = equal_epoch_default_steps(args.trigger, args.first_change)
    config = HistoryConfig(session_timeout_ms=KAFKA_SESSION_TIMEOUT_MS)
    try:
        history, findings = run_history(target, args.kafka, steps, config)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        verdict = [{"property": f.property, "step": f.step, "message": f.message, "evidence": f.evidence}
                   for f in findings]
        record: dict[str, Any] = {"release": args.kafka, "kafka_home": str(home), "options": options,
                                  "trigger": args.trigger, "first_change": args.first_change,
                                  "config": {"session_timeout_ms": config.session_timeout_ms},
                                  "violations": verdict, "entries": history}
        (out / "history.json").write_text(json.dumps(record, indent=1) + "\n")
        start = window_start(saved / "logs", "eqdefault")
        for node in sorted(p.name for p in (saved / "logs").iterdir()):
            for name in LOGS:
                source = saved / "logs" / node / name
                text = trimmed(source.read_text(errors="replace"), start) if source.exists() else ""
                if text:
                    (out / "logs" / node).mkdir(parents=True, exist_ok=True)
                    (out / "logs" / node / name).write_text(text)
        segment = sorted((saved / "metadata").glob("*.log"))
        dump = subprocess.run([str(home / "bin" / "kafka-dump-log.sh"), "--cluster-metadata-decoder", "--files",
                               ",".join(map(str, segment))], capture_output=True, text=True, check=True, timeout=300,
                              env={**os.environ, "KAFKA_HEAP_OPTS": "-Xmx128m"}).stdout
        (out / "metadata-log.txt").write_text(metadata_records(dump))
        print(f"{args.kafka} ({'classpath=' + args.classpath if args.classpath else 'unpatched'}, "
              f"trigger {args.trigger}, first change {args.first_change}): "
              f"{sorted(v['property'] for v in verdict) or 'no violation'}")
        for e in history:
            if e["type"] == "op":
                print(f"{e['t']:7.1f} {e['op']} {json.dumps(e['args'])} -> {json.dumps(e.get('result'))[:160]}")
        return 0
    finally:
        shutil.rmtree(saved, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
