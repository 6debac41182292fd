"""A campaign: many runs (Hypothesis examples) of one level against one target, in seeded
batches, optionally across worker processes, each run written as one record.

Batch b uses Hypothesis seed `seed + b`, so `--seed <batch seed> --examples <batch size>
--stop-at-first` replays a batch — and therefore its first finding and its shrinking — exactly.
"""

from __future__ import annotations

import dataclasses
import random
import shlex
import sys
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import get_state_machine_test
from isrcheck.adapters.base import TargetFailure
from isrcheck.adapters.reference.controller_target import ReferenceTarget
from isrcheck.conformance.engine.hypothesis_internals import seed_only_draws, shrinking_within
from isrcheck.conformance.engine.provenance import current_provenance, properties_checked
from isrcheck.conformance.engine.run_context import BudgetExhausted, CannotTest, FindingFailure, FinishedRun, RunContext
from isrcheck.conformance.engine.step_checkers import ControllerChecker
from isrcheck.conformance.engine.step_minimiser import minimised_counterexample
from isrcheck.conformance.engine.targets import SharedTarget, TargetSpec, engine_cluster
from isrcheck.conformance.engine.worker_process import run_workers
from isrcheck.conformance.generator.cluster_machine import CLUSTER_CONFIG, ClusterMachine
from isrcheck.conformance.generator.cluster_settings import drawn_settings, setting_text
from isrcheck.conformance.generator.controller_machine import ControllerMachine
from isrcheck.conformance.generator.targeting import TARGET, TargetedSearch
from isrcheck.conformance.properties.catalogue import LEVEL_PROPERTIES
from isrcheck.contract.history.history_json import cluster_history_json, controller_history_json
from isrcheck.contract.operations.coverage import coverage_points
from isrcheck.contract.operations.findings import ERROR, KNOWN, Finding
from isrcheck.contract.records.schema import SCHEMA_ID
from isrcheck.contract.records.writer import RecordWriter, utc_timestamp

LEVELS = ("controller", "cluster")
CUT_SHORT_OVERRUN = "hypothesis_overrun"
"""A record's `cut_short` (docs/records.md): Hypothesis ran out of the choices it allowed the
example and stopped the run before its steps were done; not one of the campaign's examples."""
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
    record_history: bool = False
    """Every record carries its run's history (controller level: both sides' answers and
    observations, step by step; a simulated cluster: the target's ground truth after every step),
    which `isrcheck check` judges again offline. Without it only the records of runs that did not
    pass carry theirs (a finding's is 7–120 KB, measured): a history makes a record some 50 times
    larger (a simulated cluster's, more), and most runs pass."""
    shrink_budget_s: int = 20
    """Hypothesis stops shrinking after this long (its own default is 300 s): a campaign runs
    many batches, and a long cluster-level interleaving can take minutes to minimise fully.
    A shrink cut short by it is still a valid, replayable counterexample, just not minimal."""
    campaign_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    settings: tuple[tuple[str, Any], ...] = ()
    """Controller level: cluster settings for every run (`--setting KEY=VALUE`: metadata.version,
    eligible leader replicas), over the release's defaults."""
    draw_settings: bool = False
    """Controller level: each batch draws its cluster settings within what the release accepts
    (conformance/generator/cluster_settings.py, `--draw-settings`); `settings` override the draw."""

    def settings_for(self, batch_seed: int) -> dict[str, Any]:
        """The controller configuration of the batch seeded `batch_seed` (the cluster level runs
        CLUSTER_CONFIG): the drawn settings, if drawn, then the fixed ones over them."""
        drawn = drawn_settings(self.release, random.Random(batch_seed)) if self.draw_settings else {}
        return {**drawn, **dict(self.settings)}

    def replay_command(self, batch_seed: int, batch_examples: int) -> str:
        """One shell command (docs/records.md): quoted, so an adapter spec with spaces
        (`exec:python -m my_plugin`) pastes as one argument."""
        parts = [
            "isrcheck", "run", "--adapter", self.adapter, "--kafka", self.release, "--level", self.level,
            *(["--mutant", self.mutant] if self.mutant else []),
            "--seed", str(batch_seed), "--examples", str(batch_examples), "--steps", str(self.steps),
            "--stop-at-first", *([] if self.differential else ["--no-differential"]),
        ]
        if self.level == "controller":
            for key, value in self.settings_for(batch_seed).items():
                parts += ["--setting", setting_text(key, value)]
        return shlex.join(parts)


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
    skip_reason: str | None = None
    """Why the target refused the configuration: the campaign stopped after its first run."""
    coverage: Counter[str] = field(default_factory=Counter)
    """Protocol-state coverage point → runs that reached it (contract/operations/coverage.py)."""
    cut_short: int = 0
    """Runs Hypothesis stopped early (records with `cut_short`), counted in `runs` too."""

    def merge(self, other: CampaignResult) -> None:
        self.runs += other.runs
        self.cut_short += other.cut_short
        self.coverage.update(other.coverage)
        self.steps += other.steps
        self.outcomes.update(other.outcomes)
        self.signatures.update(other.signatures)
        for signature, example in other.examples.items():
            self.examples.setdefault(signature, example)
        self.records_files += other.records_files
        self.skip_reason = self.skip_reason or other.skip_reason
        if other.found_at is not None and (self.found_at is None or other.found_at < self.found_at):
            self.found_at = other.found_at

    @property
    def found(self) -> bool:
        """The target broke a property or diverged from the reference in some run."""
        return self.outcomes["finding"] > 0

    @property
    def tested(self) -> int:
        """Runs that exercised the target (skipped runs and isrcheck's own errors did not)."""
        return sum(self.outcomes[o] for o in TESTED_OUTCOMES)

    @property
    def verdict(self) -> str:
        """The campaign's one verdict, most serious first: `failed` (the target broke a property,
        diverged, crashed or hung), `error` (isrcheck failed: no verdict on the target),
        `untested` (no step reached the target: every run was skipped or failed in isrcheck),
        `known` (known divergences only: every run that diverged matched a rule of
        docs/known-divergences.md, which is Kafka's triaged behaviour, not a failure), `passed`.
        Steps of a run cut short by the budget count: the target was exercised, and passed them."""
        if self.found or self.outcomes["crash"] or self.outcomes["timeout"]:
            return FAILED
        if self.outcomes["error"]:
            return ENGINE_ERROR
        if not self.tested and not self.steps:
            return UNTESTED
        if self.outcomes[KNOWN]:
            return KNOWN_ONLY
        return PASSED

    @property
    def known(self) -> Counter[str]:
        """Known-divergence signatures (`known:<rule>:...`) → times seen; `signatures` holds them too."""
        return Counter({s: n for s, n in self.signatures.items() if s.startswith(KNOWN + ":")})

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "runs": self.runs, "cut_short_runs": self.cut_short, "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "steps_per_second": round(self.steps / self.seconds, 1) if self.seconds else None,
            "seconds_to_first_finding": None if self.seconds_to_first_finding is None
            else round(self.seconds_to_first_finding, 3),
            "outcomes": dict(self.outcomes),
            "findings": {s: n for s, n in self.signatures.items() if s not in self.known},
            "known_divergences": dict(self.known),
            "examples": self.examples, "records": self.records_files,
            "coverage": dict(sorted(self.coverage.items())),
        }


TESTED_OUTCOMES = ("pass", "finding", KNOWN, "crash", "timeout")
FAILED, ENGINE_ERROR, UNTESTED, PASSED, KNOWN_ONLY = "failed", "error", "untested", "passed", "known"


def outcome_of(findings: list[Finding], skip_reason: str | None = None) -> str:
    """A record's `outcome` (docs/records.md): one meaning each."""
    if skip_reason is not None:
        return "skipped"
    if not findings:
        return "pass"
    if all(f.known for f in findings):
        return KNOWN
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
        self.pending: int | None = None
        """Offset of a finding written before shrinking, to be replaced by its shrunk form."""
        self.deadline: float | None = None
        """time.time() after which no run starts and shrinking stops (the campaign's budget)."""
        self.make_target = self.spec.factory(config.level)
        described = self.make_target()
        self.unsupported = described.unsupported_operations
        self.observable_fields = described.observable_fields

    def record(self, finished: FinishedRun, batch_seed: int, batch_examples: int,
               counterexample: FinishedRun | None = None, note: dict[str, Any] | None = None) -> None:
        """Write one run's record and count it. A finding already written before shrinking
        (`record_found`) is replaced by its improved form, under the same run id. `note` is added
        to the first finding's evidence (why the finding could not be shrunk or replayed)."""
        pending, self.pending = self.pending, None
        if pending is None:
            self.counter += 1
        if counterexample is not None:
            counterexample, note = self.minimised(counterexample, note)
        record = self.build_record(finished, batch_seed, batch_examples, counterexample, note)
        if pending is None:
            self.writer.write(record)
        else:
            self.writer.replace_from(pending, record)
        self.count(record, self.noted(finished.run.findings, note))

    def minimised(self, counterexample: FinishedRun, note: dict[str, Any] | None
                  ) -> tuple[FinishedRun, dict[str, Any] | None]:
        """A simulated cluster's counterexample with its steps minimised after Hypothesis's
        shrinking (conformance/engine/step_minimiser.py), within the shrink budget and the
        campaign's; the length it had goes into the finding's evidence (the seeded replay command
        reproduces the finding with those longer steps, `isrcheck replay` these)."""
        config = self.config
        if config.level != "cluster" or self.spec.adapter != "reference":
            return counterexample, note
        budget = float(config.shrink_budget_s)
        if self.deadline is not None:
            budget = min(budget, self.deadline - time.time())
        make_target = None if self.spec.mutant is None else self.make_target
        shorter, before = minimised_counterexample(counterexample, make_target, config.release, budget)
        if shorter is counterexample:
            return counterexample, note
        return shorter, {**(note or {}), "minimised_from_steps": before}

    def record_found(self, finished: FinishedRun, batch_seed: int, batch_examples: int) -> None:
        """The first finding, on disk before shrinking starts: a campaign killed while shrinking
        keeps it (with a replay from the record); `record` replaces it when shrinking ends."""
        self.counter += 1
        self.pending = self.writer.write(self.build_record(finished, batch_seed, batch_examples))
        if self.pending is None:  # no records file: nothing to replace later
            self.counter -= 1

    @staticmethod
    def noted(findings: list[Finding], note: dict[str, Any] | None) -> list[Finding]:
        if note and findings:
            return [dataclasses.replace(findings[0], evidence={**findings[0].evidence, **note}), *findings[1:]]
        return findings

    def build_record(self, finished: FinishedRun, batch_seed: int, batch_examples: int,
                     counterexample: FinishedRun | None = None, note: dict[str, Any] | None = None
                     ) -> dict[str, Any]:
        config, run = self.config, finished.run
        findings = self.noted(run.findings, note)
        shown = counterexample or (finished if findings else None)
        replay = None
        if findings:
            if counterexample is not None:
                replay = config.replay_command(batch_seed, batch_examples)
            elif config.records_dir is not None:
                run_id = f"{config.campaign_id}-w{self.worker}-{self.counter:06d}"
                replay = shlex.join(["isrcheck", "replay", str(self.writer.path), "--run", run_id])
        record = self.record_of(finished.started_at, finished.seconds, batch_seed, run.trace, findings, shown,
                                replay, run.skip_reason, states=run.reference_states(), unknown=run.unknown())
        if finished.cut_short:
            record["cut_short"] = CUT_SHORT_OVERRUN
        recorded = config.record_history or bool(findings)
        if recorded and isinstance(run.checker, ControllerChecker):
            record["history"] = controller_history_json(run.history, run.checker.reference_scans, run.differential,
                                                        run.target.observable_fields)
        elif recorded:
            failure = None if run.failure is None else run.failure.to_json()
            record["history"] = cluster_history_json(run.history, failure)
        return record

    def record_of(self, started_at: float, seconds: float, batch_seed: int, trace: list[Any],
                  findings: list[Finding], shown: FinishedRun | None, replay: str | None,
                  skip_reason: str | None, states: Iterable[str] = (), unknown: list[str] | None = None
                  ) -> dict[str, Any]:
        """The record of one run (or of an engine failure outside any run: empty trace). `states`:
        the protocol states the reference went through (cluster level: its property monitor's).
        `unknown`: the properties the run could not judge (None: all of them, nothing ran)."""
        config = self.config
        if skip_reason is not None:
            self.result.skip_reason = self.result.skip_reason or skip_reason
        # what is printed and reported beside the counterexample is what the counterexample found
        # (a shrunk run's own finding), never the longer run's message about steps it no longer has
        shown_findings = [] if shown is None else shown.run.findings
        return {
            "schema": SCHEMA_ID,
            "run_id": f"{config.campaign_id}-w{self.worker}-{self.counter:06d}",
            "campaign_id": config.campaign_id,
            "started_at": utc_timestamp(started_at),
            "seed": batch_seed,
            "adapter": config.adapter,
            "target": self.spec.display_name,
            "release": config.release,
            "mutant": self.mutant,
            "negative_control": self.negative_control,
            "mutant_title": self.mutant_title,
            "mutant_ticket": self.mutant_ticket,
            "level": config.level,
            # cluster-level runs judge the target by its properties alone (run.py): never compared
            "differential": config.differential and config.level != "cluster",
            **({"settings": chosen} if config.level == "controller" and (chosen := config.settings_for(batch_seed))
               else {}),
            "steps": len(trace),
            "duration_s": round(seconds, 6),
            "outcome": outcome_of(findings, skip_reason),
            "skip_reason": skip_reason,
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
            "unknown": list(LEVEL_PROPERTIES[config.level]) if unknown is None else unknown,
            "coverage": coverage_points(((s.op, s.reference) for s in trace), states),
        }

    def count(self, record: dict[str, Any], findings: list[Finding]) -> None:
        replay = record["replay"]
        self.result.runs += 1
        self.result.cut_short += bool(record.get("cut_short"))
        self.result.outcomes[record["outcome"]] += 1
        self.result.coverage.update(record.get("coverage") or ())
        shown = {f["signature"]: f["message"] for f in (record["counterexample"] or {}).get("findings", [])}
        for finding in findings:
            self.result.signatures[finding.signature] += 1
            self.result.examples.setdefault(finding.signature, {
                "message": shown.get(finding.signature, finding.message), "replay": replay, "run_id": record["run_id"],
                "counterexample_length": record["counterexample"]["length"] if record["counterexample"] else None,
            })

    def engine_error(self, error: BaseException, batch_seed: int) -> None:
        """A failure outside any run (the generator, Hypothesis): one record of outcome `error`."""
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        finding = Finding(ERROR, "engine", 0, f"isrcheck failed: {type(error).__name__}: {message}",
                          evidence={"traceback": traceback.format_exc(limit=8)})
        self.counter += 1
        record = self.record_of(time.time(), 0.0, batch_seed, [], [finding], None, None, None)
        self.writer.write(record)
        self.count(record, [finding])

    @property
    def halted(self) -> bool:
        """The target refused the configuration, which is the same for every run: the worker stops."""
        return self.result.skip_reason is not None

    def shutdown(self) -> None:
        """End the shared target's session: controller processes it started must stop with the
        campaign, not linger until the interpreter exits (a pool worker, ended by SIGTERM when
        the pool closes, never gets there)."""
        if isinstance(self.make_target, SharedTarget):
            try:
                self.make_target.shutdown()
            except TargetFailure as error:  # the runs are recorded already; a person should still know
                print(f"isrcheck: the target did not shut down cleanly: {error}", file=sys.stderr)

    def after_exception(self, error: Exception, context: RunContext, batch_seed: int, examples: int) -> bool:
        """What an exception out of a batch's Hypothesis test means; always ends the batch."""
        held = context.held
        if context.out_of_time:
            # the deadline cut an example short and Hypothesis, finding its data changed under it,
            # complained (FlakyStrategyDefinition): the budget's doing, not a bug in isrcheck
            if held is not None:
                self.record(held, batch_seed, examples, counterexample=context.last_failing)
        elif isinstance(error, Flaky):
            # the finding happened (its run is recorded) but did not happen again on the same
            # steps: the target (or isrcheck) is not deterministic, so it has no shrunk replay
            note = {"not_reproduced": "the same steps did not fail again while shrinking: "
                    + str(error).splitlines()[0][:300]}
            if held is not None:
                self.record(held, batch_seed, examples, note=note)
            else:  # Hypothesis found the draws themselves inconsistent: isrcheck's generator is at fault
                self.engine_error(error, batch_seed)
        else:  # escaped the run itself (a generator bug): recorded, never an aborted campaign
            if held is not None:  # the finding written before shrinking stays, counted
                self.record(held, batch_seed, examples)
            self.engine_error(error, batch_seed)
        return True

    def run_batch(self, batch: int, examples: int) -> bool:
        """Run one seeded batch; True when the campaign should stop (stop-at-first found)."""
        config = self.config
        batch_seed = config.seed + batch
        cluster = config.level == "cluster"
        cluster_settings = CLUSTER_CONFIG if cluster else config.settings_for(batch_seed)
        context = RunContext(
            make_reference=engine_cluster if cluster else ReferenceTarget,
            make_target=self.make_target, release=config.release, config=cluster_settings,
            on_run=lambda finished: self.record(finished, batch_seed, examples),
            stop_at_first=config.stop_at_first, differential=config.differential and not cluster,
            unsupported=self.unsupported, observable_fields=self.observable_fields, level=config.level,
            deadline=self.deadline,
            target_is_reference=cluster and self.spec.adapter == "reference" and self.spec.mutant is None,
            on_found=lambda finished: self.record_found(finished, batch_seed, examples),
        )
        base: type[ClusterMachine] | type[ControllerMachine] = ClusterMachine if cluster else ControllerMachine
        targeted = TARGET in base.ideas
        bases = (TargetedSearch, base) if targeted else (base,)
        machine = type(f"{base.__name__}Campaign", bases, {"context": context})
        test = get_state_machine_test(machine, settings=settings(
            max_examples=examples, stateful_step_count=config.steps, database=None, deadline=None,
            phases=phases(targeted), suppress_health_check=list(HealthCheck),
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
        except BudgetExhausted:
            if context.held is not None:  # out of time while shrinking: the best counterexample so far
                self.record(context.held, batch_seed, examples, counterexample=context.last_failing)
            stop = True
        except CannotTest as cannot:
            raise cannot.error from None
        except Exception as error:
            stop = self.after_exception(error, context, batch_seed, examples)
        if context.skip_reason is not None:
            stop = True
        self.result.steps += context.steps_executed
        if context.found_at is not None and self.result.found_at is None:
            self.result.found_at = context.found_at
        return stop


def phases(targeted: bool) -> list[Phase]:
    """Hypothesis's phases for a batch: generation, then (with targeted search) its targeting
    phase, which hill-climbs on the distances `TargetedSearch` reports once half of the batch's
    examples ran, then shrinking. Without distances to climb on, Phase.target only costs time."""
    return [Phase.generate, *([Phase.target] if targeted else []), Phase.shrink]


def campaign_worker(config: CampaignConfig, worker: int) -> Any:
    """The worker for this campaign's runs: a `Worker` (Hypothesis state machines drawing from the
    reference's state, each run a `run.Run` beside the reference), or, for a black-box cluster
    target (one that declares `black_box_history`), a `history_campaign.HistoryWorker` (a drawn
    workload and nemesis, each run a `black_box_run` judged on its history). Both answer
    `run_batch`, `halted`, `shutdown`, `writer`, `result` and `deadline`."""
    if config.level == "cluster" and config.adapter != "reference" and config.mutant is None:
        from isrcheck.conformance.engine import history_campaign

        if history_campaign.is_black_box(config):
            return history_campaign.HistoryWorker(config, worker)
    return Worker(config, worker)


def worker_main(config: CampaignConfig, worker: int, batches: Iterable[tuple[int, int]],
                stop_event: Any, progress_queue: Any, deadline: float | None = None) -> CampaignResult:
    """Run `batches` in this process. `deadline` (time.time()) is the campaign's budget, counted
    from when the campaign started, not this worker; it is checked before every run and step."""
    def progress(runs: int, steps: int, findings: int) -> None:
        if progress_queue is not None:
            progress_queue.put((worker, runs, steps, findings))

    instance = campaign_worker(config, worker)
    if deadline is None and config.budget_s is not None:
        deadline = time.time() + config.budget_s
    instance.deadline = deadline
    try:
        for batch, examples in batches:
            if stop_event is not None and stop_event.is_set():
                break
            if deadline is not None and time.time() >= deadline:
                break
            stop = instance.run_batch(batch, examples)
            progress(instance.result.runs, instance.result.steps, sum(instance.result.signatures.values()))
            if instance.halted:
                break  # the configuration is the same for every run: refused once, refused always
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
    return list(iter_batches(config))


BUDGET_BATCHES = 1_000_000


def iter_batches(config: CampaignConfig) -> Iterator[tuple[int, int]]:
    """`plan_batches`, one at a time: a budget campaign's endless plan as a list was a million
    tuples (about 100 MB and a quarter of a second in every campaign process) to use a handful."""
    if config.examples is None:
        yield from ((b, config.batch_size) for b in range(BUDGET_BATCHES))
        return
    full, rest = divmod(config.examples, config.batch_size)
    yield from ((b, config.batch_size) for b in range(full))
    if rest:
        yield full, rest


def run_campaign(config: CampaignConfig, on_progress: Callable[[int, int, int, float], None] | None = None
                 ) -> CampaignResult:
    started = time.monotonic()
    deadline = None if config.budget_s is None else time.time() + config.budget_s
    plan = iter_batches(config)
    workers = max(1, config.workers)
    total = CampaignResult()

    def report(runs: int, steps: int, findings: int) -> None:
        if on_progress is not None:
            on_progress(runs, steps, findings, time.monotonic() - started)

    if workers == 1:
        total.merge(worker_main(config, 0, plan, None, _Direct(report), deadline=deadline))
    else:
        results, lost = run_workers(config, plan, workers, deadline, report, config.stop_at_first)
        for result in results:
            total.merge(result)
        for line in lost:
            print(f"isrcheck: {line}", file=sys.stderr)
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
