"""Containers beside processes, per release: start-up, steps per second, and scenario parity.

For each release (an `apache/kafka:<version>` image and its ../shared/kafka/<release> KAFKA_HOME):

* controller level — seconds until a controller-only node answers (`KafkaControllers`, the
  launcher `kafka-local` and `kafka-docker` share), and the engine's steps per second on a seeded
  campaign, process beside container;
* cluster level — seconds until a 1+3 cluster has started (`RealKafkaCluster` on a `ProcessHost`
  and on a `ContainerHost`), and the seconds a crash, a restart and a pause take on each;
* parity (``--parity``) — the whole scenario suite on `kafka-local` and on `kafka-docker`:
  passed / failed / skipped, and whether every scenario ended the same on both.

    python bench/containers.py [--releases 3.9.0,3.7.1] [--examples 10] [--parity]

Needs a Docker engine with the images (../shared/docker/build-image.sh builds them offline).
The machine may be shared: compare the two columns of one run, not runs with each other.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def home_of(version: str) -> Path:
    return REPO.parent / "shared" / "kafka" / ".".join(version.split(".")[:2])


def controller_start(runner_factory: Any, release: str) -> float:
    from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
    from isrcheck.adapters.real_kafka.kafka_launcher import KafkaControllers

    quorum = KafkaControllers(runner_factory, 3000)
    started = time.monotonic()
    try:
        quorum.endpoint_for(ControllerSettings.for_run(release, {}))
        return time.monotonic() - started
    finally:
        quorum.close()


def campaign_rate(adapter: str, release: str, examples: int) -> tuple[float, int, dict[str, int]]:
    from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

    with tempfile.TemporaryDirectory(prefix="isrcheck-bench-") as records:
        started = time.monotonic()
        result = run_campaign(CampaignConfig(adapter=adapter, release=release, examples=examples, steps=30, seed=7,
                                             records_dir=Path(records), stop_at_first=False))
        wall = time.monotonic() - started
        steps = sum(json.loads(line)["steps"] for path in Path(records).glob("*.jsonl")
                    for line in path.read_text().splitlines())
    return steps / wall, steps, dict(result.outcomes)


def cluster_timings(host: Any) -> dict[str, float]:
    from isrcheck.adapters.real_kafka.cluster_processes import ClusterLayout, RealKafkaCluster, free_base_port

    cluster = RealKafkaCluster(host, ClusterLayout(brokers=3, base_port=free_base_port()))
    timings: dict[str, float] = {}
    started = time.monotonic()
    try:
        cluster.start()
        timings["start"] = time.monotonic() - started
        for name, action in (("crash", lambda: cluster.kill("broker-2")),
                             ("restart", lambda: cluster.restart("broker-2")),
                             ("restart_disk", lambda: cluster.restart("broker-2", wipe=True)),
                             ("pause", lambda: cluster.pause("broker-3")),
                             ("resume", lambda: cluster.resume("broker-3"))):
            began = time.monotonic()
            action()
            timings[name] = time.monotonic() - began
    finally:
        cluster.stop()
    return timings


def scenario_statuses(adapter: str, release: str) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-m", "isrcheck", "scenario", "conformance/scenarios", "--adapter",
                           adapter, "--kafka", release, "--json"], cwd=REPO, capture_output=True, text=True,
                          timeout=3600, check=False)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {f"{row['file']} :: {row['scenario']}": row["status"] for row in rows}


def counts(statuses: dict[str, str]) -> str:
    return "/".join(str(sum(1 for s in statuses.values() if s == k)) for k in ("passed", "failed", "skipped"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", default="3.9.0,3.7.1")
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--parity", action="store_true", help="also run the whole scenario suite on both")
    args = parser.parse_args()
    from isrcheck.adapters.real_kafka.kafka_launcher import DockerRunner, LocalRunner
    from isrcheck.adapters.real_kafka.node_hosts import ContainerHost, ProcessHost

    rows: list[dict[str, Any]] = []
    for version in args.releases.split(","):
        release, image, home = ".".join(version.split(".")[:2]), f"apache/kafka:{version}", home_of(version)
        row: dict[str, Any] = {"release": version}
        row["controller_start_s"] = {
            "process": round(controller_start(lambda home=home: LocalRunner(str(home)), release), 1),
            "container": round(controller_start(lambda image=image: DockerRunner(image), release), 1)}
        row["steps_per_s"] = {}
        adapters = (("process", f"kafka-local,kafka-home={home}"), ("container", f"kafka-docker,image={image}"))
        for side, adapter in adapters:
            rate, steps, outcomes = campaign_rate(adapter, release, args.examples)
            row["steps_per_s"][side] = {"rate": round(rate, 1), "steps": steps, "outcomes": outcomes}
        row["cluster_s"] = {"process": {k: round(v, 1) for k, v in cluster_timings(ProcessHost(home)).items()},
                            "container": {k: round(v, 1) for k, v in cluster_timings(ContainerHost(image)).items()}}
        if args.parity:
            local = scenario_statuses(f"kafka-local,kafka-home={home}", release)
            docker = scenario_statuses(f"kafka-docker,image={image}", release)
            differing = sorted(name for name in set(local) | set(docker) if local.get(name) != docker.get(name))
            row["scenarios_passed_failed_skipped"] = {"process": counts(local), "container": counts(docker)}
            row["scenarios_differing"] = differing
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print("| release | controller start s (process / container) | steps/s (process / container) "
          "| cluster start s | crash / restart / disk restart / pause s | scenarios p/f/s | same |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        c, s, k = row["controller_start_s"], row["steps_per_s"], row["cluster_s"]
        faults = " · ".join("/".join(str(k[side][f]) for f in ("crash", "restart", "restart_disk", "pause"))
                            for side in ("process", "container"))
        parity = row.get("scenarios_passed_failed_skipped")
        same = "—"
        if parity:
            same = "yes" if not row["scenarios_differing"] else "NO: " + ", ".join(row["scenarios_differing"])
        print(f"| {row['release']} | {c['process']} / {c['container']} | {s['process']['rate']} / "
              f"{s['container']['rate']} | {k['process']['start']} / {k['container']['start']} | {faults} | "
              f"{parity['process'] + ' · ' + parity['container'] if parity else '—'} | {same} |")


if __name__ == "__main__":
    main()
