"""Hostile inputs, built on demand (nothing large is committed): scenario files and record files
that once crashed, hung or fooled isrcheck (issue 15), each with the kind of input it is and a
fragment of the one-line refusal expected. Used by the tests and by bench/reliability.py."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from isrcheck.contract.operations.findings import Finding

GOOD_STEPS = "steps:\n  - register_broker: {broker: 1}\n"


@dataclass(frozen=True)
class Hostile:
    kind: str
    path: Path
    expect: str
    """A fragment of the error a scenario loader must give (scenario corpus only)."""


def _write(directory: Path, name: str, data: bytes | str) -> Path:
    path = directory / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def billion_laughs(levels: int, fan_out: int) -> str:
    lines = ["name: lol", "lol0: &lol0 [lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*lol{level - 1}"] * fan_out)
        lines.append(f"lol{level}: &lol{level} [{refs}]")
    return "\n".join(lines) + "\n" + GOOD_STEPS


def scenario_corpus(directory: Path) -> list[Hostile]:
    directory.mkdir(parents=True, exist_ok=True)
    w: Callable[[str, bytes | str], Path] = lambda name, data: _write(directory, name, data)  # noqa: E731
    fifo = directory / "fifo.yaml"
    if not fifo.exists():
        os.mkfifo(fifo)
    return [
        Hostile("binary", w("binary.yaml", bytes(range(256)) * 4), "not UTF-8"),
        Hostile("invalid UTF-8 in a name", w("latin1.yaml", b"name: caf\xe9\n" + GOOD_STEPS.encode()), "not UTF-8"),
        Hostile("UTF-16", w("utf16.yaml", ("name: x\n" + GOOD_STEPS).encode("utf-16")), "not UTF-8"),
        Hostile("10,000-deep sequences", w("deep_seq.yaml", "name: x\nsteps: " + "[" * 10_000 + "]" * 10_000),
                "nested deeper than"),
        Hostile("10,000-deep mappings", w("deep_map.yaml", "name: x\nsteps: " + "{a: " * 10_000 + "1" + "}" * 10_000),
                "nested deeper than"),
        Hostile("5,000-digit integer", w("bigint.yaml", "name: x\nbrokers: [" + "9" * 5000 + "]\n" + GOOD_STEPS),
                "integer of 5,000 digits"),
        Hostile("integer beyond 64 bits", w("int65.yaml", "name: x\nbrokers: [36893488147419103232]\n" + GOOD_STEPS),
                "does not fit in 64 bits"),
        Hostile("billion laughs (9 x 9 aliases)", w("laughs.yaml", billion_laughs(9, 9)), "aliases"),
        Hostile("alias expansion (6 x 10 aliases)", w("laughs6.yaml", billion_laughs(6, 10)), "nodes with aliases"),
        Hostile("/dev/zero", Path("/dev/zero"), "not a regular file"),
        Hostile("FIFO", fifo, "not a regular file"),
        Hostile("2 MiB file", w("huge.yaml", "name: x\n" + GOOD_STEPS + ("#" * 1023 + "\n") * 2048),
                "larger than the limit"),
        Hostile("duplicate top-level key", w("dup_top.yaml", "name: x\nname: y\n" + GOOD_STEPS),
                "duplicate key 'name'"),
        Hostile("duplicate argument",
                w("dup_arg.yaml", "name: x\nsteps:\n  - register_broker: {broker: 1, broker: 2}\n"),
                "duplicate key 'broker'"),
        Hostile("NUL in a topic name", w("nul_topic.yaml", 'name: x\nsteps:\n  - create_topic: {topic: "t\\0", '
                                          "assignment: [[1]]}\n"), "control character"),
        Hostile("raw NUL byte", w("nul_raw.yaml", b"name: x\x00\n" + GOOD_STEPS.encode()), "not valid YAML"),
        Hostile("escape in a scenario name", w("esc_name.yaml", 'name: "\\e[2J"\n' + GOOD_STEPS), "control character"),
        Hostile("empty file", w("empty.yaml", ""), "top level must be"),
        Hostile("truncated flow", w("truncated.yaml", "name: x\nsteps: [{register_broker: {broker: 1"),
                "not valid YAML"),
        Hostile("a Python object tag", w("tag.yaml", "name: !!python/object/apply:os.system [true]\n" + GOOD_STEPS),
                "not valid YAML"),
    ]


def record_line(**overrides: object) -> dict[str, object]:
    """A valid run record (docs/records.md), changed by `overrides`."""
    record: dict[str, object] = {
        "schema": "isrcheck.run/1", "run_id": "c0ffee00-w0-000001", "campaign_id": "c0ffee00",
        "started_at": "2026-01-01T00:00:00.000Z", "seed": 1, "adapter": "reference", "target": "reference",
        "release": "4.1", "mutant": None, "negative_control": None, "level": "controller", "differential": True,
        "steps": 3, "duration_s": 0.01, "outcome": "pass", "findings": [], "counterexample": None, "replay": None,
    }
    record.update(overrides)
    return record


def record_corpus(directory: Path) -> list[Hostile]:
    """Record files a summary must count as corrupt, skip or read; `expect` names the kind of outcome
    both summaries must agree on ('valid', 'corrupt')."""
    directory.mkdir(parents=True, exist_ok=True)
    good = json.dumps(record_line(), separators=(",", ":"))
    violation = Finding("violation", "alter_partition", 1, "ISR grew past an ineligible broker", property="P-ELIG")
    finding = json.dumps(record_line(run_id="c0ffee00-w0-000002", outcome="finding", findings=[violation.to_json()]),
                         separators=(",", ":"))
    w: Callable[[str, bytes | str], Path] = lambda name, data: _write(directory, name, data)  # noqa: E731
    deep = "[" * 100_000 + "]" * 100_000
    return [
        Hostile("valid records", w("valid.jsonl", good + "\n" + finding + "\n"), "valid"),
        Hostile("truncated last line", w("truncated.jsonl", good + "\n" + good[: len(good) // 2]), "corrupt"),
        Hostile("100,000-deep array", w("deep_array.jsonl", deep + "\n"), "corrupt"),
        Hostile("100,000-deep in a field", w("deep_field.jsonl", good[:-1] + ',"x":' + deep + "}\n"), "corrupt"),
        Hostile("invalid UTF-8", w("latin1.jsonl", good.replace("reference", "r\xe9f").encode("latin-1") + b"\n"),
                "corrupt"),
        Hostile("binary", w("binary.jsonl", bytes(range(256)) * 8), "corrupt"),
        Hostile("NUL bytes", w("nul.jsonl", b"\x00" * 1000 + b"\n"), "corrupt"),
        Hostile("a 20 MB line", w("huge_line.jsonl", json.dumps(record_line(replay="x" * 20_000_000)) + "\n"),
                "corrupt"),
        Hostile("5,000-digit number", w("bigint.jsonl", good.replace('"seed":1', '"seed":' + "9" * 5000) + "\n"),
                "corrupt"),
        Hostile("NaN", w("nan.jsonl", good.replace('"duration_s":0.01', '"duration_s":NaN') + "\n"), "corrupt"),
        Hostile("duplicate keys (the last counts)", w("dup.jsonl", good[:-1] + ',"outcome":"error"}\n'), "valid"),
        Hostile("empty lines", w("empty.jsonl", "\n\n\n"), "corrupt"),
        Hostile("a JSON array", w("array.jsonl", "[1,2,3]\n"), "corrupt"),
        Hostile("CRLF and BOM", w("crlf.jsonl", "\ufeff" + good + "\r\n" + good.replace("000001", "000003") + "\r\n"),
                "valid"),
    ]
