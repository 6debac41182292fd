"""The run record, `isrcheck.run/1`: defined once, here, as data (`RUN`) and one function.

The writer (`isrcheck.contract.records.writer`) refuses a record whose keys are not these, the Spark
schema (`isrcheck.reports.spark_schema`) is derived from them, and docs/records.md is checked
against them by a test. `parse_line` applies the contract to one line and names the first rule a
line breaks. Both summaries use it — the plain-Python reader (`records_io`) for every line, the
Spark job (`spark_rules`) for every line it cannot settle by itself — so their counts and reasons
agree by construction.

JSON types are named as a person reads them: null, boolean, integer, number, string, array,
object. "integer" means a whole number that fits in 64 bits (what Spark stores); a larger one or a
number written with a fraction or exponent (`1.0`, `1e3`) is a "number".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

SCHEMA_ID = "isrcheck.run/1"

NOT_JSON = "not valid JSON"
NOT_OBJECT = "not a JSON object"
EMPTY_LINE = "empty line"
MAX_LINE_BYTES = 1_000_000
"""A record line longer than this is skipped unread. A real record is a few KiB (a long cluster
counterexample, some tens); a 15 MB one once became a 127 MB HTML page and a Spark OutOfMemoryError."""
MAX_DEPTH = 64
"""Arrays and objects nested deeper than this: a record nests six levels at most; 10,000 levels
made Python's JSON decoder raise RecursionError."""
TOO_LONG = f"line longer than {MAX_LINE_BYTES:,} bytes"
NOT_UTF8 = "not valid UTF-8"
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"

TYPE_ORDER = ("null", "boolean", "integer", "number", "string", "array", "object")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class Field:
    """One key of an object: which JSON types it may hold and what must hold inside it."""

    name: str
    types: frozenset[str]
    optional: bool = False  # the key may be absent (otherwise "missing" even when nullable)
    shape: Shape | None = None  # rules for the object it holds
    items: Shape | str | None = None  # rules for each array element: a Shape, or one JSON type
    equals: str | None = None  # the only string value accepted
    finite: bool = False  # a number that is not ±Infinity
    json_text: bool = False  # free-form JSON: Spark keeps it as JSON text, not as typed columns

    @property
    def expected(self) -> str:
        """Accepted types as the reason text names them: "string or null"."""
        names = [t for t in TYPE_ORDER if t in self.types and t != "null"]
        return " or ".join([*names, "null"] if "null" in self.types else names)

    def accepts(self, got: str) -> bool:
        """Whether a value of JSON type `got` may stand here; a "number" field takes integers too."""
        return got in self.types or (got == "integer" and "number" in self.types)


@dataclass(frozen=True)
class Shape:
    """An object's fields, checked in this order; keys not listed are allowed and ignored."""

    fields: tuple[Field, ...] = field(default_factory=tuple)


def _t(*names: str) -> frozenset[str]:
    return frozenset(names)


STEP = Shape((
    Field("index", _t("integer")),
    Field("op", _t("string")),
    Field("src", _t("string")),
    Field("dst", _t("string")),
))

FINDING = Shape((
    Field("kind", _t("string")),
    Field("signature", _t("string")),
    Field("operation", _t("string")),
    Field("property", _t("string", "null")),
    Field("field", _t("string", "null")),
    Field("codes", _t("array"), items="string"),
    Field("step", _t("integer")),
    Field("message", _t("string")),
    Field("evidence", _t(*TYPE_ORDER), optional=True, json_text=True),
    Field("known", _t("string", "null"), optional=True),
))

COUNTEREXAMPLE = Shape((
    Field("length", _t("integer")),
    Field("diverging_step", _t("integer", "null")),
    Field("steps", _t("array"), items=STEP),
    # the findings of the shrunk interleaving itself: their messages and steps are about `steps`
    Field("findings", _t("array"), items=FINDING, optional=True),
))

RUN = Shape((
    Field("schema", _t("string"), equals=SCHEMA_ID),
    Field("run_id", _t("string")),
    Field("campaign_id", _t("string")),
    Field("started_at", _t("string")),
    Field("seed", _t("integer")),
    Field("adapter", _t("string")),
    Field("target", _t("string")),
    Field("release", _t("string")),
    Field("mutant", _t("string", "null")),
    Field("negative_control", _t("boolean", "null"), optional=True),
    Field("mutant_title", _t("string", "null"), optional=True),
    Field("mutant_ticket", _t("string", "null"), optional=True),
    Field("level", _t("string")),
    Field("differential", _t("boolean")),
    Field("settings", _t("object", "null"), optional=True, json_text=True),
    Field("steps", _t("integer")),
    Field("duration_s", _t("number"), finite=True),
    Field("outcome", _t("string")),
    Field("skip_reason", _t("string", "null"), optional=True),
    Field("findings", _t("array"), items=FINDING),
    Field("counterexample", _t("object", "null"), shape=COUNTEREXAMPLE, json_text=True),
    Field("replay", _t("string", "null")),
    Field("isrcheck_version", _t("string", "null"), optional=True),
    Field("commit", _t("string", "null"), optional=True),
    Field("properties", _t("array"), items="string", optional=True),
    Field("unknown", _t("array"), items="string", optional=True),
    Field("coverage", _t("array"), items="string", optional=True),
    Field("cut_short", _t("string", "null"), optional=True),
    Field("history", _t("object", "null"), optional=True, json_text=True),
))


def missing(path: str) -> str:
    return f"{path}: missing"


def wrong_type(path: str, expected: str, got: str) -> str:
    return f"{path}: expected {expected}, got {got}"


def wrong_value(path: str, expected: str, got: str) -> str:
    """Values are cut to 40 characters: the reason is one line, not a copy of the record."""
    return f'{path}: expected "{expected}", got "{got[:40]}"'


def not_finite(path: str) -> str:
    return f"{path}: expected a finite number"


def json_type(value: object) -> str:
    """The JSON type name of a value decoded by `json.loads`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer" if _INT64_MIN <= value <= _INT64_MAX else "number"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def check_object(obj: Mapping[str, object], shape: Shape, prefix: str = "") -> str | None:
    """The first rule `obj` breaks, as a reason, or None when it keeps them all."""
    for rule in shape.fields:
        path = prefix + rule.name
        if rule.name not in obj:
            if rule.optional:
                continue
            return missing(path)
        reason = check_value(obj[rule.name], rule, path)
        if reason is not None:
            return reason
    return None


def check_value(value: object, rule: Field, path: str) -> str | None:
    got = json_type(value)
    if not rule.accepts(got):
        return wrong_type(path, rule.expected, got)
    if rule.equals is not None and value != rule.equals:
        return wrong_value(path, rule.equals, str(value))
    if rule.finite and isinstance(value, float) and not math.isfinite(value):
        return not_finite(path)
    if rule.shape is not None and isinstance(value, dict):
        return check_object(value, rule.shape, path + ".")
    if rule.items is not None and isinstance(value, list):
        for index, item in enumerate(value):
            reason = check_item(item, rule.items, f"{path}[{index}]")
            if reason is not None:
                return reason
    return None


def check_item(item: object, items: Shape | str, path: str) -> str | None:
    got = json_type(item)
    if isinstance(items, str):
        return None if got == items else wrong_type(path, items, got)
    if got != "object":
        return wrong_type(path, "object", got)
    assert isinstance(item, dict)
    return check_object(item, items, path + ".")


_JSON_SPACE = " \t\r\n"


def _reject_constant(name: str) -> object:
    # NaN and Infinity are not JSON; Python accepts them by default, Spark does not
    raise ValueError(name)


_decode = json.JSONDecoder(parse_constant=_reject_constant).decode


def parse_line(line: str) -> tuple[dict[str, object] | None, str | None]:
    """One line (without its newline) to (record, None) or (None, reason): the whole contract.

    A reader of bytes checks, in this order, TOO_LONG, EMPTY_LINE and NOT_UTF8 before it has a
    `str` to give here (`records_io`, `spark_rules`); the first two are checked again here for
    callers that start from text."""
    if len(line) > MAX_LINE_BYTES or (4 * len(line) > MAX_LINE_BYTES
                                      and len(line.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES):
        return None, TOO_LONG
    if not line.strip(_JSON_SPACE):
        return None, EMPTY_LINE
    if nested_deeper_than(line, MAX_DEPTH):
        return None, TOO_DEEP
    try:
        value = _decode(line)
    except (ValueError, RecursionError):
        return None, NOT_JSON
    if ("\\ud" in line or "\\uD" in line) and _has_lone_surrogate(value):
        return None, NOT_JSON
    if not isinstance(value, dict):
        return None, NOT_OBJECT
    reason = check_object(value, RUN)
    if reason is not None:
        return None, reason
    return value, None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def opening_brackets(line: str) -> int:
    """`[` and `{` anywhere in the line, strings included: fewer than MAX_DEPTH cannot nest that deep
    (the Spark rules count the same way to decide which lines `parse_line` must see)."""
    return line.count("[") + line.count("{")


def nested_deeper_than(line: str, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` deep, strings aside, without decoding
    (whatever the line is, valid JSON or not: the check must not itself recurse)."""
    if opening_brackets(line) <= limit:
        return False
    depth = 0
    for bracket in _BRACKET.finditer(_JSON_STRING.sub("", line)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > limit:
            return True
    return False


def _has_lone_surrogate(value: object) -> bool:
    """`"\\ud800"` alone decodes in Python but is not Unicode text (Spark rejects the line)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
