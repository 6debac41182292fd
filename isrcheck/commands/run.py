"""`isrcheck run`: a campaign of generated interleavings against a target (issue #4).

Exit codes (docs/exit-codes.md): 0 the target was exercised and nothing was found (or only known
divergences, docs/known-divergences.md); 1 it broke
a property, diverged, crashed or hung; 2 a usage or environment error, or nothing was tested
(the target refused the configuration in every campaign); 3 isrcheck itself failed. With
`--spark` the same campaign runs as Spark tasks (`conformance/engine/spark_campaign.py`) and
prints the same result.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from isrcheck.adapters.catalogue.adapter_options import check_environment, with_cli_options
from isrcheck.adapters.catalogue.registry import known_adapters
from isrcheck.commands.summarize import add_spark_options, prepare_directory, spark_conf
from isrcheck.conformance.engine.campaign import (
    ENGINE_ERROR,
    FAILED,
    KNOWN_ONLY,
    LEVELS,
    UNTESTED,
    CampaignConfig,
    CampaignResult,
    run_campaign,
)
from isrcheck.conformance.engine.junit import write_junit
from isrcheck.conformance.engine.targets import SharedTarget, TargetSpec
from isrcheck.conformance.generator.cluster_settings import settings_option
from isrcheck.contract.errors import EXIT_ENGINE_ERROR, EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, UsageError
from isrcheck.reference_impl.mutants import CATALOGUE
from isrcheck.reference_impl.release import NEWEST, PROFILES, ClusterConfig, profile_named


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run", help="run a campaign of generated interleavings against a target",
        description="Generate interleavings with Hypothesis, run them on the reference and the target side by "
        "side, check the properties, shrink findings, write one record per run.",
    )
    parser.add_argument("--bootstrap", metavar="HOST:PORT",
                        help="kafka-wire: drive the controller listening here (docs/wire.md)")
    parser.add_argument("--adapter", default="reference", metavar="SPEC",
                        help=f"the system under test (default: reference); {known_adapters()}".replace("%", "%%"))
    parser.add_argument("--kafka", metavar="RELEASE",
                        help=f"release profile ({', '.join(PROFILES)}; default: the mutant's release, else {NEWEST})")
    parser.add_argument("--mutant", help="run the reference with this mutant applied (see 'isrcheck mutants')")
    parser.add_argument("--level", default=None, choices=[*LEVELS, "all"],
                        help="controller, cluster or all (default: the mutant's level, else controller)")
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("--examples", type=int,
                        help="number of Hypothesis examples (default 100); the few more it starts and "
                        "discards (its data ran out) run and are recorded too, about 2%%")
    amount.add_argument("--budget", type=str, metavar="SECONDS",
                        help="a wall-clock deadline: no run starts, and a run or shrink in progress stops, this many "
                        "seconds after the campaign started")
    parser.add_argument("--steps", type=int, default=50, help="steps per run (default 50)")
    parser.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                        help="controller level: a cluster setting for every run, over the release's default "
                        "(metadata_version=3.5-IV2, eligible_leader_replicas=true); repeatable")
    parser.add_argument("--draw-settings", action="store_true",
                        help="controller level: each batch of runs draws metadata.version and eligible leader "
                        "replicas within what the release accepts (--setting still fixes a key)")
    parser.add_argument("--seed", type=int, default=None, help="campaign seed (default: random, printed)")
    parser.add_argument("--workers", default="1", help="worker processes, or 'auto' (not with --spark)")
    parser.add_argument("--records", type=Path, metavar="DIR", help="write one JSON line per run under DIR")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stop-at-first", action="store_true", help="stop and shrink at the first finding (default)")
    mode.add_argument("--collect", action="store_true", help="keep exploring and record every finding")
    parser.add_argument("--no-differential", action="store_true",
                        help="judge the target by the properties alone (the black-box figure)")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="per-call timeout for the target (default 30)")
    parser.add_argument("--shrink-budget", type=int, default=20, metavar="SECONDS",
                        help="stop shrinking a finding after this long (default 20; a real cluster run takes ~1 min)")
    parser.add_argument("--record-history", action="store_true",
                        help="every record carries its run's history, for 'isrcheck check' (by default only "
                             "the records of runs that did not pass)")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    parser.add_argument("--json", action="store_true", help="print a final JSON summary")
    parser.add_argument("--spark", action="store_true",
                        help="run the batches as Spark tasks, one per executor slot; each task stops at its own "
                        "first finding, and on a cluster --records must be a shared path")
    add_spark_options(parser)
    parser.set_defaults(handler=run)


Execute = Callable[[CampaignConfig, Callable[[int, int, int, float], None]], CampaignResult]


def controller_settings(args: argparse.Namespace, release: str, level: str) -> tuple[tuple[str, Any], ...]:
    """`--setting`s, checked against the release (a combination it cannot run is a usage error,
    not a campaign of skipped runs); they and `--draw-settings` mean nothing at the cluster level."""
    texts: list[str] = getattr(args, "setting", None) or []
    if level == "cluster" and (texts or getattr(args, "draw_settings", False)):
        raise UsageError("--setting and --draw-settings apply to the controller level only")
    try:
        settings = dict(settings_option(text) for text in texts)
        ClusterConfig.for_profile(profile_named(release), **settings)
    except ValueError as error:
        raise UsageError(f"--setting: {error}") from None
    return tuple(settings.items())


def check_spark_options(args: argparse.Namespace) -> None:
    """--master and --conf only mean something with --spark, and --spark brings its own
    parallelism: a silently ignored option would run a different campaign than the one asked for."""
    if not args.spark:
        if args.master is not None or args.conf:
            raise UsageError(f"{'--master' if args.master is not None else '--conf'} needs --spark")
        return
    if args.workers != "1":
        raise UsageError("--workers does not apply with --spark (the executors' task slots set the parallelism)")


@contextmanager
def campaign_executor(args: argparse.Namespace) -> Iterator[Execute]:
    """Local processes, or a Spark session kept for all levels of this invocation."""
    if not args.spark:
        yield run_campaign
        return
    from isrcheck.conformance.engine.spark_campaign import run_campaign_on_spark, start_campaign_session
    from isrcheck.conformance.engine.spark_session import stop_session

    spark = start_campaign_session(args.master, spark_conf(args.conf))
    try:
        yield lambda config, progress: run_campaign_on_spark(spark, config)
    finally:
        stop_session(spark)


def parse_budget(text: str) -> float:
    """`--budget`: a finite, positive number of seconds. `nan` compares false with every time, so a
    nan budget never ended; negative, zero and infinite ones mean nothing as a deadline."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, not {text!r}")
    return seconds


def parse_workers(text: str) -> int:
    if text == "auto":
        return os.cpu_count() or 1
    try:
        workers = int(text)
    except ValueError:
        raise UsageError(f"--workers must be a number or 'auto', not {text!r}") from None
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    return workers


def configs_from(args: argparse.Namespace) -> tuple[list[CampaignConfig], list[str]]:
    """One campaign per level, and the reasons for levels skipped (a target that cannot run
    a level is skipped with its reason, not an error, when `--level all` asks for it)."""
    if args.kafka is None:
        mutant = CATALOGUE.get(args.mutant) if args.mutant else None
        args.kafka = mutant.release if mutant is not None and mutant.release else NEWEST
    try:
        release = profile_named(args.kafka).name
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.examples is not None and args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.budget is not None:
        try:
            args.budget = parse_budget(args.budget)
        except argparse.ArgumentTypeError as error:
            raise UsageError(f"--budget {error}") from None
    if args.steps < 1:
        raise UsageError("--steps must be at least 1")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    args.adapter = with_cli_options(args.adapter, args.bootstrap, args.kafka)
    if args.records is not None:
        prepare_directory(args.records)  # a path that cannot hold records fails now, not in a worker
    spec = TargetSpec(args.adapter, args.mutant, args.timeout)
    mutant = spec.mutant_entry()
    level = args.level or (mutant.level if mutant is not None else "controller")
    settings = controller_settings(args, release, level)
    levels = list(LEVELS) if level == "all" else [level]
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    configs, skipped = [], []
    for chosen in levels:
        try:
            built = spec.factory(chosen)  # unknown adapter or mutant → usage error before anything runs
        except UsageError as error:
            if level != "all":
                raise
            skipped.append(f"{chosen} level skipped: {error}")
            continue
        if isinstance(built, SharedTarget):
            built.shutdown()  # built only to be checked: an exec: plug-in it started must not idle all campaign
        configs.append(CampaignConfig(
            adapter=args.adapter, release=release, mutant=args.mutant, level=chosen,
            examples=None if args.budget is not None else (args.examples or 100), budget_s=args.budget,
            steps=args.steps, seed=seed, workers=parse_workers(args.workers), records_dir=args.records,
            stop_at_first=not args.collect, differential=not args.no_differential, timeout_s=args.timeout,
            shrink_budget_s=args.shrink_budget,
            record_history=getattr(args, "record_history", False),  # qualify builds its own Namespace: no history
            settings=settings, draw_settings=getattr(args, "draw_settings", False),
        ))
    check_environment(args.adapter, release)  # Docker and its image, KAFKA_HOME, a listening controller: first
    return configs, skipped


def run(args: argparse.Namespace) -> int:
    check_spark_options(args)
    configs, skipped = configs_from(args)
    interactive = sys.stderr.isatty() and not args.json
    for reason in skipped:
        print(reason, file=sys.stderr)

    def progress(runs: int, steps: int, findings: int, seconds: float) -> None:
        if interactive:
            rate = steps / seconds if seconds else 0.0
            print(f"\r{runs} runs  {rate:,.0f} steps/s  {findings} findings", end="", file=sys.stderr, flush=True)

    verdicts = []
    summaries = []
    where = f" on Spark ({args.master or 'local[*]'})" if args.spark else ""
    with campaign_executor(args) as execute:
        for config in configs:
            print(f"campaign {config.campaign_id}: {config.adapter}{'+' + config.mutant if config.mutant else ''} "
                  f"on Kafka {config.release}, {config.level} level, seed {config.seed}{where}", file=sys.stderr)
            result = execute(config, progress)
            verdicts.append(result.verdict)
            if interactive:
                print(file=sys.stderr)
            if args.junit is not None:
                suffix = "" if len(configs) == 1 else f"-{config.level}"
                write_junit(args.junit.with_name(args.junit.stem + suffix + args.junit.suffix), config, result)
            summaries.append({"campaign_id": config.campaign_id, "level": config.level, "seed": config.seed,
                              **result.to_json()})
            if not args.json:
                print_result(config.level, result)
    if args.json:
        print(json.dumps(summaries[0] if len(summaries) == 1 else {"campaigns": summaries}, indent=2))
    return exit_code(verdicts)


def exit_code(verdicts: list[str]) -> int:
    """One exit code for the campaigns of one invocation, most serious first: a target failure,
    then an isrcheck failure, then "nothing was tested at all"."""
    if FAILED in verdicts:
        return EXIT_FAILED
    if ENGINE_ERROR in verdicts:
        return EXIT_ENGINE_ERROR
    if all(v == UNTESTED for v in verdicts):
        return EXIT_USAGE
    return EXIT_PASSED


LABELS = {"divergence": "FOUND", "violation": "FOUND", "crash": "CRASH", "timeout": "TIMEOUT",
          "error": "ISRCHECK ERROR", "known": "KNOWN"}
"""How a signature's kind is announced: only a divergence or a violation is a finding; a crash or
timeout is the target failing to answer; an error is isrcheck's own failure, not the target's; a
known divergence is Kafka's triaged behaviour (docs/known-divergences.md), not a finding."""


def print_result(level: str, result: CampaignResult) -> None:
    rate = result.steps / result.seconds if result.seconds else 0.0
    print(f"{level}: {result.runs} runs ({result.tested} tested), {result.steps} steps in {result.seconds:.1f} s "
          f"({rate:,.0f} steps/s)")
    for signature, count in result.signatures.most_common():
        example = result.examples.get(signature, {})
        label = LABELS.get(signature.split(":", 1)[0], "FOUND")
        print(f"{label} {signature} ({count}x): {example.get('message')}")
        if label == "ISRCHECK ERROR":
            print("  (a bug in isrcheck, not in the target; the record holds the traceback)")
        if example.get("replay"):
            print(f"  replay: {example['replay']}")
    if result.skip_reason is not None:
        print(f"SKIPPED: the target refused this configuration: {result.skip_reason}")
    if not result.tested:
        print("nothing tested")
    elif not result.signatures:
        print("nothing found")
    elif result.verdict == KNOWN_ONLY:
        print("known divergences only (docs/known-divergences.md): nothing new found")
