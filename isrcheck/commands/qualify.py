"""`isrcheck qualify --adapter SPEC --kafka R --budget S --out DIR [--junit FILE]`: the one command a
CI job runs against one release, and its one verdict (docs/qualify.md).

Within the budget it runs the scenario suite, a controller campaign and, where the target has the
cluster level, a cluster campaign (the same campaigns as `isrcheck run`), then the Spark summary
(`isrcheck summarize`) and the HTML report (`isrcheck report`) of their records. It prints one
verdict line and exits with its code:

* `conforms` (0): every scenario that ran passed, every campaign passed;
* `known divergences only` (0): as above, but some runs diverged as a known divergence does
  (docs/known-divergences.md: Kafka's triaged behaviour, matched by its rule);
* `new finding` (1): a scenario failed, or a campaign found a divergence, a violation, a crash or a
  timeout of the target;
* `could not test` (2): bad input, an environment that cannot run the target, a target that
  refused every configuration, or isrcheck's own failure — nothing can be said of the target.

Unseeded by default: the seed is printed, and `--seed` replays the same campaigns' draws.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from isrcheck.adapters.catalogue.registry import known_adapters, make_target
from isrcheck.commands.run import configs_from, parse_budget
from isrcheck.commands.summarize import prepare_directory, summarize_with_spark
from isrcheck.conformance.engine.campaign import (
    ENGINE_ERROR,
    FAILED,
    KNOWN_ONLY,
    UNTESTED,
    CampaignConfig,
    CampaignResult,
    run_campaign,
)
from isrcheck.conformance.engine.junit import junit_suite
from isrcheck.conformance.engine.spark_session import check_spark
from isrcheck.conformance.scenario.load import load_all
from isrcheck.conformance.scenario.run import result_json, run_scenario
from isrcheck.contract.errors import EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, UsageError
from isrcheck.reference_impl.release import PROFILES
from isrcheck.reports.html_report import render_report
from isrcheck.reports.summary_file import write_summary

CONFORMS, KNOWN_DIVERGENCES_ONLY, NEW_FINDING, COULD_NOT_TEST = (
    "conforms", "known divergences only", "new finding", "could not test")
EXIT_CODES = {CONFORMS: EXIT_PASSED, KNOWN_DIVERGENCES_ONLY: EXIT_PASSED, NEW_FINDING: EXIT_FAILED,
              COULD_NOT_TEST: EXIT_USAGE}
SCENARIOS = Path(__file__).resolve().parents[1] / "conformance" / "scenarios"
if not SCENARIOS.is_dir():  # a source checkout maps conformance/ beside the package (isrcheck/__init__.py)
    SCENARIOS = Path(__file__).resolve().parents[2] / "conformance" / "scenarios"
PROGRESS_EVERY_S = 30.0
"""A progress line at most this often per campaign: a CI log, not a terminal."""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "qualify", help="qualify one Kafka release: scenarios, campaigns, summary, report, one verdict",
        description="The command a CI job runs against one release: the scenario suite, a controller campaign "
        "and (where the target has it) a cluster campaign within --budget, the Spark summary and the HTML report; "
        "one verdict: conforms / known divergences only (exit 0), new finding (1), could not test (2).",
    )
    parser.add_argument("--adapter", required=True, metavar="SPEC",
                        help=f"the system under test; {known_adapters()}".replace("%", "%%"))
    parser.add_argument("--kafka", required=True, metavar="RELEASE",
                        help=f"the release ({', '.join(PROFILES)}, or X.Y.Z for kafka-docker/kafka-cluster)")
    parser.add_argument("--budget", default="1800", metavar="SECONDS",
                        help="wall-clock seconds for everything, summary and report included (default 1800)")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR",
                        help="output directory: records/, summary/, report.html, scenarios.jsonl, qualify.json")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write one JUnit XML file (scenarios, campaigns)")
    parser.add_argument("--seed", type=int, default=None, help="campaign seed (default: random, printed)")
    parser.add_argument("--scenarios", type=Path, default=SCENARIOS, metavar="DIR",
                        help="the scenario suite (default: the suite shipped with isrcheck)")
    parser.add_argument("--steps", type=int, default=50, help="steps per campaign run (default 50)")
    parser.add_argument("--master", metavar="URL", help="Spark master for the summary (default local[*])")
    parser.set_defaults(handler=run)


@dataclass(frozen=True)
class BudgetSplit:
    """How the budget is spent: the scenarios take what they take (they are the baseline and are
    not cut), the summary and report keep a reserve, the campaigns share the rest — the controller
    campaign 60 % and the cluster campaign 40 % when there is one. A budget too small for all of it
    is overrun by the campaigns' floors and the summary, never by cutting the scenarios."""

    total_s: float
    reserve_s: float
    controller_s: float
    cluster_s: float

    @staticmethod
    def of(total_s: float, elapsed_s: float, with_cluster: bool) -> BudgetSplit:
        reserve = min(150.0, max(60.0, 0.1 * total_s))  # Spark's start alone took 40-70 s on a loaded 2-core machine
        floor = min(30.0, max(5.0, 0.05 * total_s))  # a campaign always gets some time, even late
        campaigns = max(total_s - elapsed_s - reserve, (2 if with_cluster else 1) * floor)
        controller = round(campaigns * 0.6, 1) if with_cluster else round(campaigns, 1)
        return BudgetSplit(total_s, reserve, controller, round(campaigns - controller, 1) if with_cluster else 0.0)

    def describe(self, scenarios: str) -> str:
        cluster = f", cluster campaign {self.cluster_s:.0f} s" if self.cluster_s else ", no cluster campaign"
        return (f"budget {self.total_s:.0f} s: scenario suite ({scenarios}), controller campaign "
                f"{self.controller_s:.0f} s{cluster}, summary and report {self.reserve_s:.0f} s")


@dataclass
class Qualification:
    """What ran and what it found; `qualify.json` is this, and the verdict follows from it."""

    adapter: str
    release: str
    seed: int
    scenarios: dict[str, int] = field(default_factory=lambda: {"passed": 0, "failed": 0, "skipped": 0})
    failed_scenarios: list[str] = field(default_factory=list)
    campaigns: dict[str, dict[str, Any]] = field(default_factory=dict)
    not_run: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)

    def verdict(self) -> tuple[str, str]:
        """(verdict, why): a target failure first, then what could not be tested, then known."""
        found = [level for level, c in self.campaigns.items() if c["verdict"] == FAILED]
        if self.scenarios["failed"] or found:
            parts = ([f"{self.scenarios['failed']} scenario(s) failed"] if self.scenarios["failed"] else []) + [
                f"{level} campaign: {', '.join(self.campaigns[level]['findings']) or 'a crash or timeout'}"
                for level in found]
            return NEW_FINDING, "; ".join(parts)
        if ENGINE_ERROR in self.verdicts:
            return COULD_NOT_TEST, "isrcheck itself failed (a bug in isrcheck, not in the target; see the records)"
        untested = [level for level, c in self.campaigns.items() if c["verdict"] == UNTESTED]
        if not self.scenarios["passed"] or untested or not self.campaigns:
            reason = (f"{', '.join(untested)} campaign tested nothing" if untested
                      else "no scenario ran" if not self.scenarios["passed"] else "no campaign ran")
            return COULD_NOT_TEST, reason
        if KNOWN_ONLY in self.verdicts:
            known = sorted({s for c in self.campaigns.values() for s in c["known_divergences"]})
            return KNOWN_DIVERGENCES_ONLY, ", ".join(known)
        return CONFORMS, "nothing found"

    def ran(self) -> str:
        scenarios = (f"scenarios {self.scenarios['passed']} passed, {self.scenarios['failed']} failed, "
                     f"{self.scenarios['skipped']} skipped")
        campaigns = [f"{level} {c['runs']:,} runs / {c['steps']:,} steps" for level, c in self.campaigns.items()]
        return "; ".join([scenarios, *campaigns, *self.not_run])


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    try:
        budget = parse_budget(args.budget)
    except argparse.ArgumentTypeError as error:
        raise UsageError(f"--budget {error}") from None
    if args.steps < 1:
        raise UsageError("--steps must be at least 1")
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory")
    if (out / "records").exists() and any((out / "records").glob("*.jsonl")):
        raise UsageError(f"--out {out}: records/ already holds records; choose a new directory so runs do not mix")
    scenarios = load_all([str(args.scenarios)])  # a malformed suite is one line, exit 2, before anything runs
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    configs, skipped = configs_from(campaign_arguments(args, out, seed))
    if not configs:  # no level can be built: an unknown adapter, a bad spec
        raise UsageError(skipped[0].split(": ", 1)[1])
    levels = target_levels(configs[0].adapter)
    skipped += [f"{c.level} level skipped: the target has no {c.level} level" for c in configs if c.level not in levels]
    configs = [c for c in configs if c.level in levels]
    check_spark(args.master)  # the summary would fail only after the whole budget: fail now
    adapter = configs[0].adapter
    release = configs[0].release
    qualification = Qualification(adapter, release, seed, not_run=[line.split(":")[0] for line in skipped])
    with_cluster = any(c.level == "cluster" for c in configs)
    print(f"isrcheck qualify: {adapter} on Kafka {release}, seed {seed} (replay: --seed {seed}) → {out}/", flush=True)
    print(BudgetSplit.of(budget, 0.0, with_cluster).describe(f"{len(scenarios)} scenarios, not cut"), flush=True)
    suites = [run_suite(scenarios, adapter, release, out, qualification)]
    split = BudgetSplit.of(budget, time.monotonic() - started, with_cluster)
    print(f"after {time.monotonic() - started:.0f} s: " + split.describe("done"), flush=True)
    for config in configs:
        seconds = split.controller_s if config.level == "controller" else split.cluster_s
        result = run_level(dataclasses.replace(config, budget_s=seconds), qualification)
        suites.append(junit_suite(config, result))
    summarize(out, args.master, qualification)
    verdict, why = qualification.verdict()
    (out / "qualify.json").write_text(json.dumps({
        "verdict": verdict, "why": why, **dataclasses.asdict(qualification)}, indent=2), encoding="utf-8")
    if args.junit is not None:
        write_junit_file(args.junit, suites)
    print(f"{verdict}: {why} — {qualification.ran()}; Kafka {release} on {adapter}, seed {seed}, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    return EXIT_CODES[verdict]


def target_levels(adapter: str) -> frozenset[str]:
    """The levels the target offers (kafka-cluster: cluster only; the wire adapters: controller)."""
    target = make_target(adapter)
    try:
        return frozenset(getattr(target, "levels", {"controller"}))
    finally:
        target.shutdown()


def campaign_arguments(args: argparse.Namespace, out: Path, seed: int) -> argparse.Namespace:
    """What `isrcheck run --level all --budget ... --records OUT/records` would be given, so that the
    campaigns are checked and built exactly as `run` builds them (an unknown adapter, a missing
    KAFKA_HOME or Docker: one line, exit 2, before anything runs)."""
    return argparse.Namespace(
        adapter=args.adapter, bootstrap=None, kafka=args.kafka, mutant=None, level="all", examples=None,
        budget=str(args.budget), steps=args.steps, seed=seed, workers="1", records=out / "records", collect=False,
        no_differential=False, timeout=30.0, shrink_budget=20,
    )


def run_suite(scenarios: list[Any], adapter: str, release: str, out: Path,
              qualification: Qualification) -> ElementTree.Element:
    """Every scenario on the target, each result a line of scenarios.jsonl and a JUnit case."""
    started = time.monotonic()
    suite = ElementTree.Element("testsuite", name=f"isrcheck scenarios {adapter} {release}")
    target = make_target(adapter)
    counts = qualification.scenarios
    prepare_directory(out)
    try:
        with (out / "scenarios.jsonl").open("w", encoding="utf-8") as lines:
            for index, scenario in enumerate(scenarios, 1):
                case_started = time.monotonic()
                result = run_scenario(scenario, target, release)
                counts[result.status] += 1
                lines.write(json.dumps(result_json(result)) + "\n")
                case = ElementTree.SubElement(suite, "testcase", classname=f"isrcheck.scenario.{scenario.file}",
                                              name=scenario.name, time=f"{time.monotonic() - case_started:.3f}")
                if result.status == "failed":
                    qualification.failed_scenarios.append(f"{scenario.file} :: {scenario.name}")
                    ElementTree.SubElement(case, "failure", message=str(result.reason))
                    print(f"FAIL {scenario.file} :: {scenario.name} — {result.reason}", flush=True)
                elif result.status == "skipped":
                    ElementTree.SubElement(case, "skipped", message=str(result.reason))
                if index % 25 == 0 or index == len(scenarios):
                    print(f"scenarios: {index}/{len(scenarios)} ({counts['passed']} passed, {counts['failed']} "
                          f"failed, {counts['skipped']} skipped) in {time.monotonic() - started:.0f} s", flush=True)
    finally:
        target.shutdown()
    suite.set("tests", str(len(scenarios)))
    suite.set("failures", str(counts["failed"]))
    suite.set("errors", "0")
    suite.set("skipped", str(counts["skipped"]))
    suite.set("time", f"{time.monotonic() - started:.3f}")
    return suite


def run_level(config: CampaignConfig, qualification: Qualification) -> CampaignResult:
    """One campaign (`isrcheck run`'s), with a progress line every PROGRESS_EVERY_S seconds."""
    last = [0.0]

    def progress(runs: int, steps: int, findings: int, seconds: float) -> None:
        if seconds - last[0] >= PROGRESS_EVERY_S:
            last[0] = seconds
            print(f"{config.level} campaign: {runs:,} runs, {steps:,} steps, {findings} findings, "
                  f"{seconds:.0f}/{config.budget_s:.0f} s", flush=True)

    print(f"{config.level} campaign {config.campaign_id}: {config.budget_s:.0f} s, seed {config.seed}", flush=True)
    result = run_campaign(config, progress)
    summary = result.to_json()
    qualification.campaigns[config.level] = {key: summary[key] for key in (
        "verdict", "runs", "steps", "seconds", "outcomes", "findings", "known_divergences")}
    qualification.verdicts.append(result.verdict)
    print(f"{config.level} campaign: {result.runs:,} runs, {result.steps:,} steps in {result.seconds:.0f} s — "
          f"{result.verdict}", flush=True)
    for signature, count in result.signatures.most_common():
        example = result.examples.get(signature, {})
        label = "KNOWN" if signature in result.known else "FOUND"
        print(f"  {label} {signature} ({count}x): {example.get('message')}", flush=True)
        if example.get("replay"):
            print(f"    replay: {example['replay']}", flush=True)
    return result


def summarize(out: Path, master: str | None, qualification: Qualification) -> None:
    """The Spark summary (`isrcheck summarize`) and the HTML report (`isrcheck report`) of the records."""
    files = sorted((out / "records").glob("*.jsonl"))
    if not files:
        print("no records to summarize (no campaign ran)", flush=True)
        return
    print("summarizing on Spark ...", flush=True)
    summary = summarize_with_spark(files, out / "summary", master, {})
    write_summary(summary, out / "summary")
    title = f"isrcheck qualify — {qualification.adapter} on Kafka {qualification.release}"
    (out / "report.html").write_text(render_report(summary, title=title), encoding="utf-8")
    print(f"report: {(out / 'report.html').resolve()}", flush=True)


def write_junit_file(path: Path, suites: list[ElementTree.Element]) -> None:
    root = ElementTree.Element("testsuites", name="isrcheck qualify")
    root.extend(suites)
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
