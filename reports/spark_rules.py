"""Which lines Spark keeps, and why it skips the others — in the words of `isrcheck.records.schema`.

Spark's JSON reader is lenient where the contract is strict (a number read into a string column
becomes text, a missing key and a null look alike, text after a complete value is ignored), so
each line is parsed once into a VARIANT, which keeps JSON's own types, and the contract is checked
on it by Spark expressions derived from `isrcheck.records.schema.RUN` (`conforms`): every field's
JSON type, the schema id, the finite duration, and every finding, code and counterexample step
item by item. A line is kept exactly when `record_schema.parse_line` would keep it; no line goes
through Python on the way.

Python is asked only *why* a skipped line was skipped when the line as a whole does not say
(`line_reason`: too long, empty, not UTF-8, not JSON, not an object): `reason_of` is
`record_schema.parse_line` itself, run as a UDF over the skipped lines alone — a handful in a
million — so the two summaries cannot word a reason differently.
"""

from __future__ import annotations

import os
import sys

from isrcheck.reports import spark_schema
from pyspark import cloudpickle
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from isrcheck.records import schema as record_schema
from isrcheck.records.schema import (
    EMPTY_LINE,
    MAX_DEPTH,
    MAX_LINE_BYTES,
    NOT_JSON,
    NOT_OBJECT,
    NOT_UTF8,
    RUN,
    TOO_LONG,
    Field,
    Shape,
)

# a sentinel after the line: Spark's parser stops at the end of the first complete value, so a
# line is whole JSON only when the sentinel is the array's second and last element
_SENTINEL = "\u0001isrcheck-eol"
_SENTINEL_JSON = '"\\u0001isrcheck-eol"'

# the UDF's code travels with it, so executors need pyspark but not isrcheck installed
cloudpickle.register_pickle_by_value(record_schema)  # type: ignore[no-untyped-call]
# and runs under this interpreter in local mode (not whatever `python3` is first on PATH)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def wrap_line(line: Column) -> Column:
    """The line parsed as the first element of an array that ends in a sentinel; NULL if not JSON.

    Select it as a column of its own: `line_reason` refers to it several times, and Spark would
    parse the line once per reference if it were inlined.
    """
    within = F.when(F.octet_length(line) <= F.lit(MAX_LINE_BYTES), line)  # a longer one is never parsed
    return F.try_parse_json(F.concat(F.lit("["), within, F.lit("," + _SENTINEL_JSON + "]")))


def openings(text: Column) -> Column:
    """`[` and `{` in the text, strings included, as `record_schema.opening_brackets` counts them."""
    return F.length(text) - F.length(F.regexp_replace(text, F.lit("[\\[{]"), F.lit("")))


def line_reason(line: Column, wrapped: Column) -> tuple[Column, Column]:
    """(record as VARIANT, what is wrong with the line as a whole or NULL)."""
    whole = (F.try_variant_get(wrapped, "$[1]", "string") == F.lit(_SENTINEL)) & F.variant_get(
        wrapped, "$[2]", "variant").isNull()
    record = F.variant_get(wrapped, "$[0]", "variant")
    # \\z, not $: Java's $ also matches before a final U+2028, which Python does not treat as space
    # the order of records_io.read_line; a line that may nest too deep is left to the schema
    # check and to `reason_of` (NULL here): Spark's parser has its own, larger depth limit
    reason = (F.when(F.octet_length(line) > F.lit(MAX_LINE_BYTES), F.lit(TOO_LONG))
              .when(F.regexp_like(line, F.lit("^[ \\t\\r\\n]*\\z")), F.lit(EMPTY_LINE))
              .when(~F.is_valid_utf8(line), F.lit(NOT_UTF8))
              .when(openings(line) > F.lit(MAX_DEPTH), F.lit(None))
              .when(wrapped.isNull() | ~F.coalesce(whole, F.lit(False)), F.lit(NOT_JSON))
              .when(~F.regexp_like(line, F.lit("^[ \\t\\r\\n]*[{]")), F.lit(NOT_OBJECT)))
    return record, reason


# how `schema_of_variant` names a scalar of each JSON type: an "integer" (a whole number that
# fits in 64 bits) is BIGINT, any other number DECIMAL(p,s) or DOUBLE
_SCALAR_NAMES = {"boolean": ("BOOLEAN",), "integer": ("BIGINT",), "string": ("STRING",),
                 "number": ("DECIMAL", "DOUBLE", "FLOAT")}


def _scalar_name(value: Column) -> Column:
    """`schema_of_variant` cut to what tells scalar types apart (DECIMAL(p,s) → DECIMAL)."""
    return F.substring_index(F.schema_of_variant(value), "(", 1)


def _is_array(value: Column) -> Column:
    return F.try_variant_get(value, "$", "array<variant>").isNotNull()


def _is_object(value: Column) -> Column:
    # the cast to an empty struct reads no field: it only asks whether the value is an object
    return F.try_variant_get(value, "$", "struct<>").isNotNull()


def has_type(value: Column, types: frozenset[str]) -> Column:
    """Whether a present value (a VARIANT, not SQL NULL) is of one of the JSON `types` exactly
    (`Field.accepts` lets a "number" field hold an integer: the caller adds "integer")."""
    if types >= set(record_schema.TYPE_ORDER):
        return F.lit(True)
    tests = []
    if "null" in types:
        tests.append(F.is_variant_null(value))
    if "array" in types:
        tests.append(_is_array(value))
    if "object" in types:
        tests.append(_is_object(value))
    names = sorted({name for kind in types & set(_SCALAR_NAMES) for name in _SCALAR_NAMES[kind]})
    if names:
        tests.append(_scalar_name(value).isin(*names))
    result = tests[0]
    for test in tests[1:]:
        result = result | test
    return result


def _typed(rule: Field) -> str:
    """The Spark type a valid value of `rule` casts to exactly (a JSON null to SQL NULL)."""
    return spark_schema.spark_type(rule).simpleString()


def _strings_ok(value: Column, kind: str) -> Column:
    """An array of `kind` scalars and nothing else: its schema says the type (a null element
    hides in it, as in [] — `[null]` has the schema of `[]`), its cast says there is no null."""
    (token,) = _SCALAR_NAMES[kind]
    items = F.try_variant_get(value, "$", f"array<{_typed(Field('item', frozenset({kind})))}>")
    return (F.schema_of_variant(value).isin(f"ARRAY<{token}>", "ARRAY<VOID>")
            & (F.size(F.array_compact(items)) == F.size(items)))


def _item_ok(item: Column, items: Shape) -> Column:
    """`record_schema.check_item` for one element of an array of objects."""
    return _is_object(item) & conforms(item, items)


def _all(checks: list[Column]) -> Column:
    result = checks[0]
    for check in checks[1:]:
        result = result & check
    return result


def field_ok(value: Column, rule: Field) -> Column:
    """`record_schema.check_value` for one present field: its type, then what must hold inside."""
    accepted = rule.types | {"integer"} if "number" in rule.types else rule.types
    checks = [has_type(value, frozenset(accepted))]
    if rule.equals is not None:
        checks.append(F.try_variant_get(value, "$", "string") == F.lit(rule.equals))
    if rule.finite:
        checks.append(F.abs(F.try_variant_get(value, "$", "double")) < F.lit(float("inf")))
    if rule.shape is not None:
        checks.append(~_is_object(value) | conforms(value, rule.shape))
    if isinstance(rule.items, str):
        checks.append(_strings_ok(value, rule.items))
    if isinstance(rule.items, Shape):
        shape = rule.items
        checks.append(F.coalesce(F.forall(F.try_variant_get(value, "$", "array<variant>"),
                                          lambda item: F.coalesce(_item_ok(item, shape), F.lit(False))),
                                 F.lit(True)))
    return _all(checks)


def conforms(obj: Column, shape: Shape) -> Column:
    """Whether an object (a VARIANT) keeps every rule of `shape`: `record_schema.check_object` as
    one boolean column. A missing key is SQL NULL; a JSON null is a VARIANT null."""
    result = None
    for rule in shape.fields:
        value = F.variant_get(obj, f"$['{rule.name}']", "variant")
        ok = F.when(value.isNull(), F.lit(rule.optional)).otherwise(F.coalesce(field_ok(value, rule), F.lit(False)))
        result = ok if result is None else result & ok
    return F.lit(True) if result is None else result


def free_form_depth(shape: Shape, depth: int = 1) -> int:
    """How many arrays and objects enclose a free-form value (a finding's evidence, the history)
    in a record that keeps the schema: a record nests deeper than MAX_DEPTH only through them."""
    deepest = 0
    for rule in shape.fields:
        if rule.json_text and rule.shape is None:
            deepest = max(deepest, depth)
        if rule.shape is not None:
            deepest = max(deepest, free_form_depth(rule.shape, depth + 1))
        if isinstance(rule.items, Shape):
            deepest = max(deepest, free_form_depth(rule.items, depth + 2))
    return deepest


_ENCLOSING = free_form_depth(RUN)


def _free_form_openings(record: Column) -> Column:
    """The most `[`/`{` in any free-form value of a conforming record."""
    def evidence(findings_path: str) -> Column:
        return F.transform(F.try_variant_get(record, findings_path, "array<variant>"),
                           lambda f: openings(F.to_json(F.variant_get(f, "$.evidence", "variant"))))

    history = F.array(openings(F.to_json(F.variant_get(record, "$.history", "variant"))))
    return F.array_max(F.concat(history, F.coalesce(evidence("$.findings"), F.array()),
                                F.coalesce(evidence("$.counterexample.findings"), F.array())))


def _simple_entries(rule: Field) -> list[str]:
    """How `schema_of_variant` lists `rule` in a valid record holding no findings, no
    counterexample and no free-form object: `name: TYPE`, DECIMAL(p,s) written DECIMAL."""
    names = {"null": ["VOID"], "boolean": ["BOOLEAN"], "integer": ["BIGINT"], "string": ["STRING"],
             "number": ["BIGINT", "DECIMAL", "DOUBLE"]}
    tokens = [token for kind in record_schema.TYPE_ORDER if kind in rule.types for token in names.get(kind, [])]
    if "array" in rule.types:
        tokens.append("ARRAY<VOID>")  # empty (or all null: the caller checks)
        if isinstance(rule.items, str):
            tokens += [f"ARRAY<{token}>" for token in names[rule.items]]
    return [f"{rule.name}: {token}" for token in tokens]


def _wrapped(entries: list[str]) -> list[str]:
    """Each entry as it may stand in `OBJECT<a: T, b: U>` split at ", ": first, last, alone or inside."""
    return [form for entry in entries for form in (entry, "OBJECT<" + entry, entry + ">", "OBJECT<" + entry + ">")]


_ALLOWED = _wrapped([entry for rule in RUN.fields for entry in _simple_entries(rule)])
_REQUIRED = _wrapped([entry for rule in RUN.fields if not rule.optional for entry in _simple_entries(rule)])
_STRING_ARRAYS = [rule.name for rule in RUN.fields if rule.items == "string"]


def simple_record(record: Column) -> Column:
    """True for a valid record without findings, counterexample or free-form object, decided from
    one `schema_of_variant` of the whole record — most lines, at a fraction of `conforms`' cost.
    False says nothing: `conforms` decides.

    The schema lists each key once, sorted, as `name: TYPE`; a key that is not a plain name is
    quoted with backticks and so matches no allowed entry. Every entry must be allowed and every
    required field present; what a type cannot tell is checked beside it: the schema id, a finite
    duration, an empty `findings` (`[null]` has the schema of `[]`), no null in a string array.
    """
    shape = F.regexp_replace(F.schema_of_variant(record), F.lit(r"DECIMAL\(\d+,\d+\)"), F.lit("DECIMAL"))
    entries = F.split(shape, ", ")  # OBJECT<a: T, b: U> → [OBJECT<a: T, b: U>]: the object's sign is kept
    checks = [
        F.size(F.array_except(entries, F.array(*map(F.lit, _ALLOWED)))) == 0,
        F.size(F.array_intersect(entries, F.array(*map(F.lit, _REQUIRED)))) == F.lit(
            sum(1 for rule in RUN.fields if not rule.optional)),
        F.try_variant_get(record, "$.schema", "string") == F.lit(record_schema.SCHEMA_ID),
        F.abs(F.try_variant_get(record, "$.duration_s", "double")) < F.lit(float("inf")),
        F.variant_get(record, "$.findings[0]", "variant").isNull(),
    ]
    for name in _STRING_ARRAYS:
        items = F.try_variant_get(record, f"$['{name}']", "array<string>")
        checks.append(F.coalesce(F.size(items) == F.size(F.array_compact(items)), F.lit(True)))
    return F.coalesce(_all(checks), F.lit(False))


# `record_schema._JSON_STRING`; (?s): Java's `.` would stop at U+2028 and the like, Python's only at \n
_JSON_STRING = r'(?s)"(?:[^"\\]|\\.)*"'


def nesting_depth(line: Column) -> Column:
    """How deep arrays and objects nest, strings aside: `record_schema.nested_deeper_than`'s count."""
    brackets = F.regexp_replace(F.regexp_replace(line, F.lit(_JSON_STRING), F.lit("")), F.lit("[^\\[\\]{}]"),
                                F.lit(""))
    start = F.struct(F.lit(0).alias("depth"), F.lit(0).alias("deepest"))

    def step(seen: Column, bracket: Column) -> Column:
        depth = seen["depth"] + F.when(bracket.isin("[", "{"), 1).otherwise(-1)
        return F.struct(depth.alias("depth"), F.greatest(seen["deepest"], depth).alias("deepest"))

    return F.aggregate(F.split(brackets, ""), start, step)["deepest"]


def record_valid(line: Column, line_problem: Column, record: Column) -> Column:
    """True for a line `record_schema.parse_line` keeps, decided by Spark alone.

    `line_problem` comes from `line_reason`. Most lines are settled by `simple_record`; the
    others (findings, a counterexample, a history) are checked field by field. Nesting is
    measured only where it might matter, cheapest test first: few brackets in the line, few in
    its free-form values, or the depth itself, counted bracket by bracket.
    """
    shallow = ((openings(line) <= F.lit(MAX_DEPTH))
               | (F.coalesce(_free_form_openings(record), F.lit(0)) <= F.lit(MAX_DEPTH - _ENCLOSING))
               | (nesting_depth(line) <= F.lit(MAX_DEPTH)))
    # CASE, not OR: Spark computes a subexpression used twice once, ahead of both sides of an OR,
    # so the field-by-field check would run on every line; a CASE branch runs only when taken
    checked = F.when(simple_record(record), F.lit(True)).otherwise(conforms(record, RUN) & shallow)
    return F.coalesce(line_problem.isNull() & checked, F.lit(False))


def reason_of(line: str | None) -> str | None:
    """`record_schema.parse_line`'s reason for a line Spark skipped."""
    return None if line is None else record_schema.parse_line(line)[1]


reason_udf = F.udf(reason_of, StringType(), useArrow=False)
