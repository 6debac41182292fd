"""Which lines Spark keeps, and why it skips the others — in the words of `isrcheck.contract.records.schema`.

Spark's JSON reader is lenient where the contract is strict (a number read into a string column
becomes text, a missing key and a null look alike, text after a complete value is ignored), so
what it reads vouches for a line only when written back it is the line's very bytes
(`fast_vouched`: most lines, those without findings). Every other line is parsed once into a
VARIANT, which keeps JSON's own types, and the contract is checked
on it by Spark expressions derived from `isrcheck.contract.records.schema.RUN` (`conforms`): every field's
JSON type, the schema id, the finite duration, and every finding, code and counterexample step
item by item. A line is kept exactly when `record_schema.parse_line` would keep it; no line goes
through Python on the way.

Python is asked only *why* a skipped line was skipped when the line as a whole does not say
(`line_reason`: too long, empty, not UTF-8, not JSON, not an object): `reason_of` is
`record_schema.parse_line` itself, run as a UDF over the skipped lines alone — a handful in a
million — so the two summaries cannot word a reason differently.
"""

from __future__ import annotations

import json
import os
import re
import sys

from isrcheck.contract.records import schema as record_schema
from isrcheck.contract.records.schema import (
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
from isrcheck.reports import spark_schema
from pyspark import cloudpickle
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

# a sentinel after the line: Spark's parser stops at the end of the first complete value, so a
# line is whole JSON only when the sentinel is the array's second and last element
_SENTINEL = "\u0001isrcheck-eol"
_SENTINEL_JSON = '"\\u0001isrcheck-eol"'

# the UDF's code travels with it, so executors need pyspark but not isrcheck installed
cloudpickle.register_pickle_by_value(record_schema)  # type: ignore[no-untyped-call]
# and runs under this interpreter in local mode (not whatever `python3` is first on PATH)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def sql_text(text: str) -> str:
    """`text` as a Spark SQL string literal: quote and backslash escaped, anything outside
    printable ASCII written as \\uXXXX (Spark's parser unescapes all three)."""
    out = []
    for char in text:
        if char in "\\'":
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.append("".join(f"\\u{unit:04x}" for unit in _utf16_units(char)))
    return "'" + "".join(out) + "'"


def _utf16_units(char: str) -> list[int]:
    encoded = char.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(encoded[i:i + 2], "big") for i in range(0, len(encoded), 2)]


_OPENING = sql_text("[\\[{]")
_ALL_SPACE = sql_text("^[ \\t\\r\\n]*\\z")
_OBJECT_START = sql_text("^[ \\t\\r\\n]*[{]")
_NOT_BRACKET = sql_text("[^\\[\\]{}]")


def _key_path(name: str) -> str:
    """The variant path of key `name` as a SQL literal."""
    return sql_text("$['" + name + "']")


def wrap_line_sql(line: str) -> str:
    """The line parsed as the first element of an array that ends in a sentinel; NULL if not JSON.

    Select it as a column of its own: `line_reason` refers to it several times, and Spark would
    parse the line once per reference if it were inlined.
    """
    within = f"CASE WHEN octet_length({line}) <= {MAX_LINE_BYTES} THEN {line} END"  # a longer one is never parsed
    return f"try_parse_json(concat('[', {within}, {sql_text(',' + _SENTINEL_JSON + ']')}))"


def openings(text: str) -> str:
    """`[` and `{` in the text, strings included, as `record_schema.opening_brackets` counts them.
    Bytes, not characters: both are one byte in UTF-8, and `length` walks the text to count
    characters (7% of the ingest job's CPU) where `octet_length` reads a field."""
    return f"(octet_length({text}) - octet_length(regexp_replace({text}, {_OPENING}, '')))"


def line_reason_sql(line: str, wrapped: str) -> tuple[str, str]:
    """(record as VARIANT, what is wrong with the line as a whole or NULL)."""
    whole = (f"(try_variant_get({wrapped}, '$[1]', 'string') = {sql_text(_SENTINEL)}"
             f" AND variant_get({wrapped}, '$[2]', 'variant') IS NULL)")
    record = f"variant_get({wrapped}, '$[0]', 'variant')"
    # \\z, not $: Java's $ also matches before a final U+2028, which Python does not treat as space
    # the order of records_io.read_line; a line that may nest too deep is left to the schema
    # check and to `reason_of` (NULL here): Spark's parser has its own, larger depth limit
    reason = (f"CASE WHEN octet_length({line}) > {MAX_LINE_BYTES} THEN {sql_text(TOO_LONG)}"
              f" WHEN regexp_like({line}, {_ALL_SPACE}) THEN {sql_text(EMPTY_LINE)}"
              f" WHEN NOT is_valid_utf8({line}) THEN {sql_text(NOT_UTF8)}"
              f" WHEN {openings(line)} > {MAX_DEPTH} THEN CAST(NULL AS STRING)"
              f" WHEN {wrapped} IS NULL OR NOT coalesce({whole}, false) THEN {sql_text(NOT_JSON)}"
              f" WHEN NOT regexp_like({line}, {_OBJECT_START}) THEN {sql_text(NOT_OBJECT)} END")
    return record, reason


# how `schema_of_variant` names a scalar of each JSON type: an "integer" (a whole number that
# fits in 64 bits) is BIGINT, any other number DECIMAL(p,s) or DOUBLE
_SCALAR_NAMES = {"boolean": ("BOOLEAN",), "integer": ("BIGINT",), "string": ("STRING",),
                 "number": ("DECIMAL", "DOUBLE", "FLOAT")}
_INFINITY = "CAST('Infinity' AS DOUBLE)"


def _scalar_name(value: str) -> str:
    """`schema_of_variant` cut to what tells scalar types apart (DECIMAL(p,s) → DECIMAL)."""
    return f"substring_index(schema_of_variant({value}), '(', 1)"


def _is_array(value: str) -> str:
    return f"(try_variant_get({value}, '$', 'array<variant>') IS NOT NULL)"


def _is_object(value: str) -> str:
    # the cast to an empty struct reads no field: it only asks whether the value is an object
    return f"(try_variant_get({value}, '$', 'struct<>') IS NOT NULL)"


def _any(tests: list[str]) -> str:
    return "(" + " OR ".join(tests) + ")"


def _all(checks: list[str]) -> str:
    return "(" + " AND ".join(checks) + ")"


def has_type(value: str, types: frozenset[str]) -> str:
    """Whether a present value (a VARIANT, not SQL NULL) is of one of the JSON `types` exactly
    (`Field.accepts` lets a "number" field hold an integer: the caller adds "integer")."""
    if types >= set(record_schema.TYPE_ORDER):
        return "true"
    tests = []
    if "null" in types:
        tests.append(f"is_variant_null({value})")
    if "array" in types:
        tests.append(_is_array(value))
    if "object" in types:
        tests.append(_is_object(value))
    names = sorted({name for kind in types & set(_SCALAR_NAMES) for name in _SCALAR_NAMES[kind]})
    if names:
        tests.append(f"{_scalar_name(value)} IN ({', '.join(map(sql_text, names))})")
    return _any(tests)


def _typed(rule: Field) -> str:
    """The Spark type a valid value of `rule` casts to exactly (a JSON null to SQL NULL)."""
    return spark_schema.spark_type(rule).simpleString()


def _strings_ok(value: str, kind: str) -> str:
    """An array of `kind` scalars and nothing else: its schema says the type (a null element
    hides in it, as in [] — `[null]` has the schema of `[]`), its cast says there is no null."""
    (token,) = _SCALAR_NAMES[kind]
    items = f"try_variant_get({value}, '$', 'array<{_typed(Field('item', frozenset({kind})))}>')"
    return (f"(schema_of_variant({value}) IN ('ARRAY<{token}>', 'ARRAY<VOID>')"
            f" AND size(array_compact({items})) = size({items}))")


def field_ok(value: str, rule: Field, path: tuple[str, ...]) -> str:
    """`record_schema.check_value` for one present field: its type, then what must hold inside.
    `path` is where the field is in the record (the keys from its root): the items of an array of
    objects are read from the column `item_arrays` selected for that path."""
    accepted = rule.types | {"integer"} if "number" in rule.types else rule.types
    checks = [has_type(value, frozenset(accepted))]
    if rule.equals is not None:
        checks.append(f"try_variant_get({value}, '$', 'string') = {sql_text(rule.equals)}")
    if rule.finite:
        checks.append(f"abs(try_variant_get({value}, '$', 'double')) < {_INFINITY}")
    if rule.shape is not None:
        checks.append(f"(NOT {_is_object(value)} OR {conforms(value, rule.shape, path)})")
    if isinstance(rule.items, str):
        checks.append(_strings_ok(value, rule.items))
    if isinstance(rule.items, Shape):
        checks.append(f"coalesce({items_conform(f'`{items_column(path)}`', rule.items)}, false)")
    return _all(checks)


# how `schema_of_variant` names the merged type of an array's elements when every one is of the
# JSON kind (or null, or a missing key): merging any other kind in makes it VARIANT, DECIMAL or DOUBLE
_MERGED_NAMES = {"boolean": "BOOLEAN", "integer": "BIGINT", "string": "STRING"}


def _merged(column: str) -> str:
    """The merged schema of an array<variant> column (SQL NULL elements merge as JSON null)."""
    return f"schema_of_variant(to_variant_object({column}))"


def _no_nulls(array: str, count: str) -> str:
    """`array` holds `count` elements, none of them SQL NULL."""
    return f"size(array_compact({array})) = {count}"


def _item_field_ok(column: str, rule: Field, count: str) -> str:
    """`record_schema.check_value` of field `rule` of every item at once, without a lambda:
    `column` is the array<variant> of the field's value in each item (SQL NULL: key missing)."""
    kinds = rule.types - {"null"}
    if rule.shape is not None or isinstance(rule.items, Shape) or rule.equals is not None or rule.finite or (
            len(kinds) != 1 and kinds != set(record_schema.TYPE_ORDER) - {"null"}):
        raise NotImplementedError(f"{rule.name}: this rule cannot be checked across items without a lambda")
    checks = [] if rule.optional else [_no_nulls(column, count)]
    if kinds == set(record_schema.TYPE_ORDER) - {"null"}:
        return _all(checks) if checks else "true"  # any JSON value
    (kind,) = kinds
    typed_column = f"try_variant_get(to_variant_object({column}), '$', 'array<{_typed(rule)}>')"
    if kind in _MERGED_NAMES:
        checks.append(f"{_merged(column)} IN ('ARRAY<{_MERGED_NAMES[kind]}>', 'ARRAY<VOID>')")
    elif kind == "array" and rule.items in _MERGED_NAMES:
        token = _MERGED_NAMES[str(rule.items)]
        checks.append(f"{_merged(column)} IN ('ARRAY<ARRAY<{token}>>', 'ARRAY<ARRAY<VOID>>', 'ARRAY<VOID>')")
        flat = f"flatten(array_compact({typed_column}))"  # no null inside any of the arrays
        checks.append(_no_nulls(flat, f"size({flat})"))
    else:
        raise NotImplementedError(f"{rule.name}: items of kind {kind} cannot be checked without a lambda")
    if "null" not in rule.types:
        # every value present is of the kind, so only a JSON null casts to NULL (a missing key too)
        checks.append(_no_nulls(typed_column, f"size(array_compact({column}))"))
    return _all(checks)


def _items_type(shape: Shape) -> str:
    fields = ", ".join(f"`{rule.name}`: variant" for rule in shape.fields)
    return f"array<struct<{fields}>>"


def find_item_arrays(shape: Shape, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Shape]]:
    """Where the record holds arrays of objects (findings, counterexample steps…), with their shape."""
    found = []
    for rule in shape.fields:
        if rule.shape is not None:
            found += find_item_arrays(rule.shape, (*path, rule.name))
        if isinstance(rule.items, Shape):
            found.append(((*path, rule.name), rule.items))
    return found


ITEM_ARRAYS = find_item_arrays(RUN)


def find_objects(shape: Shape, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Shape]]:
    """Where the record holds objects with rules of their own: the record itself, the counterexample."""
    found = [(path, shape)]
    for rule in shape.fields:
        if rule.shape is not None:
            found += find_objects(rule.shape, (*path, rule.name))
    return found


OBJECTS = find_objects(RUN)


def fields_column(path: tuple[str, ...]) -> str:
    return "_fields_" + "_".join(path)


def items_column(path: tuple[str, ...]) -> str:
    return "_items_" + "_".join(path)


def item_arrays_sql(record: str) -> list[tuple[str, str]]:
    """(column name, SQL) for each array of objects in the record, its items cast to a struct of
    VARIANT fields (a non-object item casts to NULL, a missing key to a NULL field); NULL where
    the path holds no array. `record_valid_sql` reads them by name: select them beside the record
    first. Selected as columns, each is cast once per line: inside the check, which refers to it
    once per field, Spark would cast it again at every reference (common subexpressions are not
    shared inside the branches of a CASE or the right side of an AND)."""
    columns = []
    for path, shape in ITEM_ARRAYS:
        where = sql_text("$" + "".join(f"['{key}']" for key in path))
        columns.append((items_column(path), f"try_variant_get({record}, {where}, '{_items_type(shape)}')"))
    # and each object with rules of its own (the record, the counterexample) cast once to a struct
    # of its fields as VARIANTs: `variant_get` of a key builds a new VARIANT at every reference,
    # and the counterexample (most of a line with findings) was rebuilt a dozen times per field
    for path, shape in OBJECTS:
        where = sql_text("$" + "".join(f"['{key}']" for key in path))
        fields = ", ".join(f"`{rule.name}`: variant" for rule in shape.fields)
        columns.append((fields_column(path), f"try_variant_get({record}, {where}, 'struct<{fields}>')"))
    return columns


def items_conform(items: str, shape: Shape) -> str:
    """Whether every item of an array (`items`: its `item_arrays_sql` column) is an object that
    keeps `shape`, without a lambda: Spark runs higher-order functions (`forall`) interpreted,
    item by item, and they were a quarter of the ingest job's CPU. Each field's values are
    checked together: present in every item, their merged schema (`schema_of_variant`) the
    field's JSON type, no JSON null where none is allowed."""
    count = f"size({items})"
    checks = [_no_nulls(items, count)]
    checks += [_item_field_ok(f"{items}.`{rule.name}`", rule, count) for rule in shape.fields]
    return _all(checks)


def conforms(obj: str, shape: Shape, path: tuple[str, ...] = ()) -> str:
    """Whether an object (`obj`, a VARIANT at `path` in the record) keeps every rule of `shape`:
    `record_schema.check_object` as one boolean expression. Its fields are read from the
    `item_arrays_sql` column for `path`. A missing key is SQL NULL; a JSON null is a VARIANT null."""
    checks = []
    for rule in shape.fields:
        value = f"`{fields_column(path)}`.`{rule.name}`"
        checks.append(f"CASE WHEN {value} IS NULL THEN {str(rule.optional).lower()}"
                      f" ELSE coalesce({field_ok(value, rule, (*path, rule.name))}, false) END")
    return _all(checks) if checks else "true"


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


def _simple_schema_pattern() -> str:
    """A regular expression for `schema_of_variant` of a record `simple_record` may accept:
    `OBJECT<` and then, in the order the schema lists keys (sorted), `name: TYPE` and ", " (or
    the closing `>` and the end) for each field — required ones once, optional ones at most
    once — and nothing else. A key that is not a plain name is quoted with
    backticks and so matches nothing; should Spark ever list keys in another order, no record
    would match and `conforms` would decide every line (slower, not wrong)."""
    parts = []
    for rule in sorted(RUN.fields, key=lambda rule: rule.name):
        tokens = "|".join(re.escape(entry.split(": ", 1)[1]).replace("DECIMAL", r"DECIMAL\(\d+,\d+\)")
                          for entry in _simple_entries(rule))
        entry = f"{re.escape(rule.name)}: (?:{tokens})(?:, |>\\z)"
        parts.append(f"(?:{entry})?" if rule.optional else entry)
    return "^OBJECT<" + "".join(parts) + r"\z"


_SIMPLE_SCHEMA = sql_text(_simple_schema_pattern())
_STRING_ARRAYS = [rule.name for rule in RUN.fields if rule.items == "string"]


def simple_record(record: str) -> str:
    """True for a valid record without findings, counterexample or free-form object, decided from
    one `schema_of_variant` of the whole record — most lines, at a fraction of `conforms`' cost.
    False says nothing: `conforms` decides.

    The schema lists each key once, sorted, as `name: TYPE`: one regular expression
    (`_simple_schema_pattern`) says every key is a field of the record with a type it may hold
    and every required field is there (set operations against the allowed entries built two
    hash sets per line, a fifth of the ingest job's CPU). What a type cannot tell is checked
    beside it: the schema id, a finite duration, an empty `findings` (`[null]` has the schema
    of `[]`), no null in a string array.
    """
    checks = [
        f"regexp_like(schema_of_variant({record}), {_SIMPLE_SCHEMA})",
        f"try_variant_get({record}, '$.schema', 'string') = {sql_text(record_schema.SCHEMA_ID)}",
        f"abs(try_variant_get({record}, '$.duration_s', 'double')) < {_INFINITY}",
        f"variant_get({record}, '$.findings[0]', 'variant') IS NULL",
    ]
    for name in _STRING_ARRAYS:
        items = f"try_variant_get({record}, {_key_path(name)}, 'array<string>')"
        checks.append(f"coalesce(size({items}) = size(array_compact({items})), true)")
    return f"coalesce({_all(checks)}, false)"


# `record_schema._JSON_STRING`; (?s): Java's `.` would stop at U+2028 and the like, Python's only at \n
_JSON_STRING = r'(?s)"(?:[^"\\]|\\.)*"'


def nesting_depth(line: str) -> str:
    """How deep arrays and objects nest, strings aside: `record_schema.nested_deeper_than`'s count."""
    brackets = (f"regexp_replace(regexp_replace({line}, {sql_text(_JSON_STRING)}, ''),"
                f" {_NOT_BRACKET}, '')")
    depth = "(seen.depth + CASE WHEN bracket IN ('[', '{') THEN 1 ELSE -1 END)"
    step = f"(seen, bracket) -> named_struct('depth', {depth}, 'deepest', greatest(seen.deepest, {depth}))"
    return f"aggregate(split({brackets}, ''), named_struct('depth', 0, 'deepest', 0), {step}).deepest"


def record_valid_sql(line: str, line_problem: str, record: str, may_be_simple: str = "true") -> str:
    """True for a line `record_schema.parse_line` keeps, decided by Spark alone.

    `line_problem` comes from `line_reason`; the `item_arrays_sql` columns must be selected
    beside `record`. Most lines are settled by `simple_record`; the
    others (findings, a counterexample, a history) are checked field by field. Nesting is
    measured only where it might matter: few brackets in the line, or else the depth itself,
    counted bracket by bracket. (Counting only the brackets of the free-form values the schema
    names, as this once did, kept lines that nest too deep through a key it does not name — a
    counterexample step's `args`, an unknown key of the record.)
    """
    shallow = f"({openings(line)} <= {MAX_DEPTH} OR {nesting_depth(line)} <= {MAX_DEPTH})"
    # CASE, not OR: Spark computes a subexpression used twice once, ahead of both sides of an OR,
    # so the field-by-field check would run on every line; a CASE branch runs only when taken
    # `may_be_simple` false skips `simple_record` where it cannot hold (the fast path read findings)
    checked = (f"CASE WHEN {may_be_simple} AND {simple_record(record)} THEN true"
               f" ELSE {conforms(record, RUN)} AND {shallow} END")
    return f"coalesce({line_problem} IS NULL AND {checked}, false)"


# The fast path. Spark's own JSON reader (`from_json`, Jackson streaming into the typed schema)
# is cheaper than parsing to VARIANT, but lenient where the contract is strict: a number, a
# boolean, an object or an array read into a string column becomes its text, a JSON null and a
# missing key both read as NULL, unknown and duplicate keys are dropped, text after the first
# complete value is ignored, "NaN" is a double. So what it reads vouches for a line only when
# Spark, writing the typed row back (`to_json`), gives the line's very bytes: then each key is
# in the line once, with a value of its field's JSON type, and nothing else is there. Lines it
# cannot vouch for (findings, a counterexample, free-form JSON, other key orders, spaces,
# non-ASCII text, numbers Java writes otherwise than Python…) go to the exact check.

_FAST_MAX_BYTES = 64 * 1024  # a finding-free record is some hundreds of bytes; longer lines are not tried


def fast_row_sql(line: str) -> str:
    """The line read by Spark's JSON reader into the typed record (spark_schema.RUN); NULL for a
    line too long to try. Select it as a column: `fast_vouched_sql` refers to it several times."""
    schema = sql_text(spark_schema.RUN.simpleString())
    return f"CASE WHEN octet_length({line}) <= {_FAST_MAX_BYTES} THEN from_json({line}, {schema}) END"


def _fast_checks(row: str) -> tuple[list[str], dict[str, str]]:
    """What the line-equality of `fast_vouched_sql` leaves open, field by field: (checks every
    vouched line needs, by optional field: what it needs when the line lists it)."""
    always: list[str] = []
    listing_all: dict[str, str] = {}
    for rule in RUN.fields:
        value = f"{row}.`{rule.name}`"
        nullable = "null" in rule.types
        if rule.json_text or isinstance(rule.items, Shape):
            # written back as a JSON string or typed items: only their absence (NULL, or no items) is vouched for
            if not nullable and not isinstance(rule.items, Shape):
                always.append("false")
            elif isinstance(rule.items, Shape):
                always.append(f"coalesce(size({value}) = 0, false)")
            else:
                always.append(f"{value} IS NULL")
            continue
        if not nullable:
            # NULL is written back as `null`: a required field must hold a value; an optional one
            # may be NULL only where the line leaves it out
            if rule.optional:
                listing_all[rule.name] = f"{value} IS NOT NULL"
            else:
                always.append(f"{value} IS NOT NULL")
        if rule.equals is not None:
            always.append(f"{value} = {sql_text(rule.equals)}")
        if rule.finite:
            # NaN and the infinities are written back as strings ("NaN"), which a line may hold
            always.append(f"abs({value}) < {_INFINITY}")
        if isinstance(rule.items, str):
            always.append(f"coalesce(size(array_compact({value})) = size({value}), true)")
    return always, listing_all


def _optional_runs() -> list[list[Field]]:
    """The optional fields of the record in runs of neighbours (in schema order, as `to_json`
    writes them): `,"a":null,"b":null` of a run whose fields are all NULL is cut in one go."""
    runs: list[list[Field]] = []
    previous_optional = False
    for rule in RUN.fields:
        if rule.optional and previous_optional:
            runs[-1].append(rule)
        elif rule.optional:
            runs.append([rule])
        previous_optional = rule.optional
    return runs


def _null_members(rules: list[Field]) -> str:
    return sql_text("".join(f",{json.dumps(rule.name)}:null" for rule in rules))


def _cut(text: str, members: list[Field], when: str) -> str:
    """`text` without `,"a":null,"b":null…` of `members` when `when` holds (an empty search
    string leaves the text as it is, unscanned)."""
    pattern = sql_text("".join(f",{json.dumps(rule.name)}:null" for rule in members))
    return f"replace({text}, CASE WHEN {when} THEN {pattern} ELSE '' END, '')"


def fast_vouched_sql(line: str, row: str) -> str:
    """True for a line `record_schema.parse_line` keeps, vouched for by Spark's JSON reader
    (`row`: the `fast_row_sql` column): the line is the typed row written back as JSON, in one
    of the ways a writer leaves out optional fields that are null — every NULL optional field
    left out; every field listed; the last optional fields left out when NULL (the campaign
    writer's `cut_short` and `history`) — and what the writing cannot show holds (a required
    field is not NULL, no findings, no free-form value, a finite duration, the schema id, no
    null item). False says nothing: the exact check decides.

    `,"name":null` can stand in the written text only between members of the object (a string
    written by Jackson escapes its quotes, and a vouched row holds no nested object), so cutting
    it leaves the same record without the optional field."""
    always, listing = _fast_checks(row)
    written = f"to_json({row}, map('ignoreNullFields', 'false'))"

    def null(rule: Field) -> str:
        return f"{row}.`{rule.name}` IS NULL"

    runs = _optional_runs()
    omitted = written
    for run in runs:
        all_null = _all([null(rule) for rule in run])
        omitted = _cut(omitted, run, all_null)  # a run of NULL fields at once
        if len(run) > 1:
            for rule in run:
                omitted = _cut(omitted, [rule], f"NOT {all_null} AND {null(rule)}")
    candidates = [f"{line} = {omitted}", _all([*listing.values(), f"{line} = {written}"])]
    tail = runs[-1] if runs and runs[-1][-1] is RUN.fields[-1] else []
    for start in range(len(tail) - 1, 0, -1):
        left_out = tail[start:]
        needs = [check for name, check in listing.items() if name not in {rule.name for rule in left_out}]
        nulls = _all([null(rule) for rule in left_out])
        candidates.append(_all([*needs, nulls, f"{line} = {_cut(written, left_out, 'true')}"]))
    return f"coalesce({_all([f'{row} IS NOT NULL', *always])} AND {_any(candidates)}, false)"


def wrap_line(line: str) -> Column:
    """`wrap_line_sql` of the column named `line`."""
    return F.expr(wrap_line_sql(f"`{line}`"))


def line_reason(line: str, wrapped: str) -> tuple[Column, Column]:
    """`line_reason_sql` of the columns named `line` and `wrapped`."""
    record, reason = line_reason_sql(f"`{line}`", f"`{wrapped}`")
    return F.expr(record), F.expr(reason)


def item_arrays(record: str) -> list[Column]:
    """`item_arrays_sql` of the column named `record`, each aliased to the name the check reads."""
    return [F.expr(sql).alias(name) for name, sql in item_arrays_sql(f"`{record}`")]


def fast_row(line: str) -> Column:
    """`fast_row_sql` of the column named `line`."""
    return F.expr(fast_row_sql(f"`{line}`"))


def fast_vouched(line: str, row: str) -> Column:
    """`fast_vouched_sql` of the columns named `line` and `row`."""
    return F.expr(fast_vouched_sql(f"`{line}`", f"`{row}`"))


def record_valid(line: str, line_problem: str, record: str, may_be_simple: str | None = None) -> Column:
    """`record_valid_sql` of the columns so named: one expression, parsed by Spark from its SQL
    text in one call (built from Column objects, the checks took ~9,000 calls into the JVM)."""
    hint = "true" if may_be_simple is None else f"`{may_be_simple}`"
    return F.expr(record_valid_sql(f"`{line}`", f"`{line_problem}`", f"`{record}`", hint))


def reason_of(line: str | None) -> str | None:
    """`record_schema.parse_line`'s reason for a line Spark skipped."""
    return None if line is None else record_schema.parse_line(line)[1]


reason_udf = F.udf(reason_of, StringType(), useArrow=False)
