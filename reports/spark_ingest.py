"""Lines of record files to a typed Spark DataFrame, with skipped lines counted and located.

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

from isrcheck.reports import spark_schema
from isrcheck.reports.spark_rules import line_reason, record_reason, simple_record, wrap_line
from isrcheck.reports.summary_layout import CORRUPT_EXAMPLES
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from isrcheck.records.schema import NOT_JSON

# the columns of the `runs` table: the record's fields, then what the summary derives per run
RUN_COLUMNS = [field.name for field in spark_schema.RUN.fields if field.name != "schema"] + [
    "n_findings", "counterexample_length", "record_json", "_file", "_block", "_row"]

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
    """Every line with `reason` (NULL when valid) and, for valid ones, the typed run columns."""
    where = ["_file", "_block", "_row"]
    wrapped = lines.select("value", *where, wrap_line(F.col("value")).alias("_wrapped"))
    record, problem = line_reason(F.col("value"), F.col("_wrapped"))
    checked = (wrapped.select("value", *where, record.alias("_record"), problem.alias("_problem"))
               .select("value", *where, "_record", "_problem", simple_record(F.col("_record")).alias("_simple"))
               .select("value", *where, "_record",
                       record_reason(F.col("value"), F.col("_problem"), F.col("_simple")).alias("_reason")))
    # the cast cannot fail after the checks; should Spark still not read a line Python accepted
    # (say, nesting deeper than its parser allows), it is skipped rather than half read
    typed = F.when(F.col("_reason").isNull(), F.try_variant_get("_record", "$", spark_schema.RUN.simpleString()))
    runs = checked.select("*", typed.alias("_run")).select(
        "*", F.when(F.col("_reason").isNull() & F.col("_run").isNull(), F.lit(NOT_JSON))
        .otherwise(F.col("_reason")).alias("reason"))
    return runs.select(
        "reason", *where, "_run.*",
        F.size("_run.findings").alias("n_findings"),
        F.variant_get("_record", "$.counterexample.length", "bigint").alias("counterexample_length"),
        F.when(F.size("_run.findings") > 0, F.col("value")).alias("record_json"),
    )


def _local_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)).resolve() if parsed.scheme in ("", "file") else None


def corrupt_lines(rows: DataFrame, files: Sequence[Path]) -> dict[str, Any]:
    """Count of skipped lines, every reason with its count, and the first few as file:line.

    Three small jobs whatever the damage: reasons with counts; the first few corrupt rows of each
    file; and, for those files, each split's first row id and line count, which turn row ids into
    line numbers.
    """
    corrupt = rows.filter(F.col("reason").isNotNull())
    reasons = {row["reason"]: row["count"] for row in corrupt.groupBy("reason").count().collect()}
    total = sum(reasons.values())
    if not total:
        return {"lines": 0, "reasons": reasons, "examples": []}
    in_file = Window.partitionBy("_file").orderBy("_block", "_row")
    firsts = (corrupt.select("_file", "_block", "_row", "reason", F.row_number().over(in_file).alias("n"))
              .filter(F.col("n") <= CORRUPT_EXAMPLES).collect())
    uris = sorted({row["_file"] for row in firsts})
    splits = (rows.filter(F.col("_file").isin(*uris)).groupBy("_file", "_block")
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
        examples.append((index, start_line + row["_row"] - start_row,
                         {"file": display, "line": start_line + row["_row"] - start_row, "reason": row["reason"]}))
    examples.sort(key=lambda item: (item[0], item[1]))
    return {"lines": total, "reasons": reasons, "examples": [item[2] for item in examples[:CORRUPT_EXAMPLES]]}
