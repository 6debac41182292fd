"""`isrcheck summarize`: run records to Parquet tables and `summary.json`, on Spark.

Records of long campaigns outgrow one Python process, so the summary is a Spark job: the input is
read once, each line parsed and checked by Spark expressions (`spark_ingest`, `spark_rules`), and
written once, to Parquet; every aggregate reads the columns it needs from there. Only small results
reach the driver — one row per group of findings, target × release × outcome × mutant, ran key,
property, histogram bin or timeline bucket — and are written as summary.json in the same layout as
`plain_summary` (the two are compared in tests and in the benchmark).

The aggregates are few queries, each computing many things in one pass: a query costs the driver
planning and code generation and the JVM compiling that code, whatever its size, and on small
data that was most of the summary's time (some fifty jobs once, one per aggregate). Groups are
taken at the finest grain the sections share and folded in Python to each section's grain; a
distinct count becomes a count of first occurrences (a run's first finding with a signature, say)
where a run holds all that is counted, so no aggregate expands its rows for `count(DISTINCT …)`.

The one table written under the output directory, `lines/`, partitioned by `status`:
  lines/status=valid/    the runs: one row per valid run — the record's fields, findings nested
                         (evidence as JSON text), counterexample as JSON text, the whole line for
                         runs with findings, and where the line came from (_file, _block, _row)
  lines/status=corrupt/  the skipped lines as they were (`value`), where they came from, and the
                         reason when the line as a whole gives it
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from isrcheck.reports import summary_layout as layout
from isrcheck.reports.plain_summary import (
    bug_entry,
    corrupt_section,
    finish_timeline,
    mutant_entry,
    properties_section,
    ran_entry,
    shortest_entry,
    sort_ran,
)
from isrcheck.reports.spark_ingest import CORRUPT, VALID, corrupt_lines, read_table, write_lines
from isrcheck.reports.summary_file import now_utc
from pyspark.sql import Column, DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F

_ORDER = ("started_at", "run_id")
_RAN_KEY = ("target", "adapter", "level", "release", "mutant")


def summarize(spark: SparkSession, files: Sequence[Path], out: Path) -> dict[str, Any]:
    """Summarize `files` (already expanded) into the Parquet table `out/lines`; return summary.json.

    The input is read once, by the job that writes `lines`; the aggregates then read the columns
    they need of the valid runs from there, in seven queries (findings, runs, ran keys, lists,
    statistics, percentiles, timeline) besides the corrupt lines'.
    """
    write_lines(spark, files, out)
    runs = read_table(spark, out, VALID)
    corrupt = corrupt_lines(runs, read_table(spark, out, CORRUPT), files)
    findings = _finding_groups(runs)
    groups = _run_groups(runs, _first_detections(findings))
    ran = _ran_groups(runs)
    lists = _list_counts(runs)
    stats = _run_stats(runs)
    signatures = _signatures(findings)
    mutants = _mutants(groups, findings)
    campaigns = next((row["campaigns"] for row in ran if row["everything"]), 0)
    totals = _totals(groups, campaigns, corrupt["lines"], len(signatures), len({m["mutant"] for m in mutants}))
    outcomes: Counter[str] = Counter()
    for group in groups:
        outcomes[group["outcome"]] += group["runs"]
    return {
        "format": layout.FORMAT,
        "engine": "spark",
        "generated_at": now_utc(),
        "inputs": {"files": len(files), "lines": totals["runs"] + corrupt["lines"]},
        "totals": totals,
        "corrupt": corrupt_section(corrupt["lines"], corrupt["reasons"], corrupt["examples"]),
        "outcomes": {name: outcomes[name] for name in layout.outcome_order(outcomes)},
        "targets": sorted({group["target"] for group in groups}),
        "releases": layout.sorted_releases(group["release"] for group in groups),
        "matrix": _matrix(groups, findings, lists),
        "signatures": signatures,
        "distributions": _distributions(runs, stats),
        "timeline": _timeline(runs, findings, totals["runs"]),
        "mutants": mutants,
        "bugs": _bugs(findings),
        "ran": _ran(ran),
        "properties": _properties(findings, lists),
        "coverage": [{"point": row["name"], "runs": row["runs"]}
                     for row in sorted((row for row in lists if row["list"] == "coverage"), key=lambda r: r["name"])],
    }


def _bug_key(kind: Column, mutant: Column, adapter: Column, level: Column, operation: Column,
             first_operation: Column, known: Column) -> Column:
    """`summary_layout.bug_key` as a column."""
    return (F.when(kind == "error", F.concat(F.lit("error:"), operation))
            .when(known.isNotNull(), F.concat(F.lit("known:"), known))
            .when(mutant.isNotNull(), F.concat(F.lit("mutant:"), mutant))
            .when(kind.isin("timeout", "crash"), F.concat_ws(":", kind, adapter, operation))
            .otherwise(F.concat_ws(":", F.lit("new"), adapter, level, first_operation)))


def _matrix_column(kind: Column, prop: Column) -> Column:
    """`summary_layout.matrix_column` as a column."""
    return (F.when((kind == "violation") & prop.isNotNull(), prop)
            .when(kind == "violation", F.lit("violation"))
            .otherwise(kind))


def _first_here(array: str) -> Column:
    """Whether the finding at `position` is the first of its run with its value in `array` (one
    value per finding of the run): counting these counts runs, as `count(DISTINCT _row)` would,
    without a second aggregation. NULL where the value is NULL (not counted)."""
    return F.expr(f"array_position({array}, element_at({array}, position + 1)) = position + 1")


def _finding_groups(runs: DataFrame) -> list[Row]:
    """Every finding, in one query: the runs with findings exploded once and grouped by signature,
    bug, target, release, mutant, matrix column, kind and property — the finest grain any section
    groups findings by. Runs are counted by first occurrences (`_first_here`); the first finding,
    the shortest counterexamples and a mutant's first detection are the least of a struct whose
    leading fields are the order the plain summary picks them in, so the groups fold into each
    section in Python (`_fold`) with the same choice."""
    not_detecting = F.lit(layout.NOT_DETECTING)
    per_run = runs.filter(F.col("n_findings") > 0).select(
        "_row", "run_id", "started_at", "target", "release", "mutant", "counterexample_length", "record_json",
        "mutant_title", "mutant_ticket", "negative_control",
        F.transform("findings", lambda f: _bug_key(f["kind"], F.col("mutant"), F.col("adapter"), F.col("level"),
                                                   f["operation"], F.col("findings")[0]["operation"],
                                                   f["known"])).alias("bugs"),
        F.transform("findings", lambda f: _matrix_column(f["kind"], f["property"])).alias("columns"),
        F.col("findings.signature").alias("signatures"),
        F.transform("findings", lambda f: F.when(f["kind"] == "violation", f["property"])).alias("violated"),
        F.transform("findings", lambda f: f["kind"] != not_detecting).alias("detecting"),
        F.posexplode("findings").alias("position", "f"))
    exploded = per_run.select(
        "*", F.element_at("bugs", F.col("position") + 1).alias("bug"),
        F.element_at("columns", F.col("position") + 1).alias("column"),
        F.arrays_zip("bugs", "signatures").alias("pairs"))
    has = F.col("counterexample_length").isNotNull()
    owned = F.when(F.col("position") == 0, 0).otherwise(1).alias("owned")
    detecting = F.col("f.kind") != not_detecting
    return exploded.groupBy(
        F.col("f.signature").alias("signature"), "bug", "target", "release", "mutant", "column",
        F.col("f.kind").alias("kind"), F.col("f.property").alias("property"),
    ).agg(
        F.count(F.lit(1)).alias("findings"),
        F.count(F.when(_first_here("signatures"), 1)).alias("signature_runs"),
        F.count(F.when(_first_here("bugs"), 1)).alias("bug_runs"),
        F.count(F.when(_first_here("pairs"), 1)).alias("bug_signature_runs"),
        F.count(F.when(_first_here("columns"), 1)).alias("cell_runs"),
        F.count(F.when(_first_here("violated"), 1)).alias("violated_runs"),
        # the first detecting finding of its run (`detecting`: whether each finding of the run is)
        F.count(F.when(F.expr("array_position(detecting, true) = position + 1"), 1))
        .alias("detecting_runs"),
        F.min("started_at").alias("first_seen"),
        F.max("started_at").alias("last_seen"),
        F.min(F.struct(*_ORDER, "position", F.struct("f.kind", "f.operation", "f.property", "f.field", "f.codes",
                                                     "column").alias("parts"))).alias("first"),
        F.min(F.when(has, F.struct(owned, "counterexample_length", *_ORDER, "record_json")))
        .alias("signature_shortest"),
        F.min(F.when(has, F.struct(owned, "counterexample_length", *_ORDER, "position", "record_json",
                                   F.col("f.signature").alias("signature")))).alias("bug_shortest"),
        F.min(F.when(detecting, F.struct(*_ORDER, "_row", F.col("f.step").alias("step")))).alias("first_detecting"),
        F.min("mutant_title").alias("title"),
        F.min("mutant_ticket").alias("ticket"),
        F.bool_or(F.coalesce(F.col("negative_control"), F.lit(False))).alias("negative_control"),
    ).collect()


def _least(rows: Iterable[Row], field: str) -> Any:
    """The least non-NULL value of `field` over `rows` (a struct compares field by field, as in Spark)."""
    values = [row[field] for row in rows if row[field] is not None]
    return min(values) if values else None


def _fold(rows: Iterable[Row], *keys: str) -> dict[tuple[Any, ...], list[Row]]:
    """`rows` by the values of `keys`: a section's groups from finer ones."""
    folded: dict[tuple[Any, ...], list[Row]] = {}
    for row in rows:
        folded.setdefault(tuple(row[key] for key in keys), []).append(row)
    return folded


def _first_detections(findings: list[Row]) -> dict[tuple[str, str], Row]:
    """(mutant, target) → its first run (in started_at, run_id order) with a detecting finding:
    that run's started_at, run_id, _row and first detecting step."""
    return {key: first for key, rows in _fold((row for row in findings if row["mutant"] is not None),
                                              "mutant", "target").items()
            if (first := _least(rows, "first_detecting")) is not None}


def _run_groups(runs: DataFrame, firsts: dict[tuple[str, str], Row]) -> list[Row]:
    """Runs per target × release × outcome × mutant with their sums, one query: totals, outcomes,
    matrix rows and mutants fold from it. For a mutant, also the runs before its first detecting
    run and their steps (what the plain summary counts walking the runs in order)."""
    seconds = F.expr(f"try_cast(duration_s AS DECIMAL({layout.SECONDS_PRECISION}, {layout.SECONDS_PLACES}))")
    before: Column = F.lit(False)
    if firsts:
        entries = [part for (mutant, target), first in firsts.items() for part in (
            F.struct(F.lit(mutant).alias("mutant"), F.lit(target).alias("target")),
            F.struct(F.lit(first["started_at"]).alias("started_at"), F.lit(first["run_id"]).alias("run_id")))]
        first_key = F.element_at(F.create_map(*entries), F.struct("mutant", "target"))
        before = F.struct(*_ORDER) < first_key
    return runs.groupBy("target", "release", "outcome", "mutant").agg(
        F.count(F.lit(1)).alias("runs"),
        F.sum("steps").alias("steps"),
        F.sum(seconds).alias("seconds"),
        F.sum("n_findings").alias("findings"),
        F.count(F.when(F.col("n_findings") > 0, 1)).alias("runs_with_findings"),
        F.min("started_at").alias("first"),
        F.max("started_at").alias("last"),
        F.bool_or(F.coalesce(F.col("negative_control"), F.lit(False))).alias("negative_control"),
        F.min("mutant_title").alias("title"),
        F.min("mutant_ticket").alias("ticket"),
        F.count(F.when(before, 1)).alias("runs_before_first"),
        F.sum(F.when(before, F.col("steps"))).alias("steps_before_first"),
    ).collect()


def _ran_groups(runs: DataFrame) -> list[Row]:
    """What ran, per target × adapter × level × release × mutant, and the campaigns of all runs
    (`everything` true): one query, the one distinct count of the summary (a campaign spans runs)."""
    keys = [F.col(key) for key in _RAN_KEY]
    return runs.groupingSets([keys, []], *keys).agg(
        (F.grouping_id() != 0).alias("everything"),
        F.count(F.lit(1)).alias("runs"),
        F.count_distinct("campaign_id").alias("campaigns"),
        F.min("seed").alias("seed_min"),
        F.max("seed").alias("seed_max"),
        F.collect_set("isrcheck_version").alias("versions"),
        F.collect_set("commit").alias("commits"),
    ).collect()


def _list_counts(runs: DataFrame) -> list[Row]:
    """Runs that judged each property per target × release (`list` "property": listed in the
    record's `properties` and not in its `unknown`), runs that could not judge it (`list`
    "unknown") and runs that reached each coverage point (`list` "coverage"), one query: a run
    lists each once (or its duplicates are dropped), so exploding its distinct items counts runs."""
    unknown = F.coalesce(F.col("unknown"), F.array().cast("array<string>"))
    checked = runs.select("target", "release", F.lit("property").alias("list"),
                          F.explode(F.array_except(F.array_distinct("properties"), unknown)).alias("name"))
    none = F.lit(None).cast("string")
    unjudged = runs.select(none.alias("target"), none.alias("release"), F.lit("unknown").alias("list"),
                           F.explode(F.array_distinct("unknown")).alias("name"))
    reached = runs.select(none.alias("target"), none.alias("release"), F.lit("coverage").alias("list"),
                          F.explode(F.array_distinct("coverage")).alias("name"))
    return (checked.unionByName(unjudged).unionByName(reached).groupBy("list", "target", "release", "name")
            .agg(F.count(F.lit(1)).alias("runs")).collect())


_ACCURACY = 10_000
"""percentile_approx's accuracy: the rank of the value it gives is within N / _ACCURACY of the
rank asked for, so ranks a few times that apart bracket the exact value. The brackets only need
to be narrow enough that the values inside them are few to count: at 100,000 the sketches made
`_run_stats` the second-longest job at 10^7 (84 s wall, 162 CPU s alone; 44 s, 83 CPU s at
10,000, the same percentiles)."""


def _run_stats(runs: DataFrame) -> Row:
    """min / max / count, approximate percentile brackets and both histograms of steps and
    duration: one query (no distinct count beside the sketches: it made Spark keep a sketch per
    campaign).

    Written as SQL text: some seventy aggregates built from Column objects cost a call into the
    JVM per function, which is slower than the job itself on small data.
    """
    margin = 4 / _ACCURACY
    brackets = ", ".join(f"{max(0.0, p - margin)!r}D, {min(1.0, p + margin)!r}D" for p in layout.PERCENTILES)
    columns = []
    for name, edges in (("steps", layout.STEPS_EDGES), ("duration_s", layout.DURATION_EDGES)):
        columns += [f"min({name}) AS {name}_min", f"max({name}) AS {name}_max", f"count({name}) AS {name}_n",
                    f"percentile_approx({name}, array({brackets}), {_ACCURACY}) AS {name}_brackets"]
        # one count per bin: bin i holds edges[i] <= v < edges[i+1]; bin -1 what lies below edges[0]
        for index in range(-1, len(edges)):
            low = f"{name} >= {edges[index]!r}D" if index >= 0 else "TRUE"
            high = f"{name} < {edges[index + 1]!r}D" if index + 1 < len(edges) else "TRUE"
            columns.append(f"count(CASE WHEN {low} AND {high} THEN 1 END) AS `{name}_bin{index}`")
    row = runs.agg(*[F.expr(column) for column in columns]).first()
    assert row is not None
    return row


class _Ranked(Sequence[float]):
    """The sorted values of a column as far as they are known: the values of ranks
    `start`, `start + 1`, … (from value counts); asking for another rank raises IndexError."""

    def __init__(self, total: int, start: int, counted: list[tuple[float, int]]) -> None:
        self.total, self.start, self.counted = total, start, sorted(counted)

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, rank: Any) -> Any:
        seen = self.start
        for value, count in self.counted:
            if seen <= rank < seen + count:
                return value
            seen += count
        raise IndexError(rank)


_MEASURED = ("steps", "duration_s")


def _percentiles(runs: DataFrame, stats: Row) -> dict[str, list[float]]:
    """Exact percentiles (`summary_layout.percentile`) of steps and duration without sorting
    either: the values between each approximate bracket are counted (few distinct values) with
    the number of values below it, both columns in one query (each run stacked as two rows, its
    value as a double: `percentile` reads values as floats); should a bracket miss its ranks,
    Spark's exact `percentile` decides."""
    names = [name for name in _MEASURED if stats[f"{name}_n"]]
    if not names:
        return {}
    stacked = runs.select(F.expr("stack(2, 'steps', CAST(steps AS DOUBLE), 'duration_s', CAST(duration_s AS DOUBLE))"
                                 " AS (name, value)"))
    value = F.col("value")

    def bound(index: int) -> Column:
        """The bracket bound at `index` of the row's column."""
        picked = F.lit(None).cast("double")
        for name in names:
            picked = F.when(F.col("name") == name, F.lit(float(stats[f"{name}_brackets"][index]))).otherwise(picked)
        return picked

    inside: Column = F.lit(False)
    flags = []
    for index in range(len(layout.PERCENTILES)):
        low, high = bound(2 * index), bound(2 * index + 1)
        inside = inside | value.between(low, high)
        flags.append((value < low).alias(f"below{index}"))
    rows = stacked.groupBy("name", F.when(inside, value).alias("value"), *flags).count().collect()
    result: dict[str, list[float]] = {}
    for name in names:
        total, brackets = stats[f"{name}_n"], stats[f"{name}_brackets"]
        mine = [row for row in rows if row["name"] == name]
        result[name] = []
        for index, fraction in enumerate(layout.PERCENTILES):
            low, high = brackets[2 * index], brackets[2 * index + 1]
            below = sum(row["count"] for row in mine if row[f"below{index}"])
            counted = [(row["value"], row["count"]) for row in mine
                       if row["value"] is not None and low <= row["value"] <= high]
            try:
                result[name].append(layout.percentile(_Ranked(total, below, counted), fraction))
            except IndexError:
                exact = runs.agg(F.expr(f"percentile({name}, {fraction!r}D)")).first()
                assert exact is not None
                result[name].append(exact[0])
    return result


def _totals(groups: list[Row], campaigns: int, corrupt: int, signatures: int, mutants: int) -> dict[str, Any]:
    seconds = [group["seconds"] for group in groups if group["seconds"] is not None]
    total_seconds: Decimal | None = sum(seconds, Decimal(0)) if seconds else None
    return {
        "runs": sum(group["runs"] for group in groups),
        "steps": sum(group["steps"] or 0 for group in groups),
        "seconds": layout.seconds_total(total_seconds),
        "findings": sum(group["findings"] or 0 for group in groups),
        "runs_with_findings": sum(group["runs_with_findings"] for group in groups),
        "signatures": signatures,
        "targets": len({group["target"] for group in groups}),
        "releases": len({group["release"] for group in groups}),
        "mutants": mutants,
        "campaigns": campaigns,
        "corrupt_lines": corrupt,
        "first_started_at": min((group["first"] for group in groups), default=None),
        "last_started_at": max((group["last"] for group in groups), default=None),
    }


def _matrix(groups: list[Row], findings: list[Row], lists: list[Row]) -> dict[str, Any]:
    per_pair: dict[tuple[str, str], list[int]] = {}
    for group in groups:
        counts = per_pair.setdefault((group["target"], group["release"]), [0, 0])
        counts[0] += group["runs"]
        counts[1] += group["runs_with_findings"]
    cells: Counter[tuple[str, str, str]] = Counter()
    for row in findings:
        cells[row["target"], row["release"], row["column"]] += row["cell_runs"]
    checked = Counter({(row["target"], row["release"], row["name"]): row["runs"]
                       for row in lists if row["list"] == "property"})
    columns = layout.column_order([*(column for (_, _, column), runs in cells.items() if runs),
                                   *(name for _, _, name in checked)])
    rows = []
    for target, release in sorted(per_pair, key=lambda pair: (pair[0], layout.release_key(pair[1]))):
        rows.append({
            "target": target,
            "release": release,
            "runs": per_pair[target, release][0],
            "runs_with_findings": per_pair[target, release][1],
            "cells": {c: cells[target, release, c] for c in columns if cells[target, release, c]},
            "checked": {c: checked[target, release, c] for c in columns if checked[target, release, c]},
        })
    return {"columns": columns, "rows": rows}


def _signatures(findings: list[Row]) -> list[dict[str, Any]]:
    entries = []
    for (signature,), rows in _fold(findings, "signature").items():
        first = min((row["first"] for row in rows), key=lambda first: (first["started_at"], first["run_id"],
                                                                        first["position"]))
        parts = first["parts"]
        shortest = _least(rows, "signature_shortest")
        entries.append({
            "signature": signature,
            "kind": parts["kind"],
            "operation": parts["operation"],
            "property": parts["property"],
            "field": parts["field"],
            "codes": list(parts["codes"]),
            "column": parts["column"],
            "findings": sum(row["findings"] for row in rows),
            "runs": sum(row["signature_runs"] for row in rows),
            "targets": sorted({row["target"] for row in rows}),
            "releases": layout.sorted_releases({row["release"] for row in rows}),
            "mutants": sorted({row["mutant"] for row in rows if row["mutant"] is not None}),
            "first_seen": min(row["first_seen"] for row in rows),
            "last_seen": max(row["last_seen"] for row in rows),
            "shortest": shortest_entry(json.loads(shortest["record_json"]), signature) if shortest else None,
        })
    return sorted(entries, key=lambda e: (-e["findings"], e["signature"]))


def _distributions(runs: DataFrame, stats: Row) -> dict[str, Any]:
    percentiles = _percentiles(runs, stats)
    result: dict[str, Any] = {}
    for name, edges, integral in (("steps", layout.STEPS_EDGES, True), ("duration_s", layout.DURATION_EDGES, False)):
        if stats[f"{name}_min"] is None:
            result[name] = None
            continue
        counts = {index: stats[f"{name}_bin{index}"] for index in range(-1, len(edges))
                  if stats[f"{name}_bin{index}"]}
        median, p90 = percentiles[name]
        result[name] = {
            "min": stats[f"{name}_min"],
            "median": median,
            "p90": p90,
            "max": stats[f"{name}_max"],
            "histogram": layout.histogram(counts, edges, integral),
        }
    return result


def _timeline(runs: DataFrame, findings: list[Row], total: int) -> dict[str, Any]:
    """Runs cut into equal buckets in started_at order (`summary_layout.bucket_of`), one query;
    a signature is new in the bucket that holds the first run having it (its `first`), found
    from each bucket's last run."""
    if not total:
        return {"buckets": []}
    buckets = min(layout.TIMELINE_BUCKETS, total)
    # one global order: Spark moves these narrow rows to one partition, which is fine at 10^6
    rank = (F.row_number().over(Window.orderBy(*_ORDER)) - 1).alias("rank")
    ranked = runs.select(*_ORDER, "n_findings", rank).select(
        *_ORDER, "n_findings", F.expr(f"CAST((rank * {buckets}) DIV {total} AS INT)").alias("bucket"))
    rows = ranked.groupBy("bucket").agg(
        F.count(F.lit(1)).alias("runs"),
        F.count(F.when(F.col("n_findings") > 0, 1)).alias("runs_with_findings"),
        F.sum("n_findings").alias("findings"),
        F.min("started_at").alias("first_started_at"),
        F.max("started_at").alias("last_started_at"),
        F.max(F.struct(*_ORDER)).alias("last_run"),
    ).orderBy("bucket").collect()
    new: Counter[int] = Counter()
    for (_,), groups in _fold(findings, "signature").items():
        first = min((row["first"]["started_at"], row["first"]["run_id"]) for row in groups)
        new[next(row["bucket"] for row in rows if tuple(row["last_run"]) >= first)] += 1
    entries = [{
        "bucket": row["bucket"],
        "runs": row["runs"],
        "runs_with_findings": row["runs_with_findings"],
        "findings": row["findings"],
        "new_signatures": new[row["bucket"]],
        "first_started_at": row["first_started_at"],
        "last_started_at": row["last_started_at"],
    } for row in rows]
    return {"buckets": finish_timeline(entries)}


def _mutants(groups: list[Row], findings: list[Row]) -> list[dict[str, Any]]:
    by_mutant = _fold((row for row in findings if row["mutant"] is not None), "mutant", "target")
    entries = []
    for (mutant, target), rows in _fold((group for group in groups if group["mutant"] is not None),
                                        "mutant", "target").items():
        found = by_mutant.get((mutant, target), [])
        detecting = [row for row in found if row["kind"] != layout.NOT_DETECTING]
        entry = mutant_entry(mutant, target, sum(row["runs"] for row in rows),
                             sum(row["detecting_runs"] for row in found),
                             sorted({row["signature"] for row in detecting}),
                             any(row["negative_control"] for row in rows), _least(rows, "title"),
                             _least(rows, "ticket"))
        first = _least(found, "first_detecting")
        if first is not None:
            entry.update(runs_to_first_finding=sum(row["runs_before_first"] for row in rows) + 1,
                         steps_to_first_finding=sum(row["steps_before_first"] or 0 for row in rows) + first["step"],
                         first_finding_at=first["started_at"],
                         first_finding_run=first["run_id"])
        entries.append(entry)
    return sorted(entries, key=lambda e: (e["mutant"], e["target"]))


def _bugs(findings: list[Row]) -> list[dict[str, Any]]:
    """Findings grouped by root cause (`summary_layout.bug_key`), folded from the finding groups."""
    entries = []
    for (bug,), rows in _fold(findings, "bug").items():
        is_mutant = layout.bug_kind(bug) == "mutant"
        signatures = [(signature, sum(row["findings"] for row in group),
                       sum(row["bug_signature_runs"] for row in group))
                      for (signature,), group in _fold(rows, "signature").items()]
        shortest = _least(rows, "bug_shortest")
        entries.append(bug_entry(
            bug, sum(row["findings"] for row in rows), sum(row["bug_runs"] for row in rows),
            {row["target"] for row in rows}, {row["release"] for row in rows},
            _least(rows, "mutant") if is_mutant else None, _least(rows, "title") if is_mutant else None,
            _least(rows, "ticket") if is_mutant else None, is_mutant and any(row["negative_control"] for row in rows),
            min(row["first_seen"] for row in rows), max(row["last_seen"] for row in rows), signatures,
            shortest_entry(json.loads(shortest["record_json"]), shortest["signature"]) if shortest else None))
    return sorted(entries, key=lambda e: layout.bug_sort_key(e["kind"], e["findings"], e["bug"]))


def _ran(rows: list[Row]) -> list[dict[str, Any]]:
    return sort_ran([ran_entry(tuple(row[key] for key in _RAN_KEY), row["runs"], row["campaigns"],  # type: ignore[arg-type]
                               row["seed_min"], row["seed_max"], set(row["versions"]), set(row["commits"]))
                     for row in rows if not row["everything"]])


def _properties(findings: list[Row], lists: list[Row]) -> list[dict[str, Any]]:
    checked: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    for row in lists:
        if row["list"] == "property":
            checked[row["name"]] += row["runs"]
        elif row["list"] == "unknown":
            unknown[row["name"]] += row["runs"]
    violated: Counter[str] = Counter()
    for row in findings:
        if row["violated_runs"]:
            violated[row["property"]] += row["violated_runs"]
    return properties_section(checked, violated, unknown)
