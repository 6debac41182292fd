"""Reading a scenario file so that no file can take isrcheck down: what one file may cost is
bounded, and every refusal is one line naming the limit (issue 15).

Scenario files come from anyone — a colleague's branch, a bug report, a fuzzer. Plain
`yaml.safe_load` hangs on a FIFO, reads `/dev/zero` until memory runs out, recurses past
Python's stack on 10,000-deep nesting, expands "billion laughs" aliases, chokes on a 5,000-digit
integer (Python refuses to convert it), and silently keeps the last of two equal keys. Here:

1. only a regular file is opened, and at most `MAX_BYTES` of it is read;
2. the bytes must be UTF-8;
3. the YAML *events* (a flat stream, no recursion) are checked first: nesting depth, alias
   count and the size of the document with every alias expanded, integer literal length;
4. only then is the document built, by a loader that refuses duplicate keys;
5. the built document is walked once more: no control characters (NUL …) in any string, and
   every integer fits in 64 bits (what Kafka's widest fields hold).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 1 << 20
"""1 MiB: the largest scenario in the repository is a few KiB."""
MAX_DEPTH = 32
MAX_ALIASES = 64
MAX_NODES = 100_000
"""Nodes of the document with every alias expanded (what a consumer walking it visits)."""
MAX_INT_DIGITS = 20
MAX_INT = (1 << 63) - 1
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
DIGITS = re.compile(r"^[-+]?[0-9_]+$")


class BoundedYamlError(ValueError):
    """The file is refused; the message is one line, without the file name (the caller adds it)."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = MAX_BYTES
    max_depth: int = MAX_DEPTH
    max_aliases: int = MAX_ALIASES
    max_nodes: int = MAX_NODES


def read_bounded(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The file's text: a regular file (never a FIFO, device or socket), at most `max_bytes`, UTF-8."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise BoundedYamlError(f"cannot read: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise BoundedYamlError("not a regular file (a FIFO, device or socket is never read)")
    if info.st_size > max_bytes:
        raise BoundedYamlError(f"larger than the limit of {max_bytes:,} bytes ({info.st_size:,} bytes)")
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise BoundedYamlError(f"cannot read: {error.strerror}") from None
    if len(data) > max_bytes:
        raise BoundedYamlError(f"larger than the limit of {max_bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BoundedYamlError(f"not UTF-8 (byte {error.start} is {data[error.start]:#04x})") from None


def check_events(text: str, limits: Limits = Limits()) -> None:
    """Depth, aliases, expanded size and integer literals, from the event stream alone."""
    aliases = total = 0
    anchored: dict[str, int] = {}
    frames: list[list[Any]] = []  # [anchor, size of the subtree so far] of each open collection

    def grow(nodes: int) -> None:
        nonlocal total
        total += nodes
        if total > limits.max_nodes:
            raise BoundedYamlError(f"more than {limits.max_nodes:,} nodes with aliases expanded (the limit)")
        if frames:
            frames[-1][1] += nodes

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(frames) >= limits.max_depth:
                raise BoundedYamlError(f"nested deeper than {limits.max_depth} levels (the limit) at line {line}")
            grow(1)
            frames.append([event.anchor, 1])
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = frames.pop()
            if anchor is not None:
                anchored[anchor] = size
            if frames:
                frames[-1][1] += size
        elif isinstance(event, yaml.ScalarEvent):
            value = event.value
            if event.style is None and DIGITS.match(value) and len(value.strip("+-").replace("_", "")) > \
                    MAX_INT_DIGITS:
                raise BoundedYamlError(f"integer of {len(value):,} digits at line {line} "
                                       f"(the limit is {MAX_INT_DIGITS})")
            if event.anchor is not None:
                anchored[event.anchor] = 1
            grow(1)
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > limits.max_aliases:
                raise BoundedYamlError(f"more than {limits.max_aliases} aliases (the limit) at line {line}")
            grow(anchored.get(event.anchor or "", 1))


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping naming the same key twice (YAML says keys are unique;
    PyYAML keeps the last one silently, so a scenario could say two things and mean one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # an unhashable key: the base class reports it
            if duplicate:
                raise BoundedYamlError(f"duplicate key {key!r} at line {key_node.start_mark.line + 1}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def check_values(document: Any) -> None:
    """No control characters in strings, no integer beyond 64 bits (iteratively: depth is bounded
    already, but a walk that cannot recurse cannot fail that way)."""
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            match = CONTROL.search(value)
            if match:
                raise BoundedYamlError(f"control character {match.group()!r} in the string {value[:40]!r}")
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if not -MAX_INT - 1 <= value <= MAX_INT:
                raise BoundedYamlError(f"integer {str(value)[:24]}… does not fit in 64 bits (the limit)")
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def load_bounded(path: Path, limits: Limits = Limits()) -> Any:
    """The YAML document of `path`, or BoundedYamlError / yaml.YAMLError saying why not."""
    text = read_bounded(path, limits.max_bytes)
    check_events(text, limits)
    document = yaml.load(text, Loader=_UniqueKeyLoader)
    check_values(document)
    return document
