"""The Spark summary: same summary.json as plain Python, Parquet tables written, corrupt lines located.

The fixture test runs in the default suite (one local Spark job, about half a minute with JVM
start); the synthetic-records comparison is marked slow.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.synthetic import write_records
from report_fixtures import EXPECTED, make_record

VOLATILE = ("engine", "generated_at")
WHERE_COLUMNS = ["_file", "_block", "_row"]


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


def test_one_parquet_table_is_written_and_it_holds_every_line(spark: Any, spark_result: tuple[dict, Path]) -> None:
    """The runs the aggregates read and the skipped lines, from the one job that read the input."""
    summary, out = spark_result
    assert sorted(path.name for path in out.iterdir()) == ["lines"]
    runs = spark.read.parquet(str(out / "lines" / "status=valid"))
    assert runs.count() == EXPECTED["runs"]
    assert {"run_id", "target", "findings", "counterexample", "_file"} <= set(runs.columns)
    assert runs.schema["seed"].dataType.simpleString() == "bigint"
    assert runs.selectExpr("sum(size(findings))").first()[0] == EXPECTED["findings"]
    corrupt = spark.read.parquet(str(out / "lines" / "status=corrupt"))
    assert corrupt.count() == EXPECTED["corrupt_lines"]
    assert corrupt.filter("value IS NULL OR run_id IS NOT NULL").count() == 0
    shortest = {entry["signature"]: (entry["shortest"] or {}).get("run_id") for entry in summary["signatures"]}
    assert shortest["violation:alter_partition:P-ELIG:"] == "c1-0008"


def test_spark_and_plain_count_unknown_properties_alike(spark: Any, tmp_path: Path) -> None:
    from isrcheck.reports.spark_summary import summarize
    from test_plain_summary import unknown_mix_records

    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in unknown_mix_records()), encoding="utf-8")
    distributed = summarize(spark, [path], tmp_path / "out")
    plain = summarize_files([path])
    assert distributed["properties"] == plain["properties"]
    assert {p["property"]: p["runs_unknown"] for p in distributed["properties"]} == {
        "P-ELIG": 1, "P-LOG": 2, "P-LEAD": 0}
    assert distributed["matrix"] == plain["matrix"]


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


SAMPLES: list[Any] = [None, True, 5, 1.5, 2**64, "s", [], [1], [None], ["s", None], {}, {"k": "v"}]


def mutations(record: dict[str, Any], shape: Any, path: tuple[Any, ...] = ()) -> Iterator[dict[str, Any]]:
    """The record with one field of `shape` (found at `path`) removed, or replaced by a value of
    each JSON type; then the same inside every object the schema describes (findings, their
    codes, the counterexample and its steps)."""
    from isrcheck.contract.records.schema import Shape

    def at(root: dict[str, Any]) -> Any:
        node: Any = root
        for key in path:
            node = node[key]
        return node

    for rule in shape.fields:
        for replacement in [*SAMPLES, "drop"]:
            mutated = json.loads(json.dumps(record))
            if replacement == "drop":
                at(mutated).pop(rule.name, None)
            else:
                at(mutated)[rule.name] = replacement
            yield mutated
        value = at(record).get(rule.name)
        if rule.shape is not None and isinstance(value, dict):
            yield from mutations(record, rule.shape, (*path, rule.name))
        if isinstance(rule.items, Shape) and isinstance(value, list) and value:
            yield from mutations(record, rule.items, (*path, rule.name, 0))
        if isinstance(rule.items, str) and isinstance(value, list) and value:
            for sample in SAMPLES:
                mutated = json.loads(json.dumps(record))
                at(mutated)[rule.name][0] = sample
                yield mutated


def test_spark_keeps_exactly_the_lines_the_record_schema_keeps(spark: Any) -> None:
    """Every field of the schema, at every level, missing or of each JSON type: Spark's verdict
    (`record_valid`, expressions derived from the schema) is `parse_line`'s, line by line."""
    from isrcheck.contract.records.schema import RUN, parse_line
    from isrcheck.reports.spark_rules import item_arrays, line_reason, record_valid, wrap_line
    from report_fixtures import counterexample, finding

    rich = make_record(1, outcome="finding", findings=[
        finding("violation", "alter_partition", prop="P-ELIG", codes=("NONE",), evidence=[[[1]]]),
        finding("divergence", "fence", field="error", codes=("A", "B"))],
        counterexample={**counterexample(3), "findings": [finding("violation", "alter_partition", prop="P-ELIG")]},
        properties=["P-ELIG"], coverage=["c"], commit="abc", negative_control=False, history={"ops": [{}]})
    lines = [json.dumps(line) for base in (rich, make_record(2)) for line in [base, *mutations(base, RUN)]]
    lines += [json.dumps(rich).replace('"steps": 11', '"steps": 11.0'), json.dumps(make_record(3, seed=-(2**63))),
              json.dumps(make_record(3, seed=2**63)), json.dumps(make_record(4, duration_s=1e400)).replace(
                  "Infinity", "1e400"), json.dumps(rich, indent=1).replace("\n", " "), " " + json.dumps(rich) + "\t",
              json.dumps(rich)[:-1] + ', "history": {"deep": ' + "[" * 61 + "]" * 61 + "}}",
              json.dumps(rich)[:-1] + ', "history": {"deep": ' + "[" * 70 + "]" * 70 + "}}",
              json.dumps(make_record(5))[:-1] + ', "history": {"deep": ' + "[" * 63 + "]" * 63 + "}}"]
    expected = [parse_line(line)[1] is None for line in lines]
    assert 20 < sum(expected) < len(lines) - 300  # both verdicts are well represented
    frame = spark.createDataFrame([(line,) for line in lines], ["value"])
    wrapped = frame.select("value", wrap_line("value").alias("wrapped"))
    record, problem = line_reason("value", "wrapped")
    checked = wrapped.select("value", record.alias("record"), problem.alias("problem")).select(
        "*", *item_arrays("record"))
    got = [row[0] for row in checked.select(record_valid("value", "problem", "record")).collect()]
    wrong = [(line[:160], want) for line, want, verdict in zip(lines, expected, got, strict=True) if want != verdict]
    assert not wrong


def ingested_as_parse_line_judges(spark: Any, lines: list[str], *columns: str) -> tuple[list[bool], Any, list[Any]]:
    """`lines` through the whole ingest, each asserted valid exactly when `parse_line` keeps it;
    what `parse_line` said of each, the input frame, and the ingested rows' `columns`."""
    from isrcheck.contract.records.schema import parse_line
    from isrcheck.reports.spark_ingest import parse_records

    expected = [parse_line(line)[1] is None for line in lines]
    frame = spark.createDataFrame([(line, "f", 0, n) for n, line in enumerate(lines)], ["value", *WHERE_COLUMNS])
    rows = parse_records(frame).select("status", *columns).collect()
    wrong = [(line[:200], want) for line, want, row in zip(lines, expected, rows, strict=True)
             if want != (row["status"] == "valid")]
    assert not wrong
    return expected, frame, rows


def test_the_fast_path_vouches_only_for_lines_the_record_schema_keeps(spark: Any) -> None:
    """Spark's JSON reader (`fast_vouched`) reads a number into a string field, a JSON null as a
    missing key, drops unknown and duplicate keys and what follows the first value, and takes
    "NaN" for a double: every mutation of every field, written compactly as the writers write
    (optional fields listed as null, and left out), and tricks aimed at those leniencies, go
    through the whole ingest (`parse_records`), and it keeps exactly the lines `parse_line`
    keeps, with the exact check's typed row; the fast path itself vouches for the plain lines."""
    from isrcheck.contract.records.schema import RUN, parse_line
    from isrcheck.reports.spark_rules import fast_row, fast_vouched

    def compact(record: dict[str, Any]) -> str:
        return json.dumps(record, separators=(",", ":"))

    optional = {rule.name: None for rule in RUN.fields if rule.optional}
    def ordered(record: dict[str, Any]) -> dict[str, Any]:  # in the schema's order, as the writers write
        return {rule.name: record[rule.name] for rule in RUN.fields if rule.name in record}

    listing = ordered({**make_record(7, mutant="B01"), **optional, "properties": ["P-ACK"], "unknown": [],
                       "coverage": []})
    campaign = {key: value for key, value in listing.items() if key not in ("cut_short", "history")}
    plain = [make_record(2), ordered(make_record(3, duration_s=2.5, skip_reason="x", mutant="B02")), listing,
             campaign]
    lines, starts = [], []
    for base in plain:
        starts.append(len(lines))
        lines += [compact(line) for line in [base, *mutations(base, RUN)]]
    good = compact(make_record(4))
    lines += [
        good.replace('"steps":14', '"steps":"14"'), good.replace('"release":"4.1"', '"release":4.1'),
        good.replace('"duration_s":0.05', '"duration_s":"NaN"'),
        good.replace('"duration_s":0.05', '"duration_s":NaN'),
        good.replace('"duration_s":0.05', '"duration_s":"Infinity"'), good.replace('"mutant":null,', ""),
        good.replace('"mutant":null', '"mutant":null,"mutant":"B01"'),
        good.replace('"mutant":null', '"mutant":"B01","mutant":null'),
        good.replace('"run_id":"c1-0004"', '"run_id":"c1-0004","run_id":5'),
        good.replace('"run_id":"c1-0004"', '"run_id":{"a":1}'), good + "x", good + ',"cut_short":null}', good + "}",
        good[:-1] + ',"cut_short":null}', good[:-1] + ',"properties":null}', good[:-1] + ',"history":"{}"}',
        good[:-1] + ',"history":null,"history":{"a":1}}', good[:-1] + ',"coverage":["a",null]}',
        good[:-1] + ',"extra":{"cut_short":null}}', good.replace('"findings":[]', '"findings":[null]'),
        good.replace('"counterexample":null', '"counterexample":"x"'), good.replace("{", "{ ", 1), " " + good,
        good.replace('"schema":"isrcheck.run/1"', "'schema':'isrcheck.run/1'"),
        good.replace('"run_id":"c1-0004"', '"run_id":"c1-\\u00e9"'), good.replace("c1-0004", "c1-\u00e9"),
        good.replace("c1-0004", "c1-\\ud800"), good.replace("c1-0004", "c1-\\/"),
        good.replace('"seed":1004', '"seed":1004.0'), good.replace('"seed":1004', '"seed":9223372036854775808'),
        good.replace('"differential":true', '"differential":"true"'), "\ufeff" + good,
        good.replace('"run_id"', '"RUN_ID"'), good.replace('"run_id"', '"run_id":"x","RUN_ID"'),
    ]
    expected, frame, rows = ingested_as_parse_line_judges(spark, lines, "run_id", "steps", "duration_s",
                                                          "properties")
    assert 40 < sum(expected) < len(lines) - 300
    for line, row in zip(lines, rows, strict=True):
        record = parse_line(line)[0]
        if record is not None:
            assert (row["run_id"], row["steps"], row["duration_s"], row["properties"]) == (
                record["run_id"], record["steps"], record["duration_s"], record.get("properties"))
    vouched = [row[0] for row in frame.select("value", fast_row("value").alias("_f")).select(
        fast_vouched("value", "_f")).collect()]
    assert [vouched[start] for start in starts] == [True] * len(starts), [lines[start] for start in starts]
    assert not any(got and not want for got, want in zip(vouched, expected, strict=True))


def test_lines_with_findings_are_kept_exactly_through_the_whole_ingest(spark: Any) -> None:
    """Lines with findings through the whole ingest (`parse_records`): every mutation of every
    field at every level of records with findings, written compactly as the writers write them,
    free-form values aimed at the JSON reader's copies of them (escapes written otherwise, lone
    surrogates, NaN, single quotes, text of the record's own members), nesting past the limit
    through a key the schema does not name (kept until this test: only the free-form values'
    brackets were counted), and a counterexample length past 64 bits in a skipped line (it failed
    the job): the ingest keeps exactly the lines `parse_line` keeps, with their findings and
    counterexample length."""
    from isrcheck.contract.records.schema import RUN, parse_line
    from isrcheck.reports.synthetic import generate_records
    from report_fixtures import counterexample, finding

    def compact(record: dict[str, Any]) -> str:
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False)

    def ordered(record: dict[str, Any]) -> dict[str, Any]:  # in the schema's order, as the writers write
        return {rule.name: record[rule.name] for rule in RUN.fields if rule.name in record}

    shrunk = {**counterexample(3, diverging=True), "findings": [finding("violation", "alter_partition", prop="P-ELIG")]}
    shrunk["findings"][0]["evidence"] = None  # a JSON null evidence inside the counterexample
    rich = ordered(make_record(
        1, outcome="finding", mutant="B01", mutant_title="t", negative_control=False, properties=["P-ELIG"],
        coverage=["c"], commit="abc", counterexample=shrunk, findings=[
            finding("violation", "alter_partition", prop="P-ELIG", codes=("NONE",), evidence=[[[1]], {"a": None}]),
            finding("divergence", "fence", field="error", codes=("A", "B"), evidence={"s": "\u00e9\n"}),
            finding("timeout", "heartbeat", evidence=5)]))
    listing = ordered({**{rule.name: None for rule in RUN.fields if rule.optional}, **rich})
    campaign = {key: value for key, value in listing.items() if key not in ("cut_short", "history")}
    synthetic = [ordered(record) for record in generate_records(300, seed=3) if record["findings"]][:3]
    bases = [rich, listing, campaign, *synthetic]
    lines = []
    for base in bases:
        lines += [compact(line) for line in [base, *mutations(base, RUN)]]
    good = compact(rich)
    evidence = '"evidence":[[[1]],{"a":null}]'
    assert evidence in good and '"diverging_step":3' in good and '"args":{"broker":1}' in good

    def nested(depth: int) -> str:
        return "[" * depth + "]" * depth

    def args(text: str) -> str:  # the first step's free-form arguments
        return good.replace('"args":{"broker":1}', '"args":' + text, 1)

    tricks = [
        '"\\uD800"', '"\\ud800"', '{"n":"\\uDBFF\\uDFFF"}', "NaN", '{"x":NaN}', "Infinity", "-Infinity",
        "{'a':1}", '"{\\"isr\\":[1]}"', '{"isr": [1, 2]}', "null", "1.0", "1e3", "-0", "1E400", "1.5E-7",
        nested(60), nested(61), nested(62), nested(70), '{"cut_short":null}', '{"x":1,"cut_short":null}',
        '{"counterexample":null}', '{"evidence":null}', '"\\u0001\\n"', '"\\/"', '"\u00e9"', '"\\u00e9"',
        str(2**64), '{"a":1,"a":2}', "true", "[]", "{}", '"x"}', "01",
    ]
    lines += [good.replace(evidence, '"evidence":' + trick) for trick in tricks]
    lines += [
        good.replace(evidence, ""), good.replace(evidence, evidence + ',"evidence":{"b":2}'),
        good.replace(evidence, evidence + ',"extra":1'), good.replace('"findings":[', '"findings":[null,'),
        good.replace('"codes":["NONE"]', '"codes":["NONE",null]'), args("NaN"), args(nested(61)), args(nested(62)),
        args(nested(70)), args('"\\uD800"'), good.replace('"diverging_step":3', '"diverging_step":3.0'),
        good.replace('"counterexample":{', '"counterexample":"{').replace(',"replay"', '","replay"', 1),
        good + "x", " " + good, good[:-1] + ',"history":null}', good[:-1] + ',"history":{"a":1}}',
        good.replace('"step":3', '"step":"3"', 1), good.replace('"kind":"violation"', '"kind":null', 1),
        good.replace('"property":"P-ELIG"', '"property":5', 1),
        # nesting past the limit through a key the schema does not name, with and without findings
        *(text[:-1] + ',"extra":' + nested(depth) + "}"
          for text in (good, compact(make_record(5))) for depth in (63, 64)),
    ]
    expected, _, rows = ingested_as_parse_line_judges(spark, lines, "run_id", "n_findings", "counterexample_length")
    assert 60 < sum(expected) < len(lines) - 300  # both verdicts are well represented
    for line, row in zip(lines, rows, strict=True):
        record = parse_line(line)[0]
        if record is not None:
            cx = record["counterexample"]
            assert (row["run_id"], row["n_findings"], row["counterexample_length"]) == (
                record["run_id"], len(record["findings"]), cx["length"] if isinstance(cx, dict) else None)


def test_no_python_runs_while_the_input_is_read(spark: Any, shared_records: Path) -> None:
    """The job that reads every line is Spark alone: no Python UDF in its plan."""
    from isrcheck.reports.spark_ingest import parse_records, read_lines

    plan = parse_records(read_lines(spark, find_record_files([shared_records])))._jdf.queryExecution()
    text = plan.executedPlan().toString()
    assert "FileScan text" in text and "EvalPython" not in text, text


@pytest.mark.parametrize("brackets", ["approximate", "wrong"])
def test_percentiles_are_exact_whether_or_not_the_brackets_hold(spark: Any, brackets: str) -> None:
    """Spark's exact `percentile` sorts the whole column in one task; the summary counts the few
    values inside approximate brackets instead, and falls back when a bracket misses its rank."""
    import random

    from isrcheck.reports import spark_summary
    from isrcheck.reports import summary_layout as layout

    rng = random.Random(3)
    values = [rng.choice([rng.random() * 100, float(rng.randint(0, 5))]) for _ in range(5_001)]
    frame = spark.createDataFrame([(v, int(v)) for v in values], ["duration_s", "steps"])
    stats = dict(spark_summary._run_stats(frame).asDict())
    if brackets == "wrong":
        stats["duration_s_brackets"] = [-2.0, -1.0, 200.0, 300.0]
        stats["steps_brackets"] = [4, 5, 0, 0]
    assert spark_summary._percentiles(frame, stats) == {
        "duration_s": [layout.percentile(sorted(values), fraction) for fraction in layout.PERCENTILES],
        "steps": [layout.percentile(sorted(int(v) for v in values), fraction) for fraction in layout.PERCENTILES]}


def test_python_is_asked_for_reasons_only_when_a_skipped_line_does_not_name_its_own(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Truncated and empty lines carry their reason in Spark's own check; a Python worker (seconds
    to start) is started only for lines that need `parse_line` to say what is wrong with them."""
    from isrcheck.contract.records.schema import EMPTY_LINE, NOT_JSON
    from isrcheck.reports import spark_ingest
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    def refuse(line: str) -> str:
        raise RuntimeError("Python was asked for a reason")

    monkeypatch.setattr(spark_ingest, "reason_udf", F.udf(refuse, StringType(), useArrow=False))
    good = json.dumps(make_record(1))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join([good, good[:40], "", good, good[:-1]]) + "\n", encoding="utf-8")

    def reasons(file: Path) -> dict[str, int]:
        rows = spark_ingest.parse_records(spark_ingest.read_lines(spark, [file]))
        valid, corrupt = rows.filter("status = 'valid'"), rows.filter("status = 'corrupt'")
        return spark_ingest.corrupt_lines(valid, corrupt, [file])["reasons"]

    assert reasons(path) == {NOT_JSON: 2, EMPTY_LINE: 1}
    schema_broken = tmp_path / "schema.jsonl"
    schema_broken.write_text(good.replace('"steps"', '"stepz"') + "\n", encoding="utf-8")
    with pytest.raises(Exception, match="Python was asked"):
        reasons(schema_broken)


def test_a_local_session_runs_its_jvm_with_the_short_job_options(spark: Any) -> None:
    """The collector and JIT thresholds of `LOCAL_JVM_OPTIONS` reach the JVM that does the work."""
    from isrcheck.conformance.engine.spark_session import LOCAL_JVM_OPTIONS

    bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    arguments = set(bean.getInputArguments())
    assert set(LOCAL_JVM_OPTIONS) <= arguments


def test_a_status_without_lines_is_an_empty_table_that_needs_no_python(spark: Any, tmp_path: Path) -> None:
    """Most record sets have no corrupt line, so `lines/status=corrupt` is not written; its table
    is then empty, with the columns of the one written, and planned by Spark alone: a table made
    from Python data (`createDataFrame`) started Python workers for the corrupt lines' job."""
    from isrcheck.reports import spark_ingest

    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(make_record(n)) for n in range(3)) + "\n", encoding="utf-8")
    spark_ingest.write_lines(spark, [path], tmp_path / "out")
    assert not (tmp_path / "out" / "lines" / "status=corrupt").exists()
    runs = spark_ingest.read_table(spark, tmp_path / "out", spark_ingest.VALID)
    corrupt = spark_ingest.read_table(spark, tmp_path / "out", spark_ingest.CORRUPT)
    assert runs.count() == 3 and corrupt.count() == 0
    assert corrupt.schema == runs.schema
    plan = corrupt.groupBy("reason").count()._jdf.queryExecution().executedPlan().toString()
    assert "ExistingRDD" not in plan and "PythonRDD" not in plan, plan
    assert spark_ingest.corrupt_lines(runs, corrupt, [path]) == {"lines": 0, "reasons": {}, "examples": []}
