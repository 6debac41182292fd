"""`isrcheck report` and `isrcheck summarize` from the command line: outputs and exit codes.

Usage errors exit 2 with one line on stderr and no traceback. The tests go through
`isrcheck.cli.main` with only these two commands registered, whether or not cli.py lists them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from isrcheck.reports.plain_summary import summarize_files
from isrcheck.reports.records_io import find_record_files
from isrcheck.reports.summary_file import write_summary
from report_fixtures import EXPECTED, write_fixture

from isrcheck import cli

OURS = ("isrcheck.commands.summarize", "isrcheck.commands.report")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def isrcheck(monkeypatch: pytest.MonkeyPatch) -> Callable[..., int]:
    monkeypatch.setattr(cli, "COMMAND_MODULES", OURS)
    return lambda *argv: cli.main([str(a) for a in argv])


def assert_usage_error(code: int, capsys: pytest.CaptureFixture[str], command: str, fragment: str) -> None:
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"isrcheck {command}: error: ") and fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_report_from_records(isrcheck: Callable[..., int], records_dir: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site" / "report.html"
    assert isrcheck("report", records_dir, "-o", out) == 0
    captured = capsys.readouterr()
    assert f"{EXPECTED['runs']} runs, {EXPECTED['signatures']} signatures" in captured.out
    assert f"skipped {EXPECTED['corrupt_lines']} corrupt line(s) (first: " in captured.err
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'class="sequence"' in page


def test_report_from_a_summary_file_and_directory(isrcheck: Callable[..., int], records_dir: Path,
                                                  tmp_path: Path) -> None:
    written = write_summary(summarize_files(find_record_files([records_dir])), tmp_path / "summary")
    assert isrcheck("report", written, "-o", tmp_path / "a.html") == 0
    assert isrcheck("report", tmp_path / "summary", "-o", tmp_path / "b.html") == 0
    assert (tmp_path / "a.html").stat().st_size > 10_000


@pytest.mark.parametrize(("make_input", "fragment"), [
    (lambda d: d / "absent.jsonl", "no such file or directory"),
    (lambda d: d / "absent.json", "no such file"),
    (lambda d: (d / "bad.json").write_text("{not json") and d / "bad.json", "not a summary: invalid JSON"),
    (lambda d: (d / "other.json").write_text('{"format": "x"}') and d / "other.json", "not a summary"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "no *.jsonl files"),
])
def test_report_usage_errors(isrcheck: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             make_input: Callable[[Path], Path], fragment: str) -> None:
    code = isrcheck("report", make_input(tmp_path), "-o", tmp_path / "r.html")
    assert_usage_error(code, capsys, "report", fragment)
    assert not (tmp_path / "r.html").exists()


def test_report_refuses_a_summary_mixed_with_records(isrcheck: Callable[..., int], records_dir: Path,
                                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written = write_summary({"format": "isrcheck.summary/1"}, tmp_path / "s")
    code = isrcheck("report", written, records_dir, "-o", tmp_path / "r.html")
    assert_usage_error(code, capsys, "report", "not both")


def test_report_master_without_spark_is_refused(isrcheck: Callable[..., int], records_dir: Path,
                                                tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Records are summarized in plain Python without --spark: a --master would be ignored."""
    code = isrcheck("report", records_dir, "-o", tmp_path / "r.html", "--master", "local[2]")
    assert_usage_error(code, capsys, "report", "--master needs --spark")
    assert not (tmp_path / "r.html").exists()


def test_summarize_usage_errors_come_before_spark(isrcheck: Callable[..., int], tmp_path: Path,
                                                  records_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = isrcheck("summarize", tmp_path / "nothing", "--out", tmp_path / "out")
    assert_usage_error(code, capsys, "summarize", "no such file or directory")
    code = isrcheck("summarize", records_dir, "--out", tmp_path / "out", "--conf", "no-equals-sign")
    assert_usage_error(code, capsys, "summarize", "expected KEY=VALUE")
    (tmp_path / "file").write_text("")
    code = isrcheck("summarize", records_dir, "--out", tmp_path / "file" / "out")
    assert_usage_error(code, capsys, "summarize", "cannot create output directory")


def group_members(group: int) -> list[str]:
    """Processes of process group `group` (from /proc), as `pid (name) state`."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name_end = text.rindex(")")
        fields = text[name_end + 2:].split()
        if int(fields[2]) == group:
            members.append(text[: name_end + 1] + " " + fields[0])
    return members


@pytest.mark.slow
def test_summarize_then_report_end_to_end(tmp_path: Path) -> None:
    """Both commands in a fresh process each, as a user runs them (Spark starts and stops)."""
    write_fixture(tmp_path / "records")
    program = ("import sys; from isrcheck import cli; "
               f"cli.COMMAND_MODULES = {OURS!r}; sys.exit(cli.main(sys.argv[1:]))")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "TMPDIR": str(scratch)}

    def run(*argv: object) -> subprocess.CompletedProcess[str]:
        # a process group of its own: whatever it leaves behind can be counted when it exits
        with subprocess.Popen([sys.executable, "-c", program, *map(str, argv)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, start_new_session=True) as process:
            stdout, stderr = process.communicate(timeout=600)
        left = group_members(process.pid)
        assert not left, f"isrcheck {argv[0]} left processes in its group: {left}"
        assert not list(scratch.iterdir()), f"isrcheck {argv[0]} left temp files: {list(scratch.iterdir())}"
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

    summarized = run("summarize", tmp_path / "records", "--out", tmp_path / "out", "--master", "local[2]")
    assert summarized.returncode == 0, summarized.stderr
    # nothing alarming on the console of a run that went well (Spark's codegen failures included)
    assert "ERROR" not in summarized.stderr and "Exception" not in summarized.stderr, summarized.stderr[-2000:]
    assert f"{EXPECTED['runs']} runs" in summarized.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["lines", "summary.json"]
    reported = run("report", tmp_path / "out", "-o", tmp_path / "report.html")
    assert reported.returncode == 0, reported.stderr
    with_spark = run("report", tmp_path / "records", "--spark", "--master", "local[2]", "-o", tmp_path / "r2.html")
    assert with_spark.returncode == 0, with_spark.stderr
    assert "summarized by spark" in (tmp_path / "r2.html").read_text(encoding="utf-8")
