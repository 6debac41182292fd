"""Lines of record files to one Parquet table, with skipped lines counted and located.

One scan of the input and one write: every line is parsed and checked once (`spark_rules`) and
lands in `lines/`, partitioned by `status` — `lines/status=valid/` holds one typed row per valid
run (the `runs` table every aggregate of the summary reads), `lines/status=corrupt/` the skipped
lines as they were, with the reason when the line as a whole gives it.

Each line keeps where it came from: the file, the split Spark read it in, and a row id that
`monotonically_increasing_id` gives in reading order within that split. Nothing else is needed to
recover `file:line` for the few corrupt lines the summary quotes: a line's number is the count of
lines in earlier splits of its file plus its place in its own split.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from isrcheck.contract.records.schema import NOT_JSON
from isrcheck.reports import spark_schema
from isrcheck.reports.spark_rules import (
    fast_row,
    fast_vouched,
    item_arrays,
    line_reason,
    reason_of,
    reason_udf,
    record_valid,
    wrap_line,
)
from isrcheck.reports.summary_layout import CORRUPT_EXAMPLES
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

# the columns of the `runs` table: the record's fields, then what the summary derives per run
RUN_COLUMNS = [field.name for field in spark_schema.RUN.fields if field.name != "schema"] + [
    "n_findings", "counterexample_length", "record_json", "_file", "_block", "_row"]
WHERE = ["_file", "_block", "_row"]
VALID, CORRUPT = "valid", "corrupt"

_GLOB = re.compile(r"([\\{}\[\]*?])")


def _hadoop_path(path: Path) -> str:
    """Spark expands glob characters in paths it is given; a file name may contain them."""
    return _GLOB.sub(r"\\\1", str(path.resolve()))


def read_lines(spark: SparkSession, files: Sequence[Path]) -> DataFrame:
    """One row per line: value, _file (URI), _block (split start), _row (unique, ordered in split)."""
    return spark.read.text([_hadoop_path(f) for f in files]).select(
        "value",
        F.col("_metadata.file_path").alias("_file"),
        F.col("_metadata.file_block_start").alias("_block"),
        F.monotonically_increasing_id().alias("_row"),
    )


def parse_records(lines: DataFrame) -> DataFrame:
    """Every line with its `status`; a valid one typed (RUN_COLUMNS), a corrupt one as it was
    (`value`) with `reason` when the line as a whole gives it (NULL: `spark_rules.reason_of` says).

    Spark's JSON reader vouches for most lines (`fast_vouched`); only the others are parsed to
    VARIANT and checked by the exact rules, which see NULL in place of a vouched line."""
    read = lines.select("value", *WHERE, fast_row("value").alias("_fast"))
    vouched = read.select("value", *WHERE, "_fast", fast_vouched("value", "_fast").alias("_vouched"))
    exact = vouched.select("value", *WHERE, "_fast", "_vouched",
                           F.when(~F.col("_vouched"), F.col("value")).alias("_exact"))
    wrapped = exact.select("*", wrap_line("_exact").alias("_wrapped"))
    record, problem = line_reason("_exact", "_wrapped")
    checked = (wrapped.select("value", *WHERE, "_fast", "_vouched", "_exact", record.alias("_record"),
                              problem.alias("_problem"))
               .select("*", *item_arrays("_record")))
    # a line the JSON reader read findings in cannot be settled by `simple_record`
    checked = checked.withColumn("_may_be_simple", F.expr("coalesce(size(_fast.findings) <= 0, true)"))
    valid = record_valid("_exact", "_problem", "_record", "_may_be_simple")
    # the cast cannot fail after the checks; should Spark still not read a line it accepted, the
    # line is skipped as not JSON rather than half read
    typed = (F.when(F.col("_vouched"), F.col("_fast"))
             .when(valid, F.try_variant_get("_record", "$", spark_schema.RUN.simpleString())))
    runs = checked.select("*", typed.alias("_run")).withColumn(
        "status", F.when(F.col("_run").isNotNull(), F.lit(VALID)).otherwise(F.lit(CORRUPT)))
    is_valid = F.col("status") == F.lit(VALID)
    return runs.select(
        "status", *WHERE, "_run.*",
        F.size("_run.findings").alias("n_findings"),
        # try_: a skipped line's length may be no 64-bit integer (variant_get failed the whole job)
        F.try_variant_get("_record", "$.counterexample.length", "bigint").alias("counterexample_length"),
        F.when(F.size("_run.findings") > 0, F.col("value")).alias("record_json"),
        F.when(~is_valid, F.coalesce("_problem", F.when(valid, F.lit(NOT_JSON)))).alias("reason"),
        F.when(~is_valid, F.col("value")).alias("value"),
    )


def write_lines(spark: SparkSession, files: Sequence[Path], out: Path) -> None:
    """The one job that reads the input: every line parsed, checked and written to `out/lines`."""
    rows = parse_records(read_lines(spark, files)).select("status", *RUN_COLUMNS, "reason", "value")
    # rows go to their partition's file as they come, rather than being sorted by status first
    spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", "2")
    spark.conf.set("spark.sql.optimizer.plannedWrite.enabled", "false")
    rows.write.mode("overwrite").partitionBy("status").parquet(str(out / "lines"))


def read_table(spark: SparkSession, out: Path, status: str) -> DataFrame:
    """`lines/status=<status>` as a table; empty (with the columns) when no line had that status.

    The empty table is the written one filtered by a false literal, which Spark's optimizer turns
    into an empty relation: a table of Python data (`createDataFrame([], schema)`) is a Python RDD,
    and the corrupt lines' job over it started Python workers — seconds of CPU — in every summary
    of records without a corrupt line, the usual case."""
    path = out / "lines" / f"status={status}"
    if path.is_dir() and any(path.glob("*.parquet")):
        return spark.read.parquet(str(path))
    return spark.read.parquet(str(out / "lines")).drop("status").where(F.lit(False))


def _local_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)).resolve() if parsed.scheme in ("", "file") else None


def corrupt_lines(runs: DataFrame, corrupt: DataFrame, files: Sequence[Path]) -> dict[str, Any]:
    """Count of skipped lines, every reason with its count, and the first few as file:line.

    Reasons the line itself does not give are asked of `record_schema.parse_line`, over those
    lines only, and only when there are any: a Python UDF in a plan starts a Python worker for
    every partition it sees, ten seconds and more on a busy machine, even when every row it is
    given has its reason already (truncated lines, the usual kind). Then the first few skipped
    lines of each file and, for those files, each split's first row id and line count (valid and
    skipped lines), which turn row ids into line numbers.
    """
    reasons = {row["reason"]: row["count"] for row in corrupt.groupBy("reason").count().collect()}
    if reasons.pop(None, 0):
        unnamed = corrupt.filter(F.col("reason").isNull())
        named = F.coalesce(reason_udf("value"), F.lit(NOT_JSON)).alias("reason")
        for row in unnamed.groupBy(named).count().collect():
            reasons[row["reason"]] = reasons.get(row["reason"], 0) + row["count"]
    total = sum(reasons.values())
    if not total:
        return {"lines": 0, "reasons": reasons, "examples": []}
    in_file = Window.partitionBy("_file").orderBy("_block", "_row")
    firsts = (corrupt.select(*WHERE, "reason", "value", F.row_number().over(in_file).alias("n"))
              .filter(F.col("n") <= CORRUPT_EXAMPLES).drop("n").collect())
    uris = sorted({row["_file"] for row in firsts})
    everything = runs.select(*WHERE).unionByName(corrupt.select(*WHERE))
    splits = (everything.filter(F.col("_file").isin(*uris)).groupBy("_file", "_block")
              .agg(F.min("_row").alias("first_row"), F.count(F.lit(1)).alias("lines")).collect())
    first_line: dict[tuple[str, int], tuple[int, int]] = {}  # (file, split start) -> (its first line, row id)
    for uri in uris:
        line = 1
        for split in sorted((s for s in splits if s["_file"] == uri), key=lambda s: s["_block"]):
            first_line[uri, split["_block"]] = (line, split["first_row"])
            line += split["lines"]
    order = {path.resolve(): (index, str(path)) for index, path in enumerate(files)}
    examples = []
    for row in firsts:
        index, display = order.get(_local_path(row["_file"]) or Path(), (len(files), row["_file"]))
        start_line, start_row = first_line[row["_file"], row["_block"]]
        number = start_line + row["_row"] - start_row
        reason = row["reason"] or reason_of(row["value"]) or NOT_JSON
        examples.append((index, number, {"file": display, "line": number, "reason": reason}))
    examples.sort(key=lambda item: (item[0], item[1]))
    return {"lines": total, "reasons": reasons, "examples": [item[2] for item in examples[:CORRUPT_EXAMPLES]]}
