"""A cluster-level campaign against a black-box cluster target (`kafka-cluster`, or any target that
declares `black_box_history = True` and answers the operations of
`isrcheck.adapters.real_kafka.kafka_cluster`): Hypothesis draws a workload and a nemesis, every
run is one `run.Run` (`black_box_run`) on a fresh or healed cluster, whose history is judged by the
black-box properties, recorded with the run, and shrunk within the campaign's shrink budget.

No reference runs alongside: a real cluster's timings are its own, so its history is judged by
properties, not compared (docs/real-kafka.md, "Simulation and real cluster"). Draws depend on the
seed alone (`seed_only_draws`), so `--seed S --examples N` replays a batch's draws; the cluster's
answers may differ between replays (a real cluster is not deterministic).

Its `HistoryWorker` runs batches as `campaign.Worker` does, in `campaign.worker_main`: so
`--workers N` gives each worker process its own cluster (kafka-cluster picks a free port block per
cluster), and `--spark` one per task, each writing its own records.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from isrcheck.adapters.base import Target, TargetFailure, UnsupportedConfiguration
from isrcheck.conformance.engine.campaign import CampaignConfig, CampaignResult, outcome_of
from isrcheck.conformance.engine.cluster_history import FINAL_STEPS, STALE_EXPANSION, History, run_history
from isrcheck.conformance.engine.hypothesis_internals import seed_only_draws, shrinking_within
from isrcheck.conformance.engine.run import black_box_actors
from isrcheck.conformance.engine.step_checkers import black_box_unknown
from isrcheck.conformance.engine.targets import TargetSpec
from isrcheck.conformance.generator.black_box_faults import deposed_controller_strategies
from isrcheck.conformance.properties.black_box_history import HistoryConfig
from isrcheck.conformance.properties.catalogue import BLACK_BOX
from isrcheck.contract.errors import UsageError
from isrcheck.contract.operations.findings import CRASH, Finding
from isrcheck.contract.records.schema import SCHEMA_ID
from isrcheck.contract.records.writer import RecordWriter, utc_timestamp
from isrcheck.reference_impl.release import Elr, profile_named

TOPIC = "isrcheck"
MAX_FAILED_STARTS = 3
Steps = list[tuple[str, dict[str, Any]]]


def step_strategy(brokers: int) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """One workload or nemesis step. Produce comes first (Hypothesis shrinks towards the first
    alternative); faults act on one broker, or on the controller."""
    b = st.integers(1, brokers)
    produce = st.builds(lambda acks, n: ("produce", {"topic": TOPIC, "records": n, "acks": acks}),
                        st.sampled_from(["all", "1"]), st.integers(1, 5))
    tick = st.builds(lambda ms: ("tick", {"ms": ms}), st.sampled_from([500, 2000, 5000, 9000]))
    net = st.builds(lambda broker, link, mode, ms: ("net", {"broker": broker, "link": link, "mode": mode,
                                                            **({"ms": ms} if mode == "delay" else {})}),
                    b, st.sampled_from(["replication", "controller"]), st.sampled_from(["cut", "delay", "hold",
                                                                                        "pass"]),
                    st.sampled_from([100, 1000]))
    one_broker = st.builds(lambda op, broker: (op, {"broker": broker}),
                           st.sampled_from(["crash", "pause", "resume", "clean_restart", "hold_alter_partition"]), b)
    restart = st.builds(lambda broker, lose: ("restart", {"broker": broker, "lose": lose}), b,
                        st.sampled_from(["none", "disk"]))
    controller: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.just(("fail_over_controller", {}))
    stale = [stale_expansion_strategy() for _ in range(3)]  # three weights: one_of counts distinct strategies
    return st.one_of(produce, produce, tick, tick, one_broker, restart, net, controller, *stale,
                     *deposed_controller_strategies(TOPIC))


def stale_expansion_strategy() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """The composite fault of KIP-903's family (`cluster_history.stale_expansion_steps`): a member
    rejoins while the leader's AlterPartition is held; Hypothesis draws which follower, whether it
    restarts with its log directory kept or emptied, whether the leader's replication listener is
    cut meanwhile, what happens to the leader after, the records and the timing. Roles (leader,
    followers) are bound when it runs. It is one drawn step among thirteen (three of the weights);
    inside it, disk loss and isolation are drawn 2 in 3 and a leader fault 3 in 4, so KIP-903's
    point (lose=disk, isolate, a leader fault) is 1 in 3 of these steps (measured draw rates:
    tests/cluster_history/test_generator.py)."""
    return st.builds(
        lambda member, lose, isolate, leader_fault, records, after_ms: (STALE_EXPANSION, {
            "topic": TOPIC, "member": member, "lose": lose, "isolate": isolate, "leader_fault": leader_fault,
            "records": records, "after_ms": after_ms}),
        st.integers(0, 1), st.sampled_from(["disk", "disk", "none"]), st.sampled_from([True, True, False]),
        st.sampled_from(["crash", "pause", "clean_restart", "none"]), st.integers(1, 5), st.sampled_from([3000, 500]))


def create_strategy(brokers: int) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """The run's topic: replication 3 (min.insync.replicas 2, the cluster's) or 2 (min.insync.replicas
    1, KIP-903's setting), on a drawn ordering of the brokers — the first replica leads, the order
    decides which in-sync replica a controller elects."""
    def create(replication: int, order: list[int]) -> tuple[str, dict[str, Any]]:
        configs = {"min.insync.replicas": "1"} if replication < 3 else {}
        return "create_topic", {"topic": TOPIC, "replicas": order[:replication], "configs": configs}

    return st.builds(create, st.sampled_from([min(3, brokers), min(2, brokers)]),
                     st.permutations(list(range(1, brokers + 1))))


def steps_strategy(brokers: int, max_steps: int) -> st.SearchStrategy[Steps]:
    """The topic, then up to `max_steps` drawn steps (a composite fault is one of them)."""
    return st.tuples(create_strategy(brokers), st.lists(step_strategy(brokers), min_size=min(4, max_steps),
                                                        max_size=max_steps)).map(
        lambda drawn: [drawn[0], *drawn[1]])


def history_config(target: Target, release: str) -> HistoryConfig:
    """The cluster's configuration the judge needs: its session timeout and min.insync.replicas
    (the target's options), and whether eligible leader replicas are on (the release's default
    for a fresh cluster: 4.1 on; reference_impl/release.py)."""
    options = getattr(target, "options", {}) or {}
    from isrcheck.adapters.real_kafka.cluster_processes import KAFKA_SESSION_TIMEOUT_MS

    default_session_ms = KAFKA_SESSION_TIMEOUT_MS if options.get("kafka-defaults") else 6000
    elr = profile_named(release).elr is Elr.DEFAULT_ON
    return HistoryConfig(session_timeout_ms=int(options.get("session-timeout-ms", default_session_ms)),
                         min_insync_replicas=int(options.get("min-insync-replicas", 2)), elr=int(elr))


class HistoryFailure(Exception):
    """Raised inside the Hypothesis test so it shrinks; carries nothing Hypothesis needs."""


@dataclass
class FinishedHistory:
    steps: Steps
    history: History
    findings: list[Finding]
    started_at: float
    seconds: float
    config: HistoryConfig
    """What the run was judged with (the record carries it, for `isrcheck check`)."""


@dataclass
class HistoryWorker:
    """A campaign worker (`campaign.worker_main`, a `--workers` process or a `--spark` task) for a
    black-box cluster: the same interface as `campaign.Worker` (`run_batch`, `halted`,
    `shutdown`, `writer`, `result`, `deadline`), with a cluster of its own — kept across its runs
    when the target can be reused (`kafka-cluster`), on a port block of its own."""

    config: CampaignConfig
    worker: int = 0
    result: CampaignResult = field(default_factory=CampaignResult)
    counter: int = 0
    deadline: float | None = None
    """time.time() after which no run starts (the campaign's budget)."""
    unsupported: bool = False
    failed_starts: int = 0
    """Runs in a row whose cluster did not start; at MAX_FAILED_STARTS the worker stops (the
    machine, not the system under test, is broken: ports, disk, memory)."""

    def __post_init__(self) -> None:
        self.spec = TargetSpec(self.config.adapter, None, self.config.timeout_s)
        self.make_target = self.spec.factory("cluster")
        self.writer = RecordWriter(self.config.records_dir, self.config.campaign_id, self.worker)
        if self.writer.path is not None:
            self.result.records_files.append(str(self.writer.path))

    @property
    def halted(self) -> bool:
        """The worker cannot go on: the target refused the configuration, or clusters keep failing to start."""
        return self.unsupported or self.failed_starts >= MAX_FAILED_STARTS

    def shutdown(self) -> None:
        """Stop the cluster kept between runs (a reusable target's)."""
        shutdown = getattr(self.make_target, "shutdown", None)
        if shutdown is not None:
            shutdown()

    def run_once(self, steps: Steps) -> FinishedHistory:
        target = self.make_target()
        if hasattr(target, "reuse"):
            target.reuse = True  # a cluster kept between runs; `shutdown` stops it at the end
        config = history_config(target, self.config.release)
        started, clock = time.time(), time.monotonic()
        try:
            history, findings = run_history(target, self.config.release, steps, config)
        except (UnsupportedConfiguration, UsageError):
            raise  # not an outcome of this run: the campaign cannot run at all
        except TargetFailure as failure:
            history, findings = [], [Finding(CRASH, "open", 0, f"the cluster failed: {failure}")]
        except Exception as error:  # an unexpected failure of the target or its launcher: an outcome, not an abort
            history, findings = [], [Finding(CRASH, "open", 0, f"the cluster failed: {type(error).__name__}: {error}")]
        finished = FinishedHistory(steps, history, findings, started, time.monotonic() - clock, config)
        self.failed_starts = self.failed_starts + 1 if not history and findings else 0
        if self.failed_starts == MAX_FAILED_STARTS:
            print(f"isrcheck: {MAX_FAILED_STARTS} clusters in a row did not start; worker {self.worker} stops",
                  file=sys.stderr)
        if findings and self.result.found_at is None:
            self.result.found_at = time.monotonic()
        return finished

    def record(self, run: FinishedHistory, batch_seed: int, batch_examples: int, shrunk: bool) -> None:
        config = self.config
        self.counter += 1
        run_id = f"{config.campaign_id}-w{self.worker}-{self.counter:06d}"
        replay = None
        if run.findings:
            replay = (config.replay_command(batch_seed, batch_examples) if shrunk
                      else f"isrcheck replay {self.writer.path} --run {run_id}" if self.writer.path else None)
        outcome = outcome_of(run.findings)
        results = [e for e in run.history if e["type"] == "op" and e["op"] not in FINAL_STEPS]
        record = {
            "schema": SCHEMA_ID, "run_id": run_id, "campaign_id": config.campaign_id,
            "started_at": utc_timestamp(run.started_at), "seed": batch_seed, "adapter": config.adapter,
            "target": self.spec.display_name, "release": config.release, "mutant": None, "negative_control": None,
            "level": "cluster", "differential": False, "steps": len(run.steps),
            "duration_s": round(run.seconds, 6), "outcome": outcome,
            "findings": [f.to_json() for f in run.findings],
            "counterexample": None if not run.findings else {
                "length": len(run.steps),
                "diverging_step": run.findings[0].step,
                "steps": [{"index": n + 1, "op": e["op"], "args": e["args"],
                           **dict(zip(("src", "dst"), black_box_actors(e["op"], e["args"]), strict=True)),
                           "target": e["result"]} for n, e in enumerate(results)],
            },
            "replay": replay,
            "history": {"config": run.config.to_json(), "entries": run.history},
            "properties": list(BLACK_BOX),
            "unknown": black_box_unknown(run.history),
        }
        self.writer.write(record)
        self.result.runs += 1
        self.result.steps += len(run.steps)
        self.result.outcomes[outcome] += 1
        for finding in run.findings:
            self.result.signatures[finding.signature] += 1
            self.result.examples.setdefault(finding.signature, {
                "message": finding.message, "replay": replay, "run_id": run_id,
                "counterexample_length": len(run.steps)})

    def run_batch(self, batch: int, examples: int) -> bool:
        config = self.config
        batch_seed = config.seed + batch
        brokers = int(getattr(self.make_target(), "options", {}).get("brokers", 3))
        failing: list[FinishedHistory] = []

        @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate, Phase.shrink],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, report_multiple_bugs=False,
                  print_blob=False)
        @given(steps_strategy(brokers, config.steps))
        def test(steps: Steps) -> None:
            if self.deadline is not None and time.time() > self.deadline:
                return  # the budget is spent: the remaining examples of this batch do not run
            if self.failed_starts >= MAX_FAILED_STARTS:
                return
            finished = self.run_once(steps)
            if finished.findings:
                failing.append(finished)
                if not config.stop_at_first:
                    self.record(finished, batch_seed, examples, shrunk=False)
                    return
                raise HistoryFailure()
            if failing and config.stop_at_first:
                return  # a shrink attempt that passed: not one of the campaign's runs (nor are its steps)
            self.record(finished, batch_seed, examples, shrunk=False)

        seed(batch_seed)(test)
        try:
            with seed_only_draws(), shrinking_within(config.shrink_budget_s):
                test()
        except HistoryFailure:
            self.record(failing[-1], batch_seed, examples, shrunk=True)  # Hypothesis ran the smallest last
            return True
        except Flaky as error:
            if failing and config.stop_at_first:
                self.record(failing[-1], batch_seed, examples, shrunk=False)
            self.result.outcomes["flaky"] += 1
            self.result.examples.setdefault("flaky", {"message": str(error)[:500]})
            return True
        except UnsupportedConfiguration as error:
            print(f"isrcheck: {error}", file=sys.stderr)
            self.result.outcomes["skipped"] += 1
            self.unsupported = True
            return True
        return False


def is_black_box(config: CampaignConfig) -> bool:
    """Whether the target judges by history (it declares `black_box_history`)."""
    from isrcheck.adapters.catalogue.registry import make_target

    return bool(getattr(make_target(config.adapter, config.timeout_s), "black_box_history", False))
