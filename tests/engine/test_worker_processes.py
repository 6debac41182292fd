"""`--workers N` and the pipeline's job processes: batches go to whichever worker asks first, and
the pipeline's calls run one after another in `slots` long-lived processes."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, iter_batches, plan_batches, run_campaign
from isrcheck.conformance.engine.worker_process import EXIT_PARENT_GONE, run_calls

HELPERS = Path(__file__).resolve().parent / "workers_helpers"
REPO = Path(__file__).resolve().parents[2]


def test_calls_share_their_worker_processes() -> None:
    pids = list(run_calls([(os.getpid, ())] * 6, 2))
    assert len(pids) == 6
    assert len(set(pids)) <= 2 and os.getpid() not in pids


def test_a_forked_worker_sees_the_end_of_its_input_while_a_sibling_runs() -> None:
    """The end of its stdin is how a worker learns its parent is gone (or is done with it): a
    sibling forked after it must not keep a copy of that pipe's write end open."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, str(HELPERS / "forked_siblings.py")], capture_output=True, text=True,
                          timeout=60, check=True, env={**os.environ, "PYTHONPATH": path})
    ended = json.loads(done.stdout)
    assert ended["first"] == EXIT_PARENT_GONE
    assert ended["took_s"] < 3, "it waited out end()'s grace and was killed"
    assert ended["second"] == EXIT_PARENT_GONE


def test_a_call_whose_process_dies_is_reported_and_the_rest_still_run() -> None:
    results = []
    with pytest.raises(RuntimeError, match="ended without a result"):
        for result in run_calls([(abs, (-1,)), (os._exit, (9,)), (abs, (-2,)), (abs, (-3,))], 1):
            results.append(result)
    assert sorted(results) == [1, 2, 3]


def test_a_worker_held_up_by_a_long_batch_leaves_the_other_batches_to_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six one-run batches; the first run of the campaign sleeps 4 s. Handed out in advance (every
    other batch to each worker) the sleeping worker would run three; handed out on demand it runs
    the one it sleeps in, and the other worker the five others meanwhile."""
    monkeypatch.setenv("ISRCHECK_TEST_SLOW_MARKER", str(tmp_path / "slept"))
    # a forked worker imports the adapter with this process's sys.path, a spawned one (this
    # process has threads) with PYTHONPATH
    monkeypatch.syspath_prepend(str(HELPERS))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HELPERS), os.environ.get("PYTHONPATH", "")]))
    result = run_campaign(CampaignConfig(adapter="first_open_slow:make", examples=6, batch_size=1, steps=5, seed=3,
                                         workers=2, records_dir=tmp_path / "records"))
    assert result.runs == 6 and not result.signatures
    records = [json.loads(line) for path in (tmp_path / "records").glob("*.jsonl")
               for line in path.read_text().splitlines()]
    by_worker = Counter(record["run_id"].split("-")[1] for record in records)
    assert sorted(by_worker.values()) == [1, 5], by_worker
    assert sorted(record["seed"] for record in records) == [3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("examples", [None, 0, 24, 25, 26, 101])
def test_the_batch_plan_one_at_a_time_is_the_plan(examples: int | None) -> None:
    config = CampaignConfig(examples=examples, budget_s=1 if examples is None else None)
    assert list(itertools.islice(iter_batches(config), 50)) == plan_batches(config)[:50]
