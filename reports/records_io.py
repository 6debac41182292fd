"""Finding record files and reading the valid records out of them, in plain Python.

A campaign killed mid-write leaves a truncated last line, and engines under development write odd
things; docs/records.md says a reader skips and counts such lines and never stops at them. So the
reader yields each valid record and keeps, beside the count, the reason for every skipped line
(`file:line: reason`), which the summaries report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from isrcheck.contract.errors import UsageError
from isrcheck.contract.records.schema import EMPTY_LINE, MAX_LINE_BYTES, NOT_JSON, NOT_UTF8, TOO_LONG, parse_line

_NEWLINE = re.compile(rb"\r\n|\r|\n")
_CHUNK = 1 << 16
_BOM = b"\xef\xbb\xbf"


def split_lines(handle: BinaryIO, limit: int) -> Iterator[tuple[bytes | None, int]]:
    """Lines as Hadoop's line reader (Spark's text source) splits them — on \\n, \\r\\n and a lone
    \\r — as (bytes, length); a line longer than `limit` bytes is (None, its length), never held in
    memory whole (a 2 GB line costs one chunk)."""
    buffer = b""
    dropped = 0  # bytes of the current line already thrown away (it is too long)
    at_end = False
    while True:
        match = _NEWLINE.search(buffer)
        if match is not None and not (match.group() == b"\r" and match.end() == len(buffer) and not at_end):
            line, buffer = buffer[: match.start()], buffer[match.end():]
            length = dropped + len(line)
            yield (None if dropped or length > limit else line), length
            dropped = 0
            continue
        if at_end:
            if buffer or dropped:
                yield (None if dropped or len(buffer) > limit else buffer), dropped + len(buffer)
            return
        if len(buffer) > limit:  # keep a final \r: it may begin a \r\n
            keep = 1 if buffer.endswith(b"\r") else 0
            dropped += len(buffer) - keep
            buffer = buffer[len(buffer) - keep:]
        chunk = handle.read(_CHUNK)
        at_end = not chunk
        buffer += chunk


def read_line(raw: bytes | None, length: int, first: bool = False) -> tuple[dict[str, object] | None, str | None]:
    """One line's bytes to (record, None) or (None, reason), in the order the Spark rules check:
    too long, empty, not UTF-8, then `parse_line`. A UTF-8 byte-order mark opening a file is skipped."""
    if raw is not None and first and raw.startswith(_BOM):
        raw, length = raw[len(_BOM):], length - len(_BOM)
    if raw is None or length > MAX_LINE_BYTES:
        return None, TOO_LONG
    if not raw.strip(b" \t\r\n"):
        return None, EMPTY_LINE
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, NOT_UTF8
    return parse_line(text)


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
            with path.open("rb") as handle:
                for number, (raw, length) in enumerate(split_lines(handle, MAX_LINE_BYTES), start=1):
                    self.lines += 1
                    record, reason = read_line(raw, length, first=number == 1)
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
