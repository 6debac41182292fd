"""Reading records in plain Python: which lines are skipped, with which reason, at which file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from isrcheck.contract.errors import UsageError
from isrcheck.contract.records.schema import RUN, check_object, json_type, parse_line
from isrcheck.reports.records_io import RecordReader, find_record_files
from isrcheck.reports.synthetic import write_records
from report_fixtures import EXPECTED, corrupt_lines, make_record, valid_records


@pytest.mark.parametrize(("line", "reason"), corrupt_lines(), ids=lambda v: str(v)[:40])
def test_each_corrupt_line_is_named(line: str, reason: str) -> None:
    record, got = parse_line(line)
    assert record is None
    assert got == reason


def test_fixture_records_are_valid() -> None:
    for record in valid_records():
        assert check_object(record, RUN) is None, record["run_id"]


def test_optional_skip_reason_may_be_absent_and_unknown_fields_are_ignored() -> None:
    record = make_record(1, extra_field={"from": "a newer engine"})
    assert "skip_reason" not in record
    assert parse_line(json.dumps(record)) == (record, None)


@pytest.mark.parametrize(("value", "name"), [
    (None, "null"), (True, "boolean"), (3, "integer"), (2**63, "number"), (1.0, "number"),
    ("x", "string"), ([], "array"), ({}, "object"),
])
def test_json_type_names(value: object, name: str) -> None:
    assert json_type(value) == name


def test_nan_and_lone_surrogates_are_not_json() -> None:
    good = json.dumps(make_record(1))
    assert parse_line(good.replace('"duration_s": 0.02', '"duration_s": NaN'))[1] == "not valid JSON"
    assert parse_line(good.replace('"campaign_id": "c1"', '"campaign_id": "\\ud800"'))[1] == "not valid JSON"
    paired = good.replace('"campaign_id": "c1"', '"campaign_id": "\\ud83d\\ude00"')
    assert parse_line(paired)[1] is None


def test_reader_counts_and_locates_skipped_lines(records_dir: Path) -> None:
    files = find_record_files([records_dir])
    reader = RecordReader(files, keep_examples=100)
    records = list(reader)
    assert len(records) == EXPECTED["runs"] == reader.records
    assert reader.corrupt == EXPECTED["corrupt_lines"]
    assert reader.lines == EXPECTED["runs"] + EXPECTED["corrupt_lines"]
    first = reader.examples[0]
    # directories are read in sorted order: nested/worker-1.jsonl comes first, its last line is cut
    assert (Path(first.file).name, first.line, first.reason) == ("worker-1.jsonl", 12, "not valid JSON")
    assert str(reader.examples[1]).endswith("worker-0.jsonl:2: not valid JSON")
    assert reader.reasons["not valid JSON"] == 3
    assert {e.reason for e in reader.examples} == {reason for _, reason in corrupt_lines()}


def test_byte_order_mark_crlf_and_duplicate_keys(records_dir: Path) -> None:
    """The BOM and CRLF endings are invisible; a duplicated key keeps its last value."""
    records = {r["run_id"]: r for r in RecordReader(find_record_files([records_dir]))}
    assert records["c1-0011"]["steps"] == 21
    assert "c1-0000" in records


def test_find_record_files_expands_directories_once(records_dir: Path) -> None:
    nested = records_dir / "nested" / "worker-1.jsonl"
    files = find_record_files([records_dir, nested])
    assert [f.name for f in files] == ["worker-1.jsonl", "worker-0.jsonl"]


def test_missing_paths_and_empty_directories_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory"):
        find_record_files([tmp_path / "absent.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"no \*\.jsonl files"):
        find_record_files([tmp_path / "empty"])


def test_benchmark_records_are_valid_and_varied(tmp_path: Path) -> None:
    """The benchmark's synthetic records obey the contract, apart from their deliberately cut lines."""
    files = write_records(tmp_path, 3_000, files=2, truncated_every=1_000)
    reader = RecordReader(files)
    records = list(reader)
    assert (len(records), reader.corrupt, set(reader.reasons)) == (2_997, 3, {"not valid JSON"})
    assert len({f["signature"] for r in records for f in r["findings"]}) >= 15
    assert {r["outcome"] for r in records} >= {"pass", "finding", "error"}
    assert write_records(tmp_path / "again", 3_000, files=2, truncated_every=1_000)[0].read_bytes() == \
        files[0].read_bytes()
