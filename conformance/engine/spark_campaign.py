"""A campaign spread over Spark executors (`isrcheck run --spark`), for campaigns larger than
one machine.

The driver only plans and merges: task *t* of *T* runs the seeded batches `t, t+T, t+2T, …` of
the same plan a local campaign uses (as `--workers` shares them), with the same worker
(`campaign.campaign_worker`: a black-box cluster target gets a cluster per task), so
batch *b* still uses seed `S + b` and every replay command stays valid. Each task writes its
records to `<records>/<campaign>-w<t>.jsonl` — on a cluster `--records` must be a path every
executor and the driver can reach (a shared file system) — and returns its `CampaignResult`,
which the driver merges into the one result `isrcheck run` prints.

Tasks cannot see each other: with stop-at-first each task stops at its own first finding (a
local campaign stops all workers at the first), so a Spark campaign may shrink up to T findings.
With a budget every task stops launching batches once the wall-clock deadline the driver set
when it submitted the job has passed (executor clocks are assumed to be synchronised).
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import count
from typing import TYPE_CHECKING

from isrcheck.conformance.engine.campaign import CampaignConfig, CampaignResult, campaign_worker, plan_batches
from isrcheck.contract.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_CONF: dict[str, str] = {
    # a retried task rewrites its own records file; two attempts at once would interleave lines
    "spark.speculation": "false",
}


@dataclass(frozen=True)
class TaskReport:
    """What one task sends back: its result, or why it could not start (a records directory the
    executor cannot write, an adapter it cannot build) — a configuration error, not a finding."""

    task: int
    host: str
    result: CampaignResult | None = None
    error: str | None = None


def task_batches(config: CampaignConfig, task: int, tasks: int) -> Iterator[tuple[int, int]]:
    """This task's share of the plan; a budget campaign's plan is endless, so it is counted out
    in the task rather than shipped from the driver."""
    if config.examples is None:
        return ((batch, config.batch_size) for batch in count(task, tasks))
    return iter(plan_batches(config)[task::tasks])


def run_task(config: CampaignConfig, task: int, tasks: int, deadline: float | None) -> TaskReport:
    """Runs on an executor: one task's batches with the ordinary engine."""
    host = socket.gethostname()
    try:
        worker = campaign_worker(config, task)
    except Exception as error:
        return TaskReport(task, host, error=f"{type(error).__name__}: {error}")
    worker.deadline = deadline
    if worker.writer.file is not None:
        worker.writer.file.truncate(0)  # a retried attempt replaces the failed one's records
    try:
        for batch, examples in task_batches(config, task, tasks):
            if deadline is not None and time.time() > deadline:
                break
            if (worker.run_batch(batch, examples) and config.stop_at_first) or worker.halted:
                break
    finally:
        worker.writer.close()
        worker.shutdown()
    return TaskReport(task, host, result=worker.result)


def task_count(config: CampaignConfig, slots: int) -> int:
    """As many tasks as the cluster runs at once (so a budget campaign runs in one wave), and
    never more than there are batches."""
    slots = max(1, slots)
    if config.examples is None:
        return slots
    return min(slots, len(plan_batches(config)))


def run_campaign_on_spark(spark: SparkSession, config: CampaignConfig) -> CampaignResult:
    context = spark.sparkContext
    tasks = task_count(config, context.defaultParallelism)
    if config.records_dir is not None:
        config = replace(config, records_dir=config.records_dir.resolve())
    started = time.monotonic()
    deadline = None if config.budget_s is None else time.time() + config.budget_s
    try:
        reports: list[TaskReport] = (
            context.parallelize(range(tasks), tasks)
            .map(lambda task: run_task(config, task, tasks, deadline))
            .collect()
        )
    except Exception as error:  # an executor without isrcheck, a lost executor: Spark says why
        raise UsageError(f"Spark job failed: {cause_line(str(error))}") from None
    total = CampaignResult()
    for report in sorted(reports, key=lambda r: r.task):
        if report.error is not None:
            raise UsageError(f"Spark task {report.task} on {report.host} could not start: {report.error}")
        assert report.result is not None
        total.merge(report.result)
    total.seconds = time.monotonic() - started
    return total


def cause_line(message: str) -> str:
    """The line that names the problem: a Python worker's exception ends its traceback, a JVM
    error starts its stack trace."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if not lines:
        return "unknown error"
    return lines[-1] if "Traceback (most recent call last)" in message else lines[0]


def start_campaign_session(master: str | None, conf: Mapping[str, str]) -> SparkSession:
    """A session whose executors run Python tasks; Spark Connect (`sc://`) cannot, as it offers
    no RDDs. A local master runs this very interpreter, which has isrcheck installed; on a
    cluster the executors need isrcheck installed too (or `--conf spark.pyspark.python=...`)."""
    from isrcheck.conformance.engine.spark_session import DEFAULT_MASTER, start_session

    url = master or DEFAULT_MASTER
    if url.startswith("sc://"):
        raise UsageError(f"--spark cannot run a campaign over Spark Connect ({url}): give a cluster master "
                         "(spark://HOST:PORT, yarn, k8s://…) or local[N]")
    settings = dict(SPARK_CONF)
    if url.startswith("local"):
        settings["spark.pyspark.python"] = sys.executable
    settings.update(conf)
    return start_session(url, settings, app_name="isrcheck run")
