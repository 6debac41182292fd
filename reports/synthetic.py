"""Synthetic `isrcheck.run/1` records with a realistic mix, for the benchmark and demo reports.

The engine that writes real records is built in parallel with the reporting layer, so the
summaries are measured on records made here: mostly passes, findings spread over about thirty
signatures, several targets, releases and mutants (some never detected), shrunk counterexamples
with broker / controller / admin / clock / network actors, and a few truncated lines, as a killed
campaign leaves them. Everything derives from one seed, so two calls write the same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

RELEASES = ("3.3", "3.5", "3.7", "3.8", "3.9", "4.0", "4.1")


@dataclass(frozen=True)
class SignatureShape:
    """The parts a signature is made of (see docs/records.md, "Signature")."""

    kind: str
    operation: str
    prop: str | None
    field: str | None
    codes: tuple[str, ...]

    @property
    def signature(self) -> str:
        middle = self.prop if self.kind == "violation" else self.field
        return ":".join((self.kind, self.operation, middle or "", ",".join(sorted(set(self.codes)))))


def _shapes() -> tuple[SignatureShape, ...]:
    violation_props = ("P-ACK", "P-HWV", "P-ELIG", "P-LOG", "P-HWM", "P-1IF", "P-LEAD",
                       "LeaderInIsr", "P-LIVE")
    shapes = [SignatureShape("violation", op, prop, None, ())
              for op in ("alter_partition", "produce", "heal") for prop in violation_props]
    divergences = [
        ("alter_partition", "error", ("INELIGIBLE_REPLICA", "NONE")),
        ("alter_partition", "error", ("FENCED_LEADER_EPOCH", "NONE")),
        ("alter_partition", "isr", ()),
        ("alter_partition", "partition_epoch", ()),
        ("heartbeat", "is_fenced", ()),
        ("register_broker", "error", ("DUPLICATE_BROKER_REGISTRATION", "NONE")),
        ("elect_leaders", "errors", ("ELECTION_NOT_NEEDED", "NONE")),
        ("check_partition", "partition.leader", ()),
    ]
    shapes += [SignatureShape("divergence", op, None, field, codes) for op, field, codes in divergences]
    shapes += [SignatureShape("timeout", "heartbeat", None, None, ()),
               SignatureShape("crash", "alter_partition", None, None, ())]
    return tuple(shapes)


SHAPES = _shapes()
ERROR_SHAPE = SignatureShape("error", "deliver", None, None, ())

# mutant -> (indices into SHAPES it trips, probability that one run of it finds something);
# N-mutants are equivalent or too weak for the generated workload and are never detected.
MUTANTS: dict[str, tuple[tuple[int, ...], float]] = {
    "B01": ((0, 2, 27), 0.30), "B02": ((2, 27), 0.45), "B03": ((8, 28), 0.05),
    "B06": ((11, 29), 0.12), "B07": ((1, 10), 0.08), "B08": ((1, 19), 0.02),
    "B09": ((3, 12, 30), 0.10), "B10": ((20, 3), 0.06), "B15": ((0, 4, 13), 0.04),
    "B17": ((5, 14), 0.03), "B22": ((17, 33, 36), 0.01), "B27": ((22,), 0.005),
    "B30": ((6, 24, 31), 0.07), "D7": ((34,), 0.02), "N1": ((), 0.0), "N2": ((), 0.0),
}
# the unmutated targets: the reference never fails; a Kafka broker shows a few rare divergences.
KAFKA_WIRE_SHAPES = (27, 28, 30, 32, 35)
ACTORS_BROKERS = ("broker 1", "broker 2", "broker 3")


def _counterexample(rng: random.Random, shape: SignatureShape) -> dict[str, object]:
    length = rng.randint(2, 11)
    steps: list[dict[str, object]] = [{
        "index": 1, "op": "create_topic", "args": {"topic": "t0", "assignment": [[1, 2, 3]]},
        "src": "admin", "dst": "controller", "reference": {"error": "NONE"}, "target": {"error": "NONE"},
    }]
    for index in range(2, length + 1):
        broker = rng.choice(ACTORS_BROKERS)
        broker_id = int(broker[-1])
        kind = rng.random()
        args: dict[str, object]
        if index == length:
            op, args, src, dst = shape.operation, {"broker": broker_id, "topic": "t0"}, broker, "controller"
        elif kind < 0.35:
            op, args, src, dst = "heartbeat", {"broker": broker_id}, broker, "controller"
        elif kind < 0.55:
            args = {"version": 3, "broker": 1, "topic": "t0", "isr": [1, broker_id]}
            op, src, dst = "alter_partition", broker, "controller"
        elif kind < 0.7:
            op, args, src, dst = "advance_clock", {"ms": rng.choice((500, 9000))}, "clock", "controller"
        elif kind < 0.85:
            op, args, src, dst = "deliver", {"message": rng.randint(1, 9)}, "network", broker
        else:
            op, args, src, dst = "crash", {"broker": broker_id}, broker, broker
        result: dict[str, object] = {"error": "NONE"}
        steps.append({"index": index, "op": op, "args": args, "src": src, "dst": dst,
                      "reference": result, "target": dict(result)})
    last = steps[-1]
    if shape.kind == "divergence":
        last["reference"] = {"error": shape.codes[0] if shape.codes else "NONE", "isr": [1, 2]}
        last["target"] = {"error": shape.codes[-1] if shape.codes else "NONE", "isr": [1, 2, 3]}
    return {"length": length, "diverging_step": length, "steps": steps}


def _finding(rng: random.Random, shape: SignatureShape, steps: int) -> dict[str, object]:
    message = {
        "violation": f"{shape.prop} violated after {shape.operation}",
        "divergence": f"{shape.field} differs: reference and target disagree",
        "timeout": f"adapter call {shape.operation} passed its 5 s timeout",
        "crash": "target process exited with status 137",
        "error": "engine error: KeyError 'partition'",
    }[shape.kind]
    return {"kind": shape.kind, "signature": shape.signature, "operation": shape.operation,
            "property": shape.prop, "field": shape.field, "codes": list(shape.codes),
            "step": rng.randint(1, max(1, steps)), "message": message,
            "evidence": {"isr": [1, 2, 3], "broker": rng.randint(1, 3), "fenced": True}}


def generate_records(count: int, seed: int = 1) -> Iterator[dict[str, object]]:
    """Yield `count` run records in started_at order."""
    rng = random.Random(seed)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    mutant_ids = sorted(MUTANTS)
    for n in range(count):
        campaign = f"c{seed:02d}{n // 5000:05d}"
        started = start + timedelta(milliseconds=n * 350 + rng.randint(0, 300))
        release = rng.choice(RELEASES)
        pick = rng.random()
        mutant: str | None = None
        if pick < 0.6:
            mutant = rng.choice(mutant_ids)
            adapter, target = "reference", f"reference+{mutant}"
            shape_pool, probability = MUTANTS[mutant]
        elif pick < 0.85:
            adapter, target, shape_pool, probability = "reference", "reference", (), 0.0
        else:
            adapter, target = "kafka-wire", "kafka-wire@127.0.0.1:9093"
            shape_pool, probability = KAFKA_WIRE_SHAPES, 0.04
        steps = rng.randint(5, 200)
        duration = round(steps * rng.uniform(0.0004, 0.003) * (40 if adapter == "kafka-wire" else 1), 4)
        findings: list[dict[str, object]] = []
        first_shape: SignatureShape | None = None
        outcome = "pass"
        skip_reason = None
        roll = rng.random()
        if shape_pool and roll < probability:
            first_shape = SHAPES[rng.choice(shape_pool)]
            findings.append(_finding(rng, first_shape, steps))
            if rng.random() < 0.2:
                findings.append(_finding(rng, SHAPES[rng.choice(shape_pool)], steps))
            outcome = first_shape.kind if first_shape.kind in ("timeout", "crash") else "finding"
        elif roll > 0.9985:
            first_shape = ERROR_SHAPE
            findings.append(_finding(rng, ERROR_SHAPE, steps))
            outcome = "error"
        elif roll > 0.996:
            outcome, skip_reason, steps, duration = "skipped", "scenario needs release >=3.5", 0, 0.0
        counterexample = _counterexample(rng, first_shape) if first_shape else None
        seed_value = rng.randint(0, 2**31)
        mutant_flag = f" --mutant {mutant}" if mutant else ""
        record: dict[str, object] = {
            "schema": "isrcheck.run/1", "run_id": f"{campaign}-{n:07d}", "campaign_id": campaign,
            "started_at": started.strftime("%Y-%m-%dT%H:%M:%S.") + f"{started.microsecond // 1000:03d}Z",
            "seed": seed_value, "adapter": adapter, "target": target, "release": release,
            "mutant": mutant, "level": "controller", "differential": True, "steps": steps,
            "duration_s": duration, "outcome": outcome, "findings": findings,
            "counterexample": counterexample,
            "replay": (f"isrcheck run --adapter {adapter}{mutant_flag} --level controller "
                       f"--kafka {release} --seed {seed_value} --examples 1") if findings else None,
        }
        if skip_reason:
            record["skip_reason"] = skip_reason
        yield record


def write_records(directory: Path, count: int, files: int = 4, seed: int = 1,
                  truncated_every: int = 20_000) -> list[Path]:
    """Write `count` records round-robin into `files` JSONL files, as parallel workers would.

    Every `truncated_every`-th line is cut in half (a worker killed mid-write), so readers are
    measured with their corrupt-line path exercised. Returns the files written.
    """
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"worker-{i:02d}.jsonl" for i in range(files)]
    handles = [path.open("w", encoding="utf-8") for path in paths]
    try:
        for n, record in enumerate(generate_records(count, seed)):
            line = json.dumps(record, separators=(",", ":"))
            if truncated_every and n % truncated_every == truncated_every - 1:
                line = line[: len(line) // 2]
            handles[n % files].write(line + "\n")
    finally:
        for handle in handles:
            handle.close()
    return paths
