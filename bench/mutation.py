"""Mutation score of isrcheck's engine over the reference's rule modules, mutants made by cosmic-ray.

Why cosmic-ray (not mutmut): its library call `cosmic_ray.mutating.mutate_code(source, operator,
occurrence)` returns one mutant's source as a string without touching the working tree, and its
operators enumerate every mutation site (`mutation_positions`) the way `cosmic-ray init` does. That
is what this harness needs: the mutant must become the engine's *target* while the unmutated
reference stays the oracle, so it is loaded beside the reference in a separate process
(bench/mutated_reference.py), never written over it; and the "test" is an `isrcheck run` campaign,
not a test suite. mutmut 3 mutates a copy of the project and runs it through pytest only.

For each mutant of the chosen modules, in a separate `nice -n 5` process per campaign:
1. the properties alone (`--no-differential`: the black-box figure): the unseeded campaigns of
   `--campaigns` (a fixed seed and release each; no aimed schedule, no catalogue entry steering
   them), in order, `--budget` seconds split evenly between them, each stopping at its first finding;
2. if none killed it, the same campaigns with the differential (controller level: the cluster
   level has no differential, docs/architecture.md).
A mutant is killed by the first campaign with a finding; "time to kill" is that campaign's time to
its first finding. A process that outlives its budget by `HANG_GRACE_S` is stopped (by its PID)
and the mutant counted as killed by a hang: the in-process target cannot be interrupted by the
engine's per-call timeout, which a real target behind `exec:` would be.

Mutants that only change a type annotation are equivalent by construction (every module has
`from __future__ import annotations`: annotations are never evaluated); they are counted and not
run. Survivors are classified in bench/mutation_triage.py (equivalent, unreachable by the operation
vocabulary, generation/property gap); an unlisted survivor shows as `untriaged`.

    python3 bench/mutation.py --sample 80 --sample-seed 1 --budget 60 --processes 2 \
        --save docs/results/mutation.json --write docs/results/mutation.md

`--load` renders saved results again (after a triage change); with `--rerun-survivors` it runs
the saved survivors again (after a generation or property change; with `--only`, just those of
them) and saves over the file.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import difflib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cosmic_ray.plugins
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from mutated_reference import RULE_MODULES, level_of  # type: ignore[import-not-found]
from mutation_triage import NOT_TO_KILL, Triage, triage_of  # type: ignore[import-not-found]
from results_file import markdown_table, write_results  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).resolve().parent / "mutated_reference.py"
HANG_GRACE_S = 45.0
"""Start-up, the last run and the finding's record on top of the budget; past it, a hang."""
PROPERTIES, DIFFERENTIAL, HANG = "properties", "differential", "hang"
DEFAULT_CAMPAIGNS = ("1:4.1", "2:3.3", "3:3.7", "4:4.0:drawn")
"""4.1 (ELR on by default), 3.3 (AlterPartition below v3, Fetch below v15, the epoch bump before the
ISR), 3.7 (the min-ISR high-watermark gate): the release-gated rules each reach; then, at the
controller level only, 4.0 with each batch's metadata.version and ELR drawn (`isrcheck run
--draw-settings`): the rules those settings gate (ELR opted in on 4.0, the 3.8+ shrink epoch bump
below metadata.version 3.6-IV0), which a release's defaults never reach."""
DRAWN = "drawn"


@dataclass(frozen=True)
class Campaign:
    seed: int
    release: str
    drawn: bool = False
    """`--draw-settings`: the controller configuration drawn per batch (controller level only)."""

    @property
    def text(self) -> str:
        return f"{self.seed}:{self.release}" + (f":{DRAWN}" if self.drawn else "")


def campaign_option(text: str) -> Campaign:
    seed, _, rest = text.partition(":")
    release, _, mode = rest.partition(":")
    if not seed.isdigit() or not release or mode not in ("", DRAWN):
        raise argparse.ArgumentTypeError(f"{text!r} is not SEED:RELEASE[:{DRAWN}] (e.g. 1:4.1, 4:4.0:{DRAWN})")
    return Campaign(int(seed), release, mode == DRAWN)


def campaigns_at(level: str, campaigns: Sequence[Campaign]) -> list[Campaign]:
    """The campaigns a mutant of this level runs: drawn settings exist at the controller level only."""
    return [c for c in campaigns if level == "controller" or not c.drawn]


@dataclass(frozen=True)
class MutantSpec:
    """One cosmic-ray mutation: `operator`'s `occurrence`-th site in `module`."""

    module: str
    operator: str
    occurrence: int
    line: int
    before: str
    after: str

    @property
    def key(self) -> str:
        return f"{self.module}:{self.operator}:{self.occurrence}"

    @property
    def change(self) -> str:
        return f"`{self.before}` → `{self.after}`"


def module_path(module: str) -> Path:
    return ROOT / "reference_impl" / f"{module}.py"


def without_annotations(source: str) -> str:
    """The module's AST with every annotation blanked: what Python evaluates of it."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign):
            node.annotation = ast.Constant(None)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
    return ast.dump(tree)


def changed_line(original: str, mutated: str) -> tuple[str, str]:
    """The first line the mutation changed, before and after (stripped)."""
    before, after = "", ""
    for line in difflib.unified_diff(original.splitlines(), mutated.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---") and not before:
            before = line[1:].strip()
        elif line.startswith("+") and not line.startswith("+++") and not after:
            after = line[1:].strip()
    return before, after


def operators() -> list[tuple[str, Any]]:
    """Every cosmic-ray operator that takes no arguments (what `cosmic-ray init` uses by default)."""
    found = []
    for name in cosmic_ray.plugins.operator_names():
        operator_class = cosmic_ray.plugins.get_operator(name)
        if not operator_class.arguments():
            found.append((name, operator_class()))
    return found


@dataclass(frozen=True)
class Enumeration:
    mutants: list[tuple[MutantSpec, str]]
    """(spec, mutated source) of every mutant that runs."""
    annotation_only: int
    """Mutants that change a type annotation only: equivalent, not run."""
    not_python: int
    """Mutants that do not compile (cosmic-ray's "incompetent" ones, e.g. `!= -1` → `!= not 1`)."""


def enumerate_mutants(modules: Sequence[str]) -> Enumeration:
    """Every cosmic-ray mutation of `modules`, sorted into the three kinds of `Enumeration`."""
    mutants: list[tuple[MutantSpec, str]] = []
    annotation_only = not_python = 0
    for module in modules:
        original = module_path(module).read_text(encoding="utf-8")
        evaluated = without_annotations(original)
        tree = get_ast(original)
        for name, operator in operators():
            sites = [start for node in ast_nodes(tree) for start, _ in operator.mutation_positions(node)]
            for occurrence, (line, _column) in enumerate(sites):
                mutated = mutate_code(original, operator, occurrence)
                if mutated is None or mutated == original:
                    continue
                try:
                    evaluated_mutant = without_annotations(mutated)
                except SyntaxError:
                    not_python += 1
                    continue
                if evaluated_mutant == evaluated:
                    annotation_only += 1
                    continue
                before, after = changed_line(original, mutated)
                mutants.append((MutantSpec(module, name, occurrence, line, before, after), mutated))
    return Enumeration(mutants, annotation_only, not_python)


@dataclass(frozen=True)
class CampaignOutcome:
    stage: str
    seed: int
    release: str
    verdict: str
    """The campaign's verdict (`failed` is a kill), or `hang`."""
    signature: str | None
    seconds_to_kill: float | None
    runs: int
    seconds: float
    """The campaign's whole time (its budget, unless a finding ended it)."""


@dataclass(frozen=True)
class MutantResult:
    spec: MutantSpec
    killed_by: str | None
    """`properties`, `differential`, `hang`, or None (survived)."""
    signature: str | None
    seconds_to_kill: float | None
    campaigns: tuple[CampaignOutcome, ...]


def run_campaign(spec: MutantSpec, source_file: Path, stage: str, campaign: Campaign,
                 budget_s: float) -> CampaignOutcome:
    seed, release = campaign.seed, campaign.release
    command = ["nice", "-n", "5", sys.executable, str(CHILD), "--module", spec.module, "--source", str(source_file),
               "--", "--kafka", release, "--seed", str(seed), "--budget", str(int(budget_s)), "--workers", "1",
               "--shrink-budget", "0", "--json", *(["--no-differential"] if stage == PROPERTIES else []),
               *(["--draw-settings"] if campaign.drawn else [])]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=budget_s + HANG_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the child's own session: it and nothing else
        process.communicate()
        return CampaignOutcome(stage, seed, release, HANG, None, None, 0, budget_s + HANG_GRACE_S)
    start = out.find("{")
    if start < 0:
        tail = err.strip().splitlines()[-1:] or ["no output"]
        return CampaignOutcome(stage, seed, release, f"error: {tail[0][:200]}", None, None, 0, 0.0)
    summary = json.loads(out[start:])
    signatures = list(summary.get("findings", {}))
    return CampaignOutcome(stage, seed, release, str(summary["verdict"]), signatures[0] if signatures else None,
                           summary.get("seconds_to_first_finding"), int(summary.get("runs", 0)),
                           float(summary.get("seconds", 0.0)))


def judge(spec: MutantSpec, source: str, campaigns: Sequence[Campaign], budget_s: float) -> MutantResult:
    """Each stage runs the campaigns of the mutant's level in order, `budget_s` split evenly between
    them; the first finding kills. The time to kill counts the stage's earlier campaigns in full."""
    stages = [PROPERTIES] + ([DIFFERENTIAL] if level_of(spec.module) == "controller" else [])
    campaigns = campaigns_at(level_of(spec.module), campaigns)
    each_s = budget_s / len(campaigns)
    done: list[CampaignOutcome] = []
    with tempfile.TemporaryDirectory(prefix="isrcheck-mutant-") as directory:
        source_file = Path(directory) / f"{spec.module}.py"
        source_file.write_text(source, encoding="utf-8")
        for stage in stages:
            spent = 0.0
            for campaign in campaigns:
                outcome = run_campaign(spec, source_file, stage, campaign, each_s)
                done.append(outcome)
                if outcome.verdict == HANG:
                    return MutantResult(spec, HANG, None, None, tuple(done))
                if outcome.verdict == "failed":
                    seconds = None if outcome.seconds_to_kill is None else spent + outcome.seconds_to_kill
                    return MutantResult(spec, stage, outcome.signature, seconds, tuple(done))
                spent += outcome.seconds
    return MutantResult(spec, None, None, None, tuple(done))


def classification(result: MutantResult) -> Triage | None:
    return triage_of(result.spec.key, result.spec.before)


def score_lines(results: Sequence[MutantResult], made: Enumeration) -> list[str]:
    killed = [r for r in results if r.killed_by is not None]
    by = {stage: sum(1 for r in killed if r.killed_by == stage) for stage in (PROPERTIES, DIFFERENTIAL, HANG)}
    survivors = [r for r in results if r.killed_by is None]
    kinds = Counter(t.kind for r in survivors if (t := classification(r)) is not None)
    equivalent = kinds["equivalent"]
    non_equivalent = len(results) - sum(kinds[kind] for kind in NOT_TO_KILL)
    times = [r.seconds_to_kill for r in killed if r.seconds_to_kill is not None]

    def share(count: int) -> str:
        if not non_equivalent:
            return str(count)
        kafka = f", {100.0 * count / (non_equivalent + kinds['as-kafka']):.0f}% counting the as-Kafka ones" \
            if kinds["as-kafka"] else ""
        return f"{count} ({100.0 * count / non_equivalent:.0f}% of the {non_equivalent} non-equivalent{kafka})"

    return [
        f"- mutants: {len(made.mutants) + made.annotation_only + made.not_python} made by cosmic-ray; "
        f"{made.not_python} do not compile and {made.annotation_only} change only a type annotation (equivalent): "
        f"not run; {len(results)} of the other {len(made.mutants)} run",
        f"- killed: {share(len(killed))}",
        f"- killed by the properties alone (`--no-differential`): {share(by[PROPERTIES])}; of these the target "
        f"crashed (an exception out of the mutated code) in "
        f"{sum(1 for r in killed if r.killed_by == PROPERTIES and (r.signature or '').startswith('crash'))}",
        f"- killed by the differential only: {by[DIFFERENTIAL]}",
        f"- killed by a hang (the process outlived its budget): {by[HANG]}",
        f"- survived: {len(survivors)}, of which equivalent: {equivalent}, "
        f"as Kafka does it (the reference is stricter; not counted, like the equivalent ones): {kinds['as-kafka']}, "
        f"unreachable by the campaigns: {kinds['unreachable']}, generation/property gaps: {kinds['gap']}, "
        f"untriaged: {sum(1 for r in survivors if classification(r) is None)}",
        f"- time to kill (first finding): median {statistics.median(times):.1f} s, max {max(times):.1f} s"
        if times else "- time to kill: no kill",
    ]


def kills_by_module(results: Sequence[MutantResult]) -> list[str]:
    rows = []
    for module in sorted({r.spec.module for r in results}):
        mine = [r for r in results if r.spec.module == module]
        rows.append([module, level_of(module), str(len(mine)),
                     str(sum(1 for r in mine if r.killed_by == PROPERTIES)),
                     str(sum(1 for r in mine if r.killed_by == DIFFERENTIAL)),
                     str(sum(1 for r in mine if r.killed_by == HANG)),
                     str(sum(1 for r in mine if r.killed_by is None))])
    return markdown_table(["module", "level", "run", "properties", "differential only", "hang", "survived"], rows)


def survivors_table(results: Sequence[MutantResult]) -> list[str]:
    rows = []
    for result in sorted((r for r in results if r.killed_by is None), key=lambda r: (r.spec.module, r.spec.line)):
        triage = classification(result)
        rows.append([f"reference_impl/{result.spec.module}.py", str(result.spec.line),
                     result.spec.change.replace("|", "\\|"),
                     result.spec.operator.split("/")[-1],
                     "untriaged" if triage is None else triage.kind, "" if triage is None else triage.reason])
    return markdown_table(["module", "line", "mutation", "operator", "classification", "why"], rows)


def kills_table(results: Sequence[MutantResult]) -> list[str]:
    rows = []
    for result in sorted((r for r in results if r.killed_by is not None), key=lambda r: (r.spec.module, r.spec.line)):
        seconds = "" if result.seconds_to_kill is None else f"{result.seconds_to_kill:.1f}"
        rows.append([result.spec.module, str(result.spec.line), result.spec.change.replace("|", "\\|"),
                     str(result.killed_by), (result.signature or "").replace("|", "\\|"), seconds])
    return markdown_table(["module", "line", "mutation", "killed by", "first finding", "seconds"], rows)


def sample_of(mutants: list[tuple[MutantSpec, str]], size: int | None, seed: int) -> list[tuple[MutantSpec, str]]:
    if size is None or size >= len(mutants):
        return mutants
    chosen = sorted(random.Random(seed).sample(range(len(mutants)), size))
    return [mutants[i] for i in chosen]


def run_all(chosen: Iterable[tuple[MutantSpec, str]], campaigns: Sequence[Campaign], budget_s: float,
            processes: int) -> list[MutantResult]:
    todo = list(chosen)
    results: list[MutantResult] = []
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=processes) as pool:
        futures = [pool.submit(judge, spec, source, campaigns, budget_s) for spec, source in todo]
        for index, future in enumerate(futures, 1):
            result = future.result()
            results.append(result)
            seconds = "" if result.seconds_to_kill is None else f" in {result.seconds_to_kill:.1f} s"
            print(f"[{index}/{len(todo)} {time.monotonic() - started:.0f}s] {result.spec.key} line {result.spec.line}: "
                  f"{result.killed_by or 'SURVIVED'}{seconds} {result.signature or ''}", file=sys.stderr, flush=True)
    return results


def result_to_json(result: MutantResult) -> dict[str, Any]:
    return asdict(result)


def result_from_json(raw: dict[str, Any]) -> MutantResult:
    return MutantResult(MutantSpec(**raw["spec"]), raw["killed_by"], raw["signature"], raw["seconds_to_kill"],
                        tuple(CampaignOutcome(**c) for c in raw["campaigns"]))


def save(path: Path, settings: dict[str, Any], results: Sequence[MutantResult]) -> None:
    path.write_text(json.dumps({"settings": settings, "results": [result_to_json(r) for r in results]}, indent=1)
                    + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modules", nargs="+", default=list(RULE_MODULES), choices=RULE_MODULES,
                        help="reference_impl modules to mutate (default: all five rule modules)")
    parser.add_argument("--sample", type=int, help="run a random sample of this many mutants (default: all)")
    parser.add_argument("--sample-seed", type=int, default=1, help="seed of the sample (default 1)")
    parser.add_argument("--campaigns", nargs="+", type=campaign_option,
                        default=[campaign_option(text) for text in DEFAULT_CAMPAIGNS], metavar="SEED:RELEASE[:drawn]",
                        help="the campaigns of each stage, in order (default: "
                        f"{' '.join(DEFAULT_CAMPAIGNS)}: the newest release, the 3.x rules it no longer has, then "
                        "4.0 with drawn settings; a `drawn` campaign runs at the controller level only)")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds per mutant and stage, split evenly between the campaigns (default 60)")
    parser.add_argument("--processes", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--only", nargs="+", help="run only these mutant keys (module:operator:occurrence); "
                        "with --rerun-survivors, only these of the saved survivors")
    parser.add_argument("--save", type=Path, help="write every mutant's result (JSON) here")
    parser.add_argument("--load", type=Path, help="render the results saved by --save instead of running")
    parser.add_argument("--rerun-survivors", action="store_true",
                        help="with --load: run the saved survivors again, with the saved settings, and save")
    parser.add_argument("--write", type=Path, help="write the tables to this markdown file")
    args = parser.parse_args()
    if args.processes < 1 or args.budget <= 0:
        parser.error("--processes and --budget must be positive")
    load_before = os.getloadavg()[0]
    made = enumerate_mutants(args.modules)
    mutants = made.mutants
    if args.load is not None:
        try:
            saved = json.loads(args.load.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            parser.error(f"--load {args.load}: {error}")
        results = [result_from_json(raw) for raw in saved["results"]]
        settings = saved["settings"]
        if args.rerun_survivors:
            again = {r.spec.key for r in results if r.killed_by is None}
            if args.only:
                again &= set(args.only)
            campaigns = [campaign_option(text) for text in settings["campaigns"]]
            rerun = run_all([(spec, source) for spec, source in mutants if spec.key in again], campaigns,
                            settings["budget_s"], args.processes)
            by_key = {r.spec.key: r for r in rerun}
            results = [by_key.get(r.spec.key, r) for r in results]
            now = datetime.datetime.now(datetime.UTC)
            settings["reran"] = (f"{len(rerun)} survivor(s) ran again {now:%Y-%m-%d %H:%M} UTC after a generation "
                                 f"or property change, load average "
                                 f"{load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end")
            save(args.load, settings, results)
    else:
        chosen = sample_of(mutants, args.sample, args.sample_seed)
        if args.only:
            chosen = [(spec, source) for spec, source in mutants if spec.key in set(args.only)]
        settings = {"modules": args.modules, "sample": args.sample, "sample_seed": args.sample_seed,
                    "campaigns": [c.text for c in args.campaigns], "budget_s": args.budget,
                    "processes": args.processes}
        results = run_all(chosen, args.campaigns, args.budget, args.processes)
        settings["ran"] = (f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average "
                           f"{load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (1-minute, "
                           f"{os.cpu_count()} cores)")
        if args.save is not None:
            save(args.save, settings, results)
    score = score_lines(results, made)
    print("\n".join(score))
    print("\nsurvivors:")
    print("\n".join(survivors_table(results)))
    if args.write is not None:
        what_ran = (f"cosmic-ray {cosmic_ray_version()} mutants of reference_impl/ "
                    f"({', '.join(settings['modules'])}); sample of {settings['sample'] or 'all'} drawn with seed "
                    f"{settings['sample_seed']}; per mutant and stage the campaigns (seed:release; `drawn`: the "
                    f"controller settings drawn per batch, controller level only) "
                    f"{' '.join(settings['campaigns'])} in {settings['budget_s']:.0f} s split evenly, the "
                    f"properties alone first, then with the differential (controller level); "
                    f"{settings['processes']} processes at nice 5; the mutants ran "
                    f"{settings.get('ran', '(not recorded)')}"
                    f"{'; ' + settings['reran'] if 'reran' in settings else ''}.")
        table = [*score, "", "## By module", "", *kills_by_module(results), "", "## Survivors", "",
                 *survivors_table(results), "", "## Kills", "", *kills_table(results)]
        write_results(args.write, "Mutation score of the engine over the reference's rule modules", what_ran, table,
                      load_before)


def cosmic_ray_version() -> str:
    from importlib.metadata import version

    return version("cosmic-ray")


if __name__ == "__main__":
    main()
