"""No record file takes the summaries down, and the plain and Spark summaries agree on every one
of them (issue 15): deep nesting, huge lines, invalid UTF-8, binary, NUL bytes, huge numbers,
NaN, duplicate keys — each read without a crash, counted as corrupt with the same reason by both."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile import Hostile, record_corpus, record_line
from isrcheck.contract.records.schema import MAX_DEPTH, MAX_LINE_BYTES, NOT_UTF8, TOO_DEEP, TOO_LONG, parse_line
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import RecordReader, find_record_files, split_lines

VOLATILE = ("engine", "generated_at")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Hostile]:
    return record_corpus(tmp_path_factory.mktemp("hostile-records"))


def read(path: Path) -> RecordReader:
    reader = RecordReader([path])
    for _ in reader:
        pass
    return reader


def test_each_hostile_file_is_read_without_a_crash_and_counted(corpus: list[Hostile]) -> None:
    for item in corpus:
        started = time.monotonic()
        reader = read(item.path)
        assert time.monotonic() - started < 10, item.kind
        if item.expect == "valid":
            assert reader.records >= 1 and reader.corrupt == 0, (item.kind, reader.reasons)
        else:
            assert reader.corrupt >= 1, (item.kind, reader.records)


@pytest.mark.parametrize(("kind", "reason"), [
    ("100,000-deep array", TOO_DEEP), ("100,000-deep in a field", TOO_DEEP), ("invalid UTF-8", NOT_UTF8),
    ("a 20 MB line", TOO_LONG), ("binary", NOT_UTF8),
])
def test_the_reason_names_the_limit(corpus: list[Hostile], kind: str, reason: str) -> None:
    item = next(item for item in corpus if item.kind == kind)
    assert reason in read(item.path).reasons


def test_nesting_at_the_limit_is_judged_by_the_schema_past_it_is_too_deep() -> None:
    def nested(depth: int) -> str:  # the object is one level, the arrays in it the rest
        return '{"x":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    assert parse_line(nested(MAX_DEPTH))[1] != TOO_DEEP
    assert parse_line(nested(MAX_DEPTH + 1))[1] == TOO_DEEP
    assert parse_line('{"x":"' + "[" * 1000 + '"}')[1] != TOO_DEEP  # brackets in a string do not nest


def test_a_line_of_exactly_the_limit_is_read_one_byte_more_is_too_long(tmp_path: Path) -> None:
    import json

    base = json.dumps(record_line(replay=""), separators=(",", ":"))
    exact = base.replace('"replay":""', '"replay":"' + "x" * (MAX_LINE_BYTES - len(base)) + '"')
    assert len(exact) == MAX_LINE_BYTES
    path = tmp_path / "r.jsonl"
    path.write_text(exact + "\n" + exact.replace('"x', '"xx') + "\n")
    reader = read(path)
    assert (reader.records, dict(reader.reasons)) == (1, {TOO_LONG: 1})


def test_lines_split_as_hadoop_splits_them_across_chunk_boundaries() -> None:
    import io

    data = b"a\r\nb\rc\n" + b"d" * 70_000 + b"\r" + b"\ne\r"
    lines = [(raw, length) for raw, length in split_lines(io.BytesIO(data), 100_000)]
    assert lines == [(b"a", 1), (b"b", 1), (b"c", 1), (b"d" * 70_000, 70_000), (b"e", 1)]
    assert [raw for raw, _ in split_lines(io.BytesIO(data), 10)] == [b"a", b"b", b"c", None, b"e"]


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in summary.items() if key not in VOLATILE}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    if shutil.which("java") is None:
        pytest.skip("Spark tests need Java 17+ on PATH")
    pytest.importorskip("pyspark")
    from isrcheck.conformance.engine.spark_session import start_session

    session = start_session("local[2]")
    yield session
    session.stop()


@pytest.mark.slow
def test_plain_and_spark_summaries_agree_on_the_hostile_corpus(corpus: list[Hostile], spark: Any,
                                                                tmp_path: Path) -> None:
    from isrcheck.reports.spark_summary import summarize

    files = find_record_files([corpus[0].path.parent])
    plain = summarize_files(files)
    distributed = summarize(spark, files, tmp_path / "out")
    assert plain["corrupt"]["lines"] >= len([c for c in corpus if c.expect == "corrupt"])
    assert comparable(distributed) == comparable(plain)
