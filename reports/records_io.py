"""Finding record files and reading the valid records out of them, in plain Python.

A campaign killed mid-write leaves a truncated last line, and engines under development write odd
things; docs/records.md says a reader skips and counts such lines and never stops at them. So the
reader yields each valid record and keeps, beside the count, the reason for every skipped line
(`file:line: reason`), which the summaries report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from isrcheck.errors import UsageError
from isrcheck.records.schema import NOT_JSON, parse_line


def find_record_files(inputs: Sequence[str | Path]) -> list[Path]:
    """Expand files and directories (recursively, `*.jsonl`) into files, in the order given.

    A path named twice, directly or through a directory, is read once: counting a campaign
    twice would double every number in the summary.
    """
    files: list[Path] = []
    seen: set[Path] = set()
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
            if not found:
                raise UsageError(f"{path}: no *.jsonl files in this directory")
        elif path.is_file():
            found = [path]
        elif path.exists():
            raise UsageError(f"{path}: not a regular file or directory")
        else:
            raise UsageError(f"{path}: no such file or directory")
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files


@dataclass(frozen=True)
class CorruptLine:
    """A skipped line, named so a person can open the file at it."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass
class RecordReader:
    """Iterate the valid records of `files`; afterwards the counters describe what was skipped."""

    files: Sequence[Path]
    keep_examples: int = 5
    lines: int = 0
    records: int = 0
    corrupt: int = 0
    examples: list[CorruptLine] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)

    def __iter__(self) -> Iterator[dict[str, object]]:
        for path in self.files:
            yield from self._read(path)

    def _read(self, path: Path) -> Iterator[dict[str, object]]:
        try:
            # as Hadoop's line reader in Spark's text source: split on \n, \r\n and a lone \r
            # (newline=None), skip a UTF-8 byte-order mark, make undecodable bytes U+FFFD
            with path.open(encoding="utf-8-sig", errors="replace", newline=None) as handle:
                for number, line in enumerate(handle, start=1):
                    self.lines += 1
                    record, reason = parse_line(line[:-1] if line.endswith("\n") else line)
                    if record is not None:
                        self.records += 1
                        yield record
                    else:
                        self._skip(str(path), number, reason or NOT_JSON)
        except OSError as error:
            raise UsageError(f"{path}: cannot read: {error.strerror or error}") from None

    def _skip(self, file: str, line: int, reason: str) -> None:
        self.corrupt += 1
        self.reasons[reason] += 1
        if len(self.examples) < self.keep_examples:
            self.examples.append(CorruptLine(file, line, reason))
