"""A campaign: many runs (Hypothesis examples) of one level against one target, in seeded
batches, optionally across worker processes, each run written as one record.

Batch b uses Hypothesis seed `seed + b`, so `--seed <batch seed> --examples <batch size>
--stop-at-first` replays a batch — and therefore its first finding and its shrinking — exactly.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import get_state_machine_test
from isrcheck.adapters.base import TargetFailure
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.engine.hypothesis_internals import seed_only_draws, shrinking_within
from isrcheck.conformance.engine.provenance import current_provenance, properties_checked
from isrcheck.conformance.engine.run_context import FindingFailure, FinishedRun, RunContext
from isrcheck.conformance.engine.targets import SharedTarget, TargetSpec, engine_cluster
from isrcheck.conformance.generator.cluster_machine import CLUSTER_CONFIG, ClusterMachine
from isrcheck.conformance.generator.controller_machine import ControllerMachine

from isrcheck.operations.coverage import coverage_points
from isrcheck.operations.findings import ERROR, Finding
from isrcheck.records.schema import SCHEMA_ID
from isrcheck.records.writer import RecordWriter, utc_timestamp

LEVELS = ("controller", "cluster")
DEFAULT_BATCH = 25


@dataclass(frozen=True)
class CampaignConfig:
    adapter: str = "reference"
    release: str = "4.1"
    mutant: str | None = None
    level: str = "controller"
    examples: int | None = 100
    budget_s: float | None = None
    steps: int = 50
    seed: int = 0
    workers: int = 1
    records_dir: Path | None = None
    stop_at_first: bool = True
    differential: bool = True
    batch_size: int = DEFAULT_BATCH
    timeout_s: float = 30.0
    shrink_budget_s: int = 20
    """Hypothesis stops shrinking after this long (its own default is 300 s): a campaign runs
    many batches, and a long cluster-level interleaving can take minutes to minimise fully.
    A shrink cut short by it is still a valid, replayable counterexample, just not minimal."""
    campaign_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def replay_command(self, batch_seed: int, batch_examples: int) -> str:
        parts = [
            "isrcheck run", f"--adapter {self.adapter}", f"--kafka {self.release}", f"--level {self.level}",
            *([f"--mutant {self.mutant}"] if self.mutant else []),
            f"--seed {batch_seed}", f"--examples {batch_examples}", f"--steps {self.steps}", "--stop-at-first",
            *([] if self.differential else ["--no-differential"]),
        ]
        return " ".join(parts)


@dataclass
class CampaignResult:
    runs: int = 0
    steps: int = 0
    seconds: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    signatures: Counter[str] = field(default_factory=Counter)
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    """signature → the first finding's record summary (message, replay, counterexample length)."""
    records_files: list[str] = field(default_factory=list)
    found_at: float | None = None
    """time.monotonic() of the first finding, before its shrinking (stop-at-first campaigns)."""
    seconds_to_first_finding: float | None = None

    def merge(self, other: CampaignResult) -> None:
        self.runs += other.runs
        self.steps += other.steps
        self.outcomes.update(other.outcomes)
        self.signatures.update(other.signatures)
        for signature, example in other.examples.items():
            self.examples.setdefault(signature, example)
        self.records_files += other.records_files
        if other.found_at is not None and (self.found_at is None or other.found_at < self.found_at):
            self.found_at = other.found_at

    @property
    def found(self) -> bool:
        return bool(self.signatures)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs, "steps": self.steps, "seconds": round(self.seconds, 3),
            "steps_per_second": round(self.steps / self.seconds, 1) if self.seconds else None,
            "seconds_to_first_finding": None if self.seconds_to_first_finding is None
            else round(self.seconds_to_first_finding, 3),
            "outcomes": dict(self.outcomes), "findings": dict(self.signatures),
            "examples": self.examples, "records": self.records_files,
        }


def outcome_of(findings: list[Finding]) -> str:
    if not findings:
        return "pass"
    kind = findings[0].kind
    return kind if kind in ("timeout", "crash", "error") else "finding"


class Worker:
    """Runs the batches of one process and writes its records."""

    def __init__(self, config: CampaignConfig, worker: int) -> None:
        self.config = config
        self.worker = worker
        self.spec = TargetSpec(config.adapter, config.mutant, config.timeout_s)
        self.spec.mutant_entry()  # an unknown --mutant is a usage error before anything runs
        self.mutant = self.spec.served_mutant
        entry = self.spec.served_mutant_entry()
        self.negative_control = None if entry is None else entry.negative_control
        self.mutant_title = None if entry is None else entry.title
        self.mutant_ticket = None if entry is None else entry.source
        self.provenance = current_provenance()
        self.writer = RecordWriter(config.records_dir, config.campaign_id, worker)
        self.result = CampaignResult()
        if self.writer.path is not None:
            self.result.records_files.append(str(self.writer.path))
        self.counter = 0
        self.make_target = self.spec.factory(config.level)
        self.unsupported = self.make_target().unsupported_operations

    def record(self, finished: FinishedRun, batch_seed: int, batch_examples: int,
               counterexample: FinishedRun | None = None) -> None:
        config, run = self.config, finished.run
        self.counter += 1
        findings = run.findings
        shown = counterexample or (finished if findings else None)
        # what is printed and reported beside the counterexample is what the counterexample found
        # (a shrunk run's own finding), never the longer run's message about steps it no longer has
        shown_findings = [] if shown is None else shown.run.findings
        replay = None
        if findings:
            if counterexample is not None:
                replay = config.replay_command(batch_seed, batch_examples)
            elif config.records_dir is not None:
                run_id = f"{config.campaign_id}-w{self.worker}-{self.counter:06d}"
                replay = f"isrcheck replay {self.writer.path} --run {run_id}"
        record = {
            "schema": SCHEMA_ID,
            "run_id": f"{config.campaign_id}-w{self.worker}-{self.counter:06d}",
            "campaign_id": config.campaign_id,
            "started_at": utc_timestamp(finished.started_at),
            "seed": batch_seed,
            "adapter": config.adapter,
            "target": self.spec.display_name,
            "release": config.release,
            "mutant": self.mutant,
            "negative_control": self.negative_control,
            "mutant_title": self.mutant_title,
            "mutant_ticket": self.mutant_ticket,
            "level": config.level,
            # cluster-level runs judge the target by its properties alone (cluster_pair.py): never compared
            "differential": config.differential and config.level != "cluster",
            "steps": len(run.trace),
            "duration_s": round(finished.seconds, 6),
            "outcome": outcome_of(findings),
            "findings": [f.to_json() for f in findings],
            "counterexample": None if shown is None else {
                "length": len(shown.run.trace),
                "diverging_step": shown.run.findings[0].step if shown.run.findings else None,
                "steps": [s.to_json() for s in shown.run.trace],
                "findings": [f.to_json() for f in shown_findings],
            },
            "replay": replay,
            "isrcheck_version": self.provenance.version,
            "commit": self.provenance.commit,
            "properties": properties_checked(config.level),
            "coverage": coverage_points((s.op, s.reference) for s in run.trace),
        }
        self.writer.write(record)
        self.result.runs += 1
        self.result.outcomes[record["outcome"]] += 1
        for finding in findings:
            self.result.signatures[finding.signature] += 1
            shrunk = next((f for f in shown_findings if f.signature == finding.signature), finding)
            self.result.examples.setdefault(finding.signature, {
                "message": shrunk.message, "replay": replay, "run_id": record["run_id"],
                "counterexample_length": record["counterexample"]["length"] if record["counterexample"] else None,
            })

    def shutdown(self) -> None:
        """End the shared target's session: controller processes it started must stop with the
        campaign, not linger until the interpreter exits (a pool worker, ended by SIGTERM when
        the pool closes, never gets there)."""
        if isinstance(self.make_target, SharedTarget):
            try:
                self.make_target.shutdown()
            except TargetFailure as error:  # the runs are recorded already; a person should still know
                print(f"isrcheck: the target did not shut down cleanly: {error}", file=sys.stderr)

    def run_batch(self, batch: int, examples: int) -> bool:
        """Run one seeded batch; True when the campaign should stop (stop-at-first found)."""
        config = self.config
        batch_seed = config.seed + batch
        cluster = config.level == "cluster"
        context = RunContext(
            make_reference=engine_cluster if cluster else ReferenceTarget,
            make_target=self.make_target, release=config.release, config=CLUSTER_CONFIG if cluster else {},
            on_run=lambda finished: self.record(finished, batch_seed, examples),
            stop_at_first=config.stop_at_first, differential=config.differential and not cluster,
            unsupported=self.unsupported, level=config.level,
        )
        base = ClusterMachine if cluster else ControllerMachine
        machine = type(f"{base.__name__}Campaign", (base,), {"context": context})
        test = get_state_machine_test(machine, settings=settings(
            max_examples=examples, stateful_step_count=config.steps, database=None, deadline=None,
            phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet, report_multiple_bugs=False, print_blob=False,
        ))
        seed(batch_seed)(test)
        stop = False
        try:
            with seed_only_draws(), shrinking_within(config.shrink_budget_s):
                test()
        except FindingFailure:
            assert context.held is not None
            self.record(context.held, batch_seed, examples, counterexample=context.last_failing)
            stop = True
        except Flaky as error:
            held = context.held
            if held is not None:
                self.record(held, batch_seed, examples)
            self.result.outcomes["flaky"] += 1
            self.result.examples.setdefault("flaky", {"message": str(error)[:500]})
            stop = True
        except Exception as error:  # an isrcheck bug: recorded, never an aborted campaign
            finding = Finding(ERROR, "engine", 0, f"{type(error).__name__}: {error}")
            self.result.signatures[finding.signature] += 1
            self.result.examples.setdefault(finding.signature, {"message": finding.message})
            stop = True
        self.result.steps += context.steps_executed
        if context.found_at is not None and self.result.found_at is None:
            self.result.found_at = context.found_at
        return stop


def worker_main(config: CampaignConfig, worker: int, batches: list[tuple[int, int]],
                stop_event: Any, progress_queue: Any) -> CampaignResult:
    def progress(runs: int, steps: int, findings: int) -> None:
        if progress_queue is not None:
            progress_queue.put((worker, runs, steps, findings))

    instance = Worker(config, worker)
    deadline = None if config.budget_s is None else time.monotonic() + config.budget_s
    try:
        for batch, examples in batches:
            if stop_event is not None and stop_event.is_set():
                break
            if deadline is not None and time.monotonic() > deadline:
                break
            stop = instance.run_batch(batch, examples)
            progress(instance.result.runs, instance.result.steps, sum(instance.result.signatures.values()))
            if stop and config.stop_at_first:
                if stop_event is not None:
                    stop_event.set()
                break
    finally:
        instance.writer.close()
        instance.shutdown()
    return instance.result


def plan_batches(config: CampaignConfig) -> list[tuple[int, int]]:
    """(batch index, examples) in order; a budget campaign gets an effectively endless plan."""
    if config.examples is None:
        return [(b, config.batch_size) for b in range(1_000_000)]
    full, rest = divmod(config.examples, config.batch_size)
    plan = [(b, config.batch_size) for b in range(full)]
    if rest:
        plan.append((full, rest))
    return plan


def run_campaign(config: CampaignConfig, on_progress: Callable[[int, int, int, float], None] | None = None
                 ) -> CampaignResult:
    started = time.monotonic()
    plan = plan_batches(config)
    workers = max(1, config.workers)
    total = CampaignResult()
    if workers == 1:
        def report(runs: int, steps: int, findings: int) -> None:
            if on_progress is not None:
                on_progress(runs, steps, findings, time.monotonic() - started)

        instance_result = worker_main(config, 0, plan, None, _Direct(report))
        total.merge(instance_result)
    else:
        context = multiprocessing.get_context("spawn")
        manager = context.Manager()
        stop_event, queue = manager.Event(), manager.Queue()
        shares = [plan[w::workers] for w in range(workers)]
        with context.Pool(workers) as pool:
            pending = [pool.apply_async(worker_main, (replace(config), w, shares[w], stop_event, queue))
                       for w in range(workers)]
            latest: dict[int, tuple[int, int, int]] = {}
            while not all(p.ready() for p in pending):
                while not queue.empty():
                    w, runs, steps, findings = queue.get()
                    latest[w] = (runs, steps, findings)
                if on_progress is not None and latest:
                    sums = [sum(v[i] for v in latest.values()) for i in range(3)]
                    on_progress(sums[0], sums[1], sums[2], time.monotonic() - started)
                time.sleep(0.2)
            for p in pending:
                total.merge(p.get())
        manager.shutdown()
    total.seconds = time.monotonic() - started
    if total.found_at is not None:
        total.seconds_to_first_finding = total.found_at - started
    return total


class _Direct:
    """A progress 'queue' for the single-process case."""

    def __init__(self, report: Callable[[int, int, int], None]) -> None:
        self.report = report

    def put(self, item: tuple[int, int, int, int]) -> None:
        self.report(item[1], item[2], item[3])
