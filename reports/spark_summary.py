"""`isrcheck summarize`: run records to Parquet tables and `summary.json`, on Spark.

Records of long campaigns outgrow one Python process, so the summary is a Spark job: the input is
read once, each line parsed and checked by Spark expressions (`spark_ingest`, `spark_rules`), and
written once, to Parquet; every aggregate reads the columns it needs from there. Only small results
reach the driver — one row per signature, mutant, target × release cell, histogram bin or
timeline bucket — and are written as summary.json in the same layout as `plain_summary` (the two
are compared in tests and in the benchmark).

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
from collections.abc import Sequence
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


def summarize(spark: SparkSession, files: Sequence[Path], out: Path) -> dict[str, Any]:
    """Summarize `files` (already expanded) into the Parquet table `out/lines`; return summary.json.

    The input is read once, by the job that writes `lines`; every aggregate then reads the
    columns it needs of the valid runs from there. Jobs are few because each costs a fraction of
    a second of scheduling even on tiny data.
    """
    write_lines(spark, files, out)
    runs = read_table(spark, out, VALID)
    corrupt = corrupt_lines(runs, read_table(spark, out, CORRUPT), files)
    findings = _findings(runs)
    groups = _groups(runs)
    stats = _run_stats(runs)
    signatures = _signatures(_signature_table(findings).collect())
    mutants = _mutants(runs, findings)
    totals = _totals(groups, stats, corrupt["lines"], len(signatures), len({m["mutant"] for m in mutants}))
    outcomes: dict[str, int] = {}
    for group in groups:
        outcomes[group["outcome"]] = outcomes.get(group["outcome"], 0) + group["runs"]
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
        "matrix": _matrix(groups, _matrix_table(findings).collect(), _checked(runs)),
        "signatures": signatures,
        "distributions": _distributions(runs, stats),
        "timeline": _timeline(runs, findings, totals["runs"]),
        "mutants": mutants,
        "bugs": _bugs(findings),
        "ran": _ran(runs),
        "properties": _properties(runs, findings),
        "coverage": _coverage(runs),
    }


def _findings(runs: DataFrame) -> DataFrame:
    """One row per finding, with what the aggregates group it by."""
    exploded = runs.select(
        "_row", "run_id", "started_at", "target", "release", "mutant", "adapter", "level", "counterexample_length",
        "record_json", "mutant_title", "mutant_ticket", "negative_control",
        F.col("findings")[0]["operation"].alias("first_operation"), F.posexplode("findings").alias("position", "f"))
    column = _matrix_column(F.col("f.kind"), F.col("f.property"))
    bug = _bug_key(F.col("f.kind"), F.col("mutant"), F.col("adapter"), F.col("level"), F.col("f.operation"),
                   F.col("first_operation"))
    return exploded.select(
        "_row", "run_id", "started_at", "target", "release", "mutant", "position",
        "f.kind", "f.signature", "f.operation", "f.property", "f.field", "f.codes", "f.step",
        "f.message", F.col("f.evidence").alias("evidence_json"), column.alias("column"), bug.alias("bug"),
        "mutant_title", "mutant_ticket", "negative_control", "counterexample_length", "record_json")


def _bug_key(kind: Column, mutant: Column, adapter: Column, level: Column, operation: Column,
             first_operation: Column) -> Column:
    """`summary_layout.bug_key` as a column."""
    return (F.when(kind == "error", F.concat(F.lit("error:"), operation))
            .when(mutant.isNotNull(), F.concat(F.lit("mutant:"), mutant))
            .when(kind.isin("timeout", "crash"), F.concat_ws(":", kind, adapter, operation))
            .otherwise(F.concat_ws(":", F.lit("new"), adapter, level, first_operation)))


def _matrix_column(kind: Column, prop: Column) -> Column:
    """`summary_layout.matrix_column` as a column."""
    return (F.when((kind == "violation") & prop.isNotNull(), prop)
            .when(kind == "violation", F.lit("violation"))
            .otherwise(kind))


def _groups(runs: DataFrame) -> list[Row]:
    """Runs per target × release × outcome with their sums: totals, outcomes and matrix rows in one job."""
    seconds = F.expr(f"try_cast(duration_s AS DECIMAL({layout.SECONDS_PRECISION}, {layout.SECONDS_PLACES}))")
    return runs.groupBy("target", "release", "outcome").agg(
        F.count(F.lit(1)).alias("runs"),
        F.sum("steps").alias("steps"),
        F.sum(seconds).alias("seconds"),
        F.sum("n_findings").alias("findings"),
        F.count(F.when(F.col("n_findings") > 0, 1)).alias("runs_with_findings"),
        F.min("started_at").alias("first"),
        F.max("started_at").alias("last"),
    ).collect()


_ACCURACY = 10_000
"""percentile_approx's accuracy: the rank of the value it gives is within N / _ACCURACY of the
rank asked for, so ranks a few times that apart bracket the exact value. The brackets only need
to be narrow enough that the values inside them are few to count: at 100,000 the sketches made
`_run_stats` the second-longest job at 10^7 (84 s wall, 162 CPU s alone; 44 s, 83 CPU s at
10,000, the same percentiles)."""


def _run_stats(runs: DataFrame) -> Row:
    """Campaign count, min / max / count, approximate percentile brackets and both histograms of
    steps and duration: one job.

    Written as SQL text: some seventy aggregates built from Column objects cost a call into the
    JVM per function, which is slower than the job itself on small data.
    """
    margin = 4 / _ACCURACY
    brackets = ", ".join(f"{max(0.0, p - margin)!r}D, {min(1.0, p + margin)!r}D" for p in layout.PERCENTILES)
    columns = ["count(DISTINCT campaign_id) AS campaigns"]
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


def _percentiles(runs: DataFrame, name: str, stats: Row) -> list[float]:
    """Exact percentiles (`summary_layout.percentile`) without sorting the column: the values
    between each approximate bracket are counted (few distinct values) with the number of values
    below it, one job; should a bracket miss its ranks, Spark's exact `percentile` decides."""
    total, brackets = stats[f"{name}_n"], stats[f"{name}_brackets"]
    column = F.col(name)
    inside = None
    flags = []
    for index in range(len(layout.PERCENTILES)):
        low, high = brackets[2 * index], brackets[2 * index + 1]
        window = column.between(low, high)
        inside = window if inside is None else inside | window
        flags.append((column < F.lit(low)).alias(f"below{index}"))
    rows = runs.groupBy(F.when(inside, column).alias("value"), *flags).count().collect()
    result = []
    for index, fraction in enumerate(layout.PERCENTILES):
        low, high = brackets[2 * index], brackets[2 * index + 1]
        below = sum(row["count"] for row in rows if row[f"below{index}"])
        counted = [(row["value"], row["count"]) for row in rows
                   if row["value"] is not None and low <= row["value"] <= high]
        try:
            result.append(layout.percentile(_Ranked(total, below, counted), fraction))
        except IndexError:
            exact = runs.agg(F.expr(f"percentile({name}, {fraction!r}D)")).first()
            assert exact is not None
            result.append(exact[0])
    return result


def _totals(groups: list[Row], stats: Row, corrupt: int, signatures: int, mutants: int) -> dict[str, Any]:
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
        "campaigns": stats["campaigns"],
        "corrupt_lines": corrupt,
        "first_started_at": min((group["first"] for group in groups), default=None),
        "last_started_at": max((group["last"] for group in groups), default=None),
    }


def _matrix_table(findings: DataFrame) -> DataFrame:
    """Runs with at least one finding per target × release × column (the `matrix` table)."""
    return (findings.select("_row", "target", "release", "column").distinct()
            .groupBy("target", "release", "column").agg(F.count(F.lit(1)).alias("runs")))


def _checked(runs: DataFrame) -> list[Row]:
    """Runs that checked each property, per target × release (a run lists a property once)."""
    return (runs.select("_row", "target", "release", F.explode("properties").alias("property")).distinct()
            .groupBy("target", "release", "property").agg(F.count(F.lit(1)).alias("runs")).collect())


def _matrix(groups: list[Row], cells: list[Row], checked: list[Row]) -> dict[str, Any]:
    per_pair: dict[tuple[str, str], list[int]] = {}
    for group in groups:
        counts = per_pair.setdefault((group["target"], group["release"]), [0, 0])
        counts[0] += group["runs"]
        counts[1] += group["runs_with_findings"]
    columns = layout.column_order([*(row["column"] for row in cells), *(row["property"] for row in checked)])
    by_pair: dict[tuple[str, str], dict[str, int]] = {}
    for row in cells:
        by_pair.setdefault((row["target"], row["release"]), {})[row["column"]] = row["runs"]
    checked_by_pair: dict[tuple[str, str], dict[str, int]] = {}
    for row in checked:
        checked_by_pair.setdefault((row["target"], row["release"]), {})[row["property"]] = row["runs"]
    rows = []
    for target, release in sorted(per_pair, key=lambda pair: (pair[0], layout.release_key(pair[1]))):
        present = by_pair.get((target, release), {})
        rows.append({
            "target": target,
            "release": release,
            "runs": per_pair[target, release][0],
            "runs_with_findings": per_pair[target, release][1],
            "cells": {c: present[c] for c in columns if present.get(c)},
            "checked": {c: checked_by_pair[target, release][c] for c in columns
                        if checked_by_pair.get((target, release), {}).get(c)},
        })
    return {"columns": columns, "rows": rows}


def _signature_table(findings: DataFrame) -> DataFrame:
    first = F.struct(*_ORDER, "position")
    # a run's counterexample is shrunk for its first finding (docs/records.md): runs where the
    # signature comes first rank before runs where it comes later, then the shortest, then the earliest
    has = F.col("counterexample_length").isNotNull()
    owned = F.when(F.col("position") == 0, 0).otherwise(1)
    shortest_key = F.when(has, F.struct(owned.alias("owned"), "counterexample_length", *_ORDER))
    return findings.groupBy("signature").agg(
        F.min_by(F.struct("kind", "operation", "property", "field", "codes", "column"), first).alias("parts"),
        F.count(F.lit(1)).alias("findings"),
        F.countDistinct("_row").alias("runs"),
        F.collect_set("target").alias("targets"),
        F.collect_set("release").alias("releases"),
        F.collect_set("mutant").alias("mutants"),
        F.min("started_at").alias("first_seen"),
        F.max("started_at").alias("last_seen"),
        F.min_by(F.when(has, F.col("run_id")), shortest_key).alias("shortest_run_id"),
        F.min_by(F.when(has, F.col("counterexample_length")), shortest_key).alias("shortest_length"),
        F.min_by(F.when(has, F.col("record_json")), shortest_key).alias("shortest_record"),
    ).select("signature", "parts.*", "findings", "runs", "targets", "releases", "mutants", "first_seen",
             "last_seen", "shortest_run_id", "shortest_length", "shortest_record")


def _signatures(rows: list[Row]) -> list[dict[str, Any]]:
    entries = []
    for row in rows:
        record = json.loads(row["shortest_record"]) if row["shortest_record"] else None
        entries.append({
            "signature": row["signature"],
            "kind": row["kind"],
            "operation": row["operation"],
            "property": row["property"],
            "field": row["field"],
            "codes": list(row["codes"]),
            "column": row["column"],
            "findings": row["findings"],
            "runs": row["runs"],
            "targets": sorted(row["targets"]),
            "releases": layout.sorted_releases(row["releases"]),
            "mutants": sorted(row["mutants"]),
            "first_seen": row["first_seen"],
            "last_seen": row["last_seen"],
            "shortest": shortest_entry(record, row["signature"]) if record else None,
        })
    return sorted(entries, key=lambda e: (-e["findings"], e["signature"]))


def _distributions(runs: DataFrame, stats: Row) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, edges, integral in (("steps", layout.STEPS_EDGES, True), ("duration_s", layout.DURATION_EDGES, False)):
        if stats[f"{name}_min"] is None:
            result[name] = None
            continue
        counts = {index: stats[f"{name}_bin{index}"] for index in range(-1, len(edges))
                  if stats[f"{name}_bin{index}"]}
        median, p90 = _percentiles(runs, name, stats)
        result[name] = {
            "min": stats[f"{name}_min"],
            "median": median,
            "p90": p90,
            "max": stats[f"{name}_max"],
            "histogram": layout.histogram(counts, edges, integral),
        }
    return result


def _timeline(runs: DataFrame, findings: DataFrame, total: int) -> dict[str, Any]:
    """Runs cut into equal buckets in started_at order (`summary_layout.bucket_of`), one job."""
    if not total:
        return {"buckets": []}
    buckets = min(layout.TIMELINE_BUCKETS, total)
    # one global order: Spark moves these narrow rows to one partition, which is fine at 10^6
    rank = (F.row_number().over(Window.orderBy(*_ORDER)) - 1).alias("rank")
    ranked = runs.select("_row", "started_at", "n_findings", rank).select(
        "_row", "started_at", "n_findings",
        F.expr(f"CAST((rank * {buckets}) DIV {total} AS INT)").alias("bucket"))
    per_bucket = ranked.groupBy("bucket").agg(
        F.count(F.lit(1)).alias("runs"),
        F.count(F.when(F.col("n_findings") > 0, 1)).alias("runs_with_findings"),
        F.sum("n_findings").alias("findings"),
        F.min("started_at").alias("first_started_at"),
        F.max("started_at").alias("last_started_at"),
    )
    # a signature is new in the bucket of the first run that has it
    new = (findings.select("_row", "signature").join(ranked.select("_row", "bucket"), "_row")
           .groupBy("signature").agg(F.min("bucket").alias("bucket"))
           .groupBy("bucket").agg(F.count(F.lit(1)).alias("new_signatures")))
    rows = per_bucket.join(new, "bucket", "left").orderBy("bucket").collect()
    entries = [{
        "bucket": row["bucket"],
        "runs": row["runs"],
        "runs_with_findings": row["runs_with_findings"],
        "findings": row["findings"],
        "new_signatures": row["new_signatures"] or 0,
        "first_started_at": row["first_started_at"],
        "last_started_at": row["last_started_at"],
    } for row in rows]
    return {"buckets": finish_timeline(entries)}


def _mutants(runs: DataFrame, findings: DataFrame) -> list[dict[str, Any]]:
    detecting = F.filter("findings", lambda f: f["kind"] != layout.NOT_DETECTING)
    first_step = F.array_min(F.transform(detecting, lambda f: f["step"]))
    ordered = Window.partitionBy("mutant", "target").orderBy(*_ORDER)
    before = ordered.rowsBetween(Window.unboundedPreceding, -1)
    per_run = runs.filter(F.col("mutant").isNotNull()).select(
        "mutant", "target", "negative_control", "mutant_title", "mutant_ticket", "started_at", "run_id",
        first_step.alias("first_step"),
        F.row_number().over(ordered).alias("ordinal"),
        F.coalesce(F.sum("steps").over(before), F.lit(0)).alias("prior_steps"))
    found = F.col("first_step").isNotNull()
    first = F.struct("ordinal", (F.col("prior_steps") + F.col("first_step")).alias("steps"), *_ORDER)
    signature_sets = findings.filter(F.col("mutant").isNotNull() & (F.col("kind") != layout.NOT_DETECTING)).groupBy(
        "mutant", "target").agg(F.collect_set("signature").alias("signatures"))
    rows = per_run.groupBy("mutant", "target").agg(
        F.count(F.lit(1)).alias("runs"),
        F.count(F.when(found, 1)).alias("detecting"),
        F.bool_or(F.coalesce(F.col("negative_control"), F.lit(False))).alias("negative_control"),
        F.min("mutant_title").alias("title"),
        F.min("mutant_ticket").alias("ticket"),
        F.min_by(F.when(found, first), F.when(found, F.col("ordinal"))).alias("first"),
    ).join(signature_sets, ["mutant", "target"], "left").collect()
    entries = []
    for row in rows:
        entry = mutant_entry(row["mutant"], row["target"], row["runs"], row["detecting"],
                             sorted(row["signatures"] or []), bool(row["negative_control"]), row["title"],
                             row["ticket"])
        if row["first"] is not None:
            entry.update(runs_to_first_finding=row["first"]["ordinal"],
                         steps_to_first_finding=row["first"]["steps"],
                         first_finding_at=row["first"]["started_at"],
                         first_finding_run=row["first"]["run_id"])
        entries.append(entry)
    return sorted(entries, key=lambda e: (e["mutant"], e["target"]))


def _bugs(findings: DataFrame) -> list[dict[str, Any]]:
    """Findings grouped by root cause (`summary_layout.bug_key`), two small jobs: per bug ×
    signature, and per bug with the run holding its shortest counterexample."""
    per_signature = findings.groupBy("bug", "signature").agg(
        F.count(F.lit(1)).alias("findings"), F.countDistinct("_row").alias("runs")).collect()
    has = F.col("counterexample_length").isNotNull()
    owned = F.when(F.col("position") == 0, 0).otherwise(1)
    shortest_key = F.when(has, F.struct(owned.alias("owned"), "counterexample_length", *_ORDER, "position"))
    is_mutant = F.col("bug").startswith("mutant:")
    rows = findings.groupBy("bug").agg(
        F.count(F.lit(1)).alias("findings"),
        F.countDistinct("_row").alias("runs"),
        F.collect_set("target").alias("targets"),
        F.collect_set("release").alias("releases"),
        F.min(F.when(is_mutant, F.col("mutant"))).alias("mutant"),
        F.min(F.when(is_mutant, F.col("mutant_title"))).alias("title"),
        F.min(F.when(is_mutant, F.col("mutant_ticket"))).alias("ticket"),
        F.bool_or(is_mutant & F.coalesce(F.col("negative_control"), F.lit(False))).alias("negative_control"),
        F.min("started_at").alias("first_seen"),
        F.max("started_at").alias("last_seen"),
        F.min_by(F.when(has, F.struct("record_json", "signature")), shortest_key).alias("shortest"),
    ).collect()
    signatures: dict[str, list[tuple[str, int, int]]] = {}
    for row in per_signature:
        signatures.setdefault(row["bug"], []).append((row["signature"], row["findings"], row["runs"]))
    entries = []
    for row in rows:
        shortest = row["shortest"]
        entries.append(bug_entry(
            row["bug"], row["findings"], row["runs"], set(row["targets"]), set(row["releases"]), row["mutant"],
            row["title"], row["ticket"], bool(row["negative_control"]), row["first_seen"], row["last_seen"],
            signatures[row["bug"]],
            shortest_entry(json.loads(shortest["record_json"]), shortest["signature"]) if shortest else None))
    return sorted(entries, key=lambda e: layout.bug_sort_key(e["kind"], e["findings"], e["bug"]))


def _ran(runs: DataFrame) -> list[dict[str, Any]]:
    rows = runs.groupBy("target", "adapter", "level", "release", "mutant").agg(
        F.count(F.lit(1)).alias("runs"), F.countDistinct("campaign_id").alias("campaigns"),
        F.min("seed").alias("seed_min"), F.max("seed").alias("seed_max"),
        F.collect_set("isrcheck_version").alias("versions"), F.collect_set("commit").alias("commits"),
    ).collect()
    return sort_ran([ran_entry((row["target"], row["adapter"], row["level"], row["release"], row["mutant"]),
                               row["runs"], row["campaigns"], row["seed_min"], row["seed_max"], set(row["versions"]),
                               set(row["commits"])) for row in rows])


def _properties(runs: DataFrame, findings: DataFrame) -> list[dict[str, Any]]:
    checked = (runs.select("_row", F.explode("properties").alias("property")).distinct()
               .groupBy("property").count().collect())
    violated = (findings.filter((F.col("kind") == "violation") & F.col("property").isNotNull())
                .select("_row", "property").distinct().groupBy("property").count().collect())
    return properties_section(Counter({row["property"]: row["count"] for row in checked}),
                              Counter({row["property"]: row["count"] for row in violated}))


def _coverage(runs: DataFrame) -> list[dict[str, Any]]:
    rows = (runs.select("_row", F.explode("coverage").alias("point")).distinct()
            .groupBy("point").count().collect())
    return [{"point": row["point"], "runs": row["count"]} for row in sorted(rows, key=lambda r: r["point"])]
