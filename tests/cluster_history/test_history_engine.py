"""The history engine on the example cluster plug-in (adapters/plugins/example_cluster.py): a
third-party target offers the cluster level by declaring `black_box_history`; the engine draws
workload and nemesis, judges the recorded history, shrinks, records, re-judges and replays."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from isrcheck.conformance.engine.campaign import CampaignConfig, run_campaign

REPO = Path(__file__).resolve().parents[2]
LOSSY = "isrcheck.adapters.plugins.example_cluster:LossyCluster"
SOUND = "isrcheck.adapters.plugins.example_cluster:ToyCluster"


def campaign(adapter: str, records: Path | None = None, examples: int = 300) -> object:
    return run_campaign(CampaignConfig(adapter=adapter, level="cluster", examples=examples, steps=10, seed=1,
                                       records_dir=records))


def test_the_sound_toy_cluster_passes() -> None:
    result = campaign(SOUND)
    assert result.runs == 300 and not result.found, result.examples  # type: ignore[attr-defined]


def test_a_cluster_that_admits_an_empty_replica_loses_acknowledged_records(tmp_path: Path) -> None:
    result = campaign(LOSSY, tmp_path)
    assert result.found  # type: ignore[attr-defined]
    assert {s.split(":")[2] for s in result.signatures} <= {"P-ACK", "P-HWC"}  # type: ignore[attr-defined]
    [path] = list(tmp_path.glob("*.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    [found] = [r for r in records if r["outcome"] == "finding"]
    assert found["history"]["entries"] and found["counterexample"]["steps"]
    ops = [s["op"] for s in found["counterexample"]["steps"]]
    assert "restart" in ops and ops[0] == "create_topic"  # a disk loss is part of every way to lose data here

    def isrcheck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "isrcheck", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})

    checked = isrcheck("check", str(path))
    assert checked.returncode == 1 and f"{found['run_id']}" in checked.stdout and "violated" in checked.stdout
    assert "recorded:" not in checked.stdout  # offline verdicts agree with the recorded ones
    replayed = isrcheck("replay", str(path), "--run", found["run_id"])
    assert replayed.returncode == 1 and "FOUND" in replayed.stdout  # the toy is deterministic


def test_an_observation_is_stamped_when_its_metadata_was_answered() -> None:
    """A target that answers Metadata at once and then waits (ListOffsets to a paused leader):
    the entry's `t` is the Metadata answer, `t_end` the return — P-ELIG judges the ISR at `t`."""
    import time

    from isrcheck.conformance.engine.sides import BlackBoxSide

    class SlowListOffsets:
        def observe(self, what: str, args: dict[str, object]) -> dict[str, object]:
            time.sleep(0.3)
            return {"exists": True, "leader": 101, "isr": [101], "replicas": [101], "metadata_after_s": 0.05}

    side = BlackBoxSide(SlowListOffsets(), time.monotonic())  # type: ignore[arg-type]
    side.topics.add("t")
    [entry] = side.views()
    assert entry["t_end"] - entry["t"] >= 0.25 and entry["t"] <= 0.1, entry


def test_black_box_campaigns_run_in_worker_processes_each_with_its_own_records(tmp_path: Path) -> None:
    """`--workers 2` at the cluster level of a black-box target: the batches are shared between two
    processes (campaign.worker_main with a HistoryWorker each), each writing its own records."""
    result = run_campaign(CampaignConfig(adapter=SOUND, level="cluster", examples=40, batch_size=10, steps=10,
                                         seed=1, workers=2, records_dir=tmp_path))
    files = sorted(p.name for p in tmp_path.glob("*.jsonl"))
    assert len(files) == 2 and files[0].endswith("-w0.jsonl") and files[1].endswith("-w1.jsonl"), files
    records = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert result.runs == len(records) == 40 and not result.found  # type: ignore[attr-defined]
    assert {r["run_id"].split("-")[1] for r in records} == {"w0", "w1"}
    for record in records:  # each run healed and read back
        ops = [e["op"] for e in record["history"]["entries"] if e["type"] == "op"]
        assert ops[0] == "create_topic" and ops[-2:] == ["heal", "consume"], ops


def test_a_black_box_campaign_stops_its_workers_at_the_first_finding(tmp_path: Path) -> None:
    result = run_campaign(CampaignConfig(adapter=LOSSY, level="cluster", examples=300, batch_size=10, steps=10,
                                         seed=1, workers=2, records_dir=tmp_path))
    assert result.found and result.runs < 300  # type: ignore[attr-defined]


def test_shrink_attempts_are_not_counted_as_runs(tmp_path: Path) -> None:
    """With stop-at-first, the runs before the first finding and the (shrunk) finding are the
    campaign's runs; Hypothesis's passing shrink attempts are not recorded or counted. Draws depend
    on the seed alone, so the same batch without stopping finds it at the same run."""
    collected = run_campaign(CampaignConfig(adapter=LOSSY, level="cluster", examples=100, steps=10, seed=1,
                                            stop_at_first=False, records_dir=tmp_path / "all"))
    [path] = list((tmp_path / "all").glob("*.jsonl"))
    outcomes = [json.loads(line)["outcome"] for line in path.read_text().splitlines()]
    first = outcomes.index("finding") + 1
    assert collected.runs == len(outcomes) == 100  # type: ignore[attr-defined]  # every run, after a finding too
    stopped = run_campaign(CampaignConfig(adapter=LOSSY, level="cluster", examples=100, steps=10, seed=1,
                                          records_dir=tmp_path / "first"))
    [path] = list((tmp_path / "first").glob("*.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert collected.found and stopped.found  # type: ignore[attr-defined]
    assert stopped.runs == len(records) == first, (stopped.runs, first)  # type: ignore[attr-defined]
    assert [r["outcome"] for r in records] == ["pass"] * (first - 1) + ["finding"]
