"""The Spark summary: same summary.json as plain Python, Parquet tables written, corrupt lines located.

The fixture test runs in the default suite (one local Spark job, about half a minute with JVM
start); the synthetic-records comparison is marked slow.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.synthetic import write_records
from report_fixtures import EXPECTED, make_record

VOLATILE = ("engine", "generated_at")


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in summary.items() if key not in VOLATILE}


@pytest.fixture(scope="module")
def spark_result(spark: Any, shared_records: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    from isrcheck.reports.spark_summary import summarize

    out = tmp_path_factory.mktemp("spark-out")
    return summarize(spark, find_record_files([shared_records]), out), out


def test_spark_and_plain_summaries_agree_on_the_fixture(spark_result: tuple[dict, Path],
                                                        shared_records: Path) -> None:
    spark_summary, _ = spark_result
    plain = summarize_files(find_record_files([shared_records]))
    assert spark_summary["engine"] == "spark"
    for key in comparable(plain):
        assert spark_summary[key] == plain[key], key
    assert json.dumps(comparable(spark_summary), sort_keys=True) == json.dumps(comparable(plain), sort_keys=True)


def test_spark_locates_corrupt_lines(spark_result: tuple[dict, Path]) -> None:
    corrupt = spark_result[0]["corrupt"]
    assert corrupt["lines"] == EXPECTED["corrupt_lines"]
    assert [(Path(e["file"]).name, e["line"]) for e in corrupt["examples"][:3]] == [
        ("worker-1.jsonl", 12), ("worker-0.jsonl", 2), ("worker-0.jsonl", 4)]


def test_parquet_tables(spark: Any, spark_result: tuple[dict, Path]) -> None:
    _, out = spark_result
    runs = spark.read.parquet(str(out / "runs"))
    assert runs.count() == EXPECTED["runs"]
    assert {"run_id", "target", "findings", "counterexample", "_file"} <= set(runs.columns)
    assert runs.schema["seed"].dataType.simpleString() == "bigint"
    assert spark.read.parquet(str(out / "findings")).count() == EXPECTED["findings"]
    signatures = spark.read.parquet(str(out / "signatures"))
    assert signatures.count() == EXPECTED["signatures"]
    shortest = {row["signature"]: row["shortest_run_id"] for row in signatures.collect()}
    assert shortest["violation:alter_partition:P-ELIG:"] == "c1-0008"
    matrix = spark.read.parquet(str(out / "matrix"))
    assert {"target", "release", "column", "runs"} == set(matrix.columns)
    assert matrix.filter("column = 'P-ELIG'").groupBy().sum("runs").first()[0] == 3


@pytest.mark.slow
def test_spark_and_plain_agree_on_synthetic_records(spark: Any, tmp_path: Path) -> None:
    """A realistic mix: thousands of runs, ~30 signatures, truncated lines in several files."""
    from isrcheck.reports.spark_summary import summarize

    files = write_records(tmp_path / "records", 6_000, files=3, seed=5, truncated_every=700)
    plain = summarize_files(files)
    distributed = summarize(spark, files, tmp_path / "out")
    assert plain["corrupt"]["lines"] == 8
    assert plain["totals"]["signatures"] >= 20
    assert comparable(distributed) == comparable(plain)


def test_records_with_the_optional_fields_stay_on_sparks_fast_path(spark: Any) -> None:
    """A passing record is settled by Spark alone (no Python UDF) whether or not it carries the
    optional fields; one holding a wrong type in them is handed to the schema check."""
    from isrcheck.reports.spark_rules import line_reason, simple_record, wrap_line
    from pyspark.sql import functions as F

    lines = [make_record(1), make_record(2, properties=["P-ELIG"], coverage=["crash"], commit="abc",
                                        isrcheck_version="0.1.0", mutant_title=None, negative_control=None),
             make_record(3, properties=[], coverage=[]), make_record(4, commit=5), make_record(5, coverage=[1])]
    frame = spark.createDataFrame([(json.dumps(line),) for line in lines], ["value"])
    wrapped = frame.select("value", wrap_line(F.col("value")).alias("wrapped"))
    record, _ = line_reason(F.col("value"), F.col("wrapped"))
    assert [row[0] for row in wrapped.select(simple_record(record)).collect()] == [True, True, True, False, False]
