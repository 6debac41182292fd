"""The definitions `summary.json` is built from, shared by the Spark and the plain-Python summary.

Both summaries must produce the same file from the same records (a test and the benchmark compare
them), so every choice that is not plain counting lives here once: how findings map to matrix
columns, in which order things are listed, where histogram bins fall, how a percentile is
interpolated, how runs are cut into timeline buckets, and which findings count as detecting a
mutant.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

FORMAT = "isrcheck.summary/1"

CORRUPT_EXAMPLES = 5  # corrupt lines quoted with file:line, the first ones in input order
CORRUPT_REASONS = 10  # most frequent reasons listed with their counts
TIMELINE_BUCKETS = 60  # runs in started_at order are cut into at most this many equal groups
PERCENTILES = (0.5, 0.9)

OUTCOME_ORDER = ("pass", "known", "finding", "timeout", "crash", "error", "skipped")
PROPERTY_ORDER = ("P-ACK", "P-HWV", "P-ELIG", "P-LOG", "P-HWM", "P-1IF", "P-LEAD", "LeaderInIsr", "P-LIVE")
# findings that are not property violations get a pseudo-property column of their kind's name
KIND_COLUMNS = ("violation", "divergence", "timeout", "crash", "error")
# an `error` finding is a bug in isrcheck itself, so it never counts as detecting a mutant
NOT_DETECTING = "error"

# sums of seconds are taken on decimals with this many places, so that Spark and Python, which
# add floats in different orders, agree to the last digit
SECONDS_PLACES = 9
SECONDS_PRECISION = 28
_QUANTUM = Decimal(1).scaleb(-SECONDS_PLACES)


def matrix_column(kind: str, prop: str | None) -> str:
    """A violation lands in its property's column; any other finding in its kind's column."""
    if kind == "violation":
        return prop if prop is not None else "violation"
    return kind


# kinds of bug rows, in the order the report lists them: unexpected findings first
BUG_KINDS = ("new", "timeout", "crash", "mutant", "known", "error")


def bug_key(kind: str, mutant: str | None, adapter: str, level: str, operation: str, first_operation: str,
            known: str | None = None) -> str:
    """The root cause a finding is grouped under: one row per distinct bug.

    - an `error` finding is a bug in isrcheck itself, whatever ran: `error:<operation>`;
    - a run against a mutant found that mutant's bug, whatever signature it took this time (a
      B01 run may diverge on the error code, the ISR, the partition epoch or break P-ELIG first):
      `mutant:<id>`;
    - a timeout or crash of a target: `timeout:<adapter>:<operation>`;
    - any other divergence or violation is grouped by the implementation, the level and the
      operation of its run's *first* finding — where reference and target first parted; later
      findings of the run are its consequences: `new:<adapter>:<level>:<operation>`;
    - a divergence a known-divergence rule matched (the finding's `known`, docs/known-divergences.md)
      is Kafka's triaged behaviour, grouped by its rule: `known:<rule>`.
    """
    if kind == "error":
        return f"error:{operation}"
    if known is not None:
        return f"known:{known}"
    if mutant is not None:
        return f"mutant:{mutant}"
    if kind in ("timeout", "crash"):
        return f"{kind}:{adapter}:{operation}"
    return f"new:{adapter}:{level}:{first_operation}"


def bug_kind(key: str) -> str:
    return key.split(":", 1)[0]


def bug_sort_key(kind: str, findings: int, key: str) -> tuple[int, int, str]:
    return (BUG_KINDS.index(kind) if kind in BUG_KINDS else len(BUG_KINDS), -findings, key)


def column_order(columns: Iterable[str]) -> list[str]:
    """Known properties in catalogue order, then unknown ones by name, then the kind columns."""
    present = set(columns)
    known = [c for c in PROPERTY_ORDER if c in present]
    kinds = [c for c in KIND_COLUMNS if c in present]
    others = sorted(present - set(known) - set(kinds))
    return known + others + kinds


def outcome_order(outcomes: Iterable[str]) -> list[str]:
    present = set(outcomes)
    return [o for o in OUTCOME_ORDER if o in present] + sorted(present - set(OUTCOME_ORDER))


def release_key(release: str) -> tuple[int, tuple[int, ...], str]:
    """`3.9` before `3.10`: numeric parts compare as numbers; non-numeric releases go last."""
    parts = release.split(".")
    if all(p.isdigit() for p in parts):
        return (0, tuple(int(p) for p in parts), "")
    return (1, (), release)


def sorted_releases(releases: Iterable[str]) -> list[str]:
    return sorted(set(releases), key=release_key)


def _one_two_five(low_exp: int, high_exp: int) -> tuple[float, ...]:
    # float(f"{m}e{k}") rounds the decimal once, exactly as Spark reads the same literal
    return tuple(float(f"{m}e{k}") for k in range(low_exp, high_exp + 1) for m in (1, 2, 5))


# bin i holds values v with edges[i] <= v < edges[i+1]; the last bin is open
STEPS_EDGES: tuple[float, ...] = (0.0, *_one_two_five(0, 9))
DURATION_EDGES: tuple[float, ...] = (0.0, *_one_two_five(-3, 6))


def bin_index(value: float, edges: Sequence[float]) -> int:
    """How many edges are <= value, minus one (-1 for a value below the first edge)."""
    low, high = 0, len(edges)
    while low < high:
        mid = (low + high) // 2
        if edges[mid] <= value:
            low = mid + 1
        else:
            high = mid
    return low - 1


def histogram(counts: dict[int, int], edges: Sequence[float], integral: bool) -> list[dict[str, float | int | None]]:
    """Bins from the lowest to the highest one that holds a value, empty ones between included."""
    if not counts:
        return []
    bins = []
    for index in range(min(counts), max(counts) + 1):
        low = edges[index] if index >= 0 else None
        high = edges[index + 1] if 0 <= index + 1 < len(edges) else None
        bins.append({
            "lo": _edge(low, integral),
            "hi": _edge(high, integral),
            "count": counts.get(index, 0),
        })
    return bins


def _edge(edge: float | None, integral: bool) -> float | int | None:
    if edge is None:
        return None
    return int(edge) if integral else edge


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks, exactly as Spark's `percentile`."""
    position = (len(sorted_values) - 1) * fraction
    lower, higher = math.floor(position), math.ceil(position)
    low_value, high_value = float(sorted_values[lower]), float(sorted_values[higher])
    if lower == higher or low_value == high_value:
        return low_value
    return (higher - position) * low_value + (position - lower) * high_value


def bucket_of(rank: int, runs: int) -> int:
    """The timeline bucket of the run at 0-based `rank` among `runs` in started_at order."""
    return rank * min(TIMELINE_BUCKETS, runs) // runs


def seconds_decimal(value: float) -> Decimal | None:
    """A duration as Spark's `try_cast(duration_s AS DECIMAL(28, 9))` gives it (None on overflow)."""
    if not abs(value) < 10 ** (SECONDS_PRECISION - SECONDS_PLACES):
        return None
    return Decimal(repr(value)).quantize(_QUANTUM, rounding=ROUND_HALF_UP)


def seconds_total(total: Decimal | None) -> float:
    return float(round(total, 6)) if total is not None else 0.0
