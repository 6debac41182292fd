"""Record sets for the reporting tests, built here, with the damage real files get.

The set is small enough to check by hand (`EXPECTED` below is counted from it), yet touches every
part of summary.json: several targets, releases and mutants, each finding kind, a run with two
findings, counterexamples of different lengths for one signature, a mutant never detected, a
record carrying HTML and script in every free-text field, and lines that are truncated, not JSON,
or break the schema in each way `isrcheck.contract.records.schema` names.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

Record = dict[str, Any]
XSS = "<script>alert(1)</script>"


def make_record(n: int, **overrides: Any) -> Record:
    """A passing run; keyword arguments replace fields."""
    record: Record = {
        "schema": "isrcheck.run/1",
        "run_id": f"c1-{n:04d}",
        "campaign_id": "c1",
        "started_at": f"2026-11-21T19:{n // 60:02d}:{n % 60:02d}.000Z",
        "seed": 1000 + n,
        "adapter": "reference",
        "target": "reference",
        "release": "4.1",
        "mutant": None,
        "level": "controller",
        "differential": True,
        "steps": 10 + n,
        "duration_s": 0.01 * (n + 1),
        "outcome": "pass",
        "findings": [],
        "counterexample": None,
        "replay": None,
    }
    record.update(overrides)
    return record


def finding(kind: str, operation: str, prop: str | None = None, field: str | None = None,
            codes: tuple[str, ...] = (), step: int = 3, message: str = "it broke",
            evidence: Any = None) -> Record:
    middle = prop if kind == "violation" else field
    signature = ":".join((kind, operation, middle or "", ",".join(sorted(set(codes)))))
    return {"kind": kind, "signature": signature, "operation": operation, "property": prop,
            "field": field, "codes": list(codes), "step": step, "message": message,
            "evidence": {"isr": [1, 2, 3]} if evidence is None else evidence}


def counterexample(length: int, diverging: bool = False, op: str = "alter_partition") -> Record:
    steps = [{"index": 1, "op": "create_topic", "args": {"topic": "t0", "assignment": [[1, 2, 3]]},
              "src": "admin", "dst": "controller", "reference": {"error": "NONE"}, "target": {"error": "NONE"}}]
    actors = [("broker 1", "controller"), ("clock", "controller"), ("network", "broker 2"),
              ("broker 3", "broker 3")]
    for index in range(2, length + 1):
        src, dst = actors[index % len(actors)]
        name = op if index == length else {"clock": "advance_clock", "network": "deliver"}.get(src, "heartbeat")
        steps.append({"index": index, "op": name, "args": {"broker": 1}, "src": src, "dst": dst,
                      "reference": {"error": "NONE"}, "target": {"error": "NONE"}})
    if diverging:
        steps[-1]["target"] = {"error": "INELIGIBLE_REPLICA", "isr": [1, 2]}
    return {"length": length, "diverging_step": length, "steps": steps}


def replay(record: Record) -> str:
    mutant = f" --mutant {record['mutant']}" if record["mutant"] else ""
    return (f"isrcheck run --adapter {record['adapter']}{mutant} --kafka {record['release']} "
            f"--seed {record['seed']} --examples 1")


def failing(n: int, findings: list[Record], cx: Record | None, **overrides: Any) -> Record:
    record = make_record(n, outcome="finding", findings=findings, counterexample=cx, **overrides)
    record["replay"] = replay(record)
    return record


ELIG = ("violation", "alter_partition", "P-ELIG")


CONTROLLER_PROPERTIES = ["P-ELIG", "P-LEAD", "LeaderInIsr"]
SHRUNK_MESSAGE = "AlterPartition accepted ISR [1, 2] although broker 2 was fenced"


def valid_records() -> list[Record]:
    """22 valid runs; see EXPECTED."""
    b02 = {"target": "reference+B02", "mutant": "B02", "mutant_title": "controller accepts a fenced broker",
           "mutant_ticket": "KAFKA-13916 / KIP-841", "properties": CONTROLLER_PROPERTIES,
           "coverage": ["alter_partition:NONE", "create_topic:NONE", "fence_broker"]}
    wire = {"adapter": "kafka-wire", "target": "kafka-wire@127.0.0.1:9093"}
    # 6 passes on reference 4.1, by isrcheck 0.1.0 at two commits, with coverage of their own
    records = [make_record(n, properties=CONTROLLER_PROPERTIES, isrcheck_version="0.1.0",
                           commit="abc123" if n < 3 else "def456",
                           coverage=["alter_partition:NONE", "alter_partition:INELIGIBLE_REPLICA"][: 1 + n % 2])
               for n in range(6)]
    records += [make_record(6, release="3.5", **b02)]  # B02 not yet detected
    records += [
        failing(7, [finding(*ELIG, step=5)], counterexample(6), release="3.5", **b02),
        failing(8, [finding(*ELIG, step=12, message="ISR [1, 2, 3] at step 12 of the unshrunk run")],
                {**counterexample(3), "findings": [finding(*ELIG, step=3, message=SHRUNK_MESSAGE)]}, **b02),
        failing(9, [finding(*ELIG, step=4), finding("violation", "alter_partition", "P-ACK", step=6)],
                counterexample(3), **b02),
    ]
    records += [
        failing(10, [finding("divergence", "alter_partition", field="error",
                             codes=("INELIGIBLE_REPLICA", "NONE"), message="error differs")],
                counterexample(4, diverging=True), release="3.7", **wire),
        make_record(11, release="3.7", duration_s=2.5, **wire),
        make_record(12, outcome="timeout", release="3.7", findings=[finding("timeout", "heartbeat", step=7)],
                    counterexample=None, replay=None, **wire),
        make_record(13, outcome="crash", release="4.0", findings=[finding("crash", "produce", step=9)],
                    counterexample=None, replay=None, **wire),
        make_record(14, outcome="error", findings=[finding("error", "deliver", message="KeyError: 'p'")]),
        make_record(15, outcome="skipped", steps=0, duration_s=0, skip_reason="needs >=3.5", release="3.3"),
    ]
    n1 = {"target": "reference+N1", "mutant": "N1", "negative_control": True}
    records += [make_record(n, **n1, release="4.0") for n in (16, 17, 18)]
    records += [
        make_record(19, target="reference+N1", mutant="N1", negative_control=True, release="4.0", outcome="error",
                    findings=[finding("error", "deliver", message="KeyError: 'p'")]),
    ]
    # a record whose every free-text field carries markup, and a target name that does too
    xss_cx = counterexample(2, diverging=True, op=XSS)
    xss_cx["steps"][0]["src"] = "<img src=x onerror=alert(3)>"
    records += [
        failing(20, [finding("violation", "produce", "P-ACK", message=XSS,
                             evidence={"note": "</script><script>alert(2)</script>"})],
                xss_cx, target="ref+<b>bold</b>", release="4.1"),
        make_record(21, release="3.5", duration_s=12.75, steps=400),
    ]
    return records


# what the fixture adds up to; tests compare summaries against these numbers
EXPECTED = {
    "runs": 22,
    "findings": 10,
    "runs_with_findings": 9,
    "signatures": 7,
    "corrupt_lines": 17,
    "targets": 5,
    "releases": 5,
    # mutant:B02 (P-ELIG, P-ACK in runs 7-9); the wire divergence; its timeout; its crash; the two
    # engine errors at `deliver` (one bug of isrcheck); the P-ACK violation on the XSS target
    "bugs": 6,
}


def corrupt_lines() -> list[tuple[str, str]]:
    """(line, reason) pairs, one per way a line can be skipped."""
    good = make_record(90)

    def variant(**changes: Any) -> str:
        record = copy.deepcopy(good)
        for key, value in changes.items():
            if value is _DROP:
                record.pop(key)
            else:
                record[key] = value
        return json.dumps(record)

    full = json.dumps(failing(91, [finding(*ELIG)], counterexample(3)))
    bad_finding = failing(92, [finding(*ELIG), finding(*ELIG)], counterexample(3))
    bad_finding["findings"][1]["codes"] = ["NONE", 5]
    bad_step = failing(93, [finding(*ELIG)], counterexample(3))
    del bad_step["counterexample"]["steps"][1]["src"]
    return [
        (full[: len(full) // 2], "not valid JSON"),
        ("this is not json", "not valid JSON"),
        ("", "empty line"),
        ("[1, 2]", "not a JSON object"),
        (variant(target=_DROP), "target: missing"),
        (variant(steps="12"), "steps: expected integer, got string"),
        (variant(run_id=12), "run_id: expected string, got integer"),
        (variant(mutant=_DROP), "mutant: missing"),
        (variant(schema="isrcheck.run/2"), 'schema: expected "isrcheck.run/1", got "isrcheck.run/2"'),
        (json.dumps(bad_finding), "findings[1].codes[1]: expected string, got integer"),
        (json.dumps(bad_step), "counterexample.steps[1].src: missing"),
        (variant(duration_s=1).replace('"duration_s": 1', '"duration_s": 1e400'),
         "duration_s: expected a finite number"),
        (json.dumps(good) + json.dumps(good), "not valid JSON"),
        (variant(seed=1).replace('"seed": 1', '"seed": 1.0'), "seed: expected integer, got number"),
        (variant(counterexample=[1]), "counterexample: expected object or null, got array"),
        (variant(findings=["oops"]), "findings[0]: expected object, got string"),
        (variant(skip_reason=5), "skip_reason: expected string or null, got integer"),
    ]


_DROP = object()


def write_fixture(directory: Path) -> list[Path]:
    """Two record files as two workers leave them; the second ends in a truncated line."""
    directory.mkdir(parents=True, exist_ok=True)
    records = valid_records()
    truncated, *others = [line for line, _ in corrupt_lines()]
    first = directory / "worker-0.jsonl"
    second = directory / "nested" / "worker-1.jsonl"
    second.parent.mkdir(exist_ok=True)
    # worker 0: half the records with corrupt lines between them, then the rest; CRLF endings
    lines0: list[str] = []
    for index, record in enumerate(records[:11]):
        lines0 += [json.dumps(record), others[index]]
    lines0 += others[11:]
    first.write_bytes(("\r\n".join(lines0) + "\r\n").encode())
    # worker 1: a byte-order mark, the other records (one with a duplicate key, the last value
    # counts), and a truncated last line with no newline
    lines1 = [json.dumps(r) for r in records[11:]]
    lines1[0] = lines1[0].replace('"steps": ', '"steps": "dup", "steps": ', 1)
    second.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines1) + "\n" + truncated).encode())
    return [first, second]
