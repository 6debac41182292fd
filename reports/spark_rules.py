"""Which lines Spark keeps, and why it skips the others — in the words of `isrcheck.records.schema`.

Spark's JSON reader is lenient where the contract is strict (a number read into a string column
becomes text, a missing key and a null look alike, text after a complete value is ignored), so
each line is parsed once into a VARIANT, which keeps JSON's own types. Then two paths:

- Most runs pass and carry no findings. For them Spark itself decides, cheaply: the line is whole
  JSON, and the record's variant schema is one of the few a valid finding-free record can have
  (`_simple_schemas`), its schema id right, its duration finite.
- Every other line — findings to check item by item, or something wrong — goes to
  `record_schema.parse_line`, the very function the plain-Python reader uses, as a Python UDF.
  So the Spark and plain summaries cannot disagree on why a line was skipped, and there is one
  implementation of the contract to maintain. The UDF sees NULL for the lines Spark settled,
  which keeps its cost to the few that need it.
"""

from __future__ import annotations

import itertools
import os
import re
import sys

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
    SCHEMA_ID,
    TOO_LONG,
    TYPE_ORDER,
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


def line_reason(line: Column, wrapped: Column) -> tuple[Column, Column]:
    """(record as VARIANT, what is wrong with the line as a whole or NULL)."""
    whole = (F.try_variant_get(wrapped, "$[1]", "string") == F.lit(_SENTINEL)) & F.variant_get(
        wrapped, "$[2]", "variant").isNull()
    record = F.variant_get(wrapped, "$[0]", "variant")
    # \\z, not $: Java's $ also matches before a final U+2028, which Python does not treat as space
    # the order of records_io.read_line; a line that may nest too deep goes to the UDF (NULL here)
    openings = F.length(line) - F.length(F.regexp_replace(line, F.lit("[\\[{]"), F.lit("")))
    reason = (F.when(F.octet_length(line) > F.lit(MAX_LINE_BYTES), F.lit(TOO_LONG))
              .when(F.regexp_like(line, F.lit("^[ \\t\\r\\n]*\\z")), F.lit(EMPTY_LINE))
              .when(~F.is_valid_utf8(line), F.lit(NOT_UTF8))
              .when(openings > F.lit(MAX_DEPTH), F.lit(None))
              .when(wrapped.isNull() | ~F.coalesce(whole, F.lit(False)), F.lit(NOT_JSON))
              .when(~F.regexp_like(line, F.lit("^[ \\t\\r\\n]*[{]")), F.lit(NOT_OBJECT)))
    return record, reason


_SIMPLE_TOKENS = {"null": "VOID", "boolean": "BOOLEAN", "integer": "BIGINT", "number": "NUMBER",
                  "string": "STRING", "array": "ARRAY<VOID>"}


def _tokens(rule: record_schema.Field) -> list[str]:
    """How `schema_of_variant` may spell a valid value of `rule` in a finding-free record."""
    tokens = [_SIMPLE_TOKENS[t] for t in TYPE_ORDER if rule.accepts(t) and t in _SIMPLE_TOKENS]
    if "number" in rule.types:
        tokens.append("BIGINT")
    if rule.items is not None and isinstance(rule.items, str):
        tokens.append(f"ARRAY<{_SIMPLE_TOKENS[rule.items]}>")
    return tokens


def _simple_schemas() -> list[str]:
    """`schema_of_variant` of every valid record holding no findings and no counterexample, its
    optional fields removed first (`optional_fields_removed`).

    Keys are listed sorted, as Spark writes them; numbers other than BIGINT are folded into
    NUMBER first (their DECIMAL(p,s) varies from record to record). A few dozen strings: each
    nullable required field doubles the count (optional ones would multiply it again, which is
    why they are stripped instead).
    """
    choices = [[f"{rule.name}: {token}" for token in _tokens(rule)] for rule in RUN.fields if not rule.optional]
    schemas = set()
    for combo in itertools.product(*choices):
        schemas.add("OBJECT<" + ", ".join(sorted(combo)) + ">")
    return sorted(schemas)


def _optional_pattern() -> str:
    """`, name: TYPE` of an optional field holding a valid simple value. Never the first key:
    the required `adapter` sorts before every optional field (asserted at import)."""
    optional = [rule for rule in RUN.fields if rule.optional]
    assert all(rule.name > "adapter" for rule in optional)
    alternatives = [f"{rule.name}: (?:{'|'.join(re.escape(t) for t in _tokens(rule))})" for rule in optional]
    return f", (?:{'|'.join(alternatives)})(?=[,>])"


_OPTIONAL = _optional_pattern()


def simple_record(record: Column) -> Column:
    """True for a valid record without findings or counterexample, decided in Spark alone."""
    shape = F.regexp_replace(F.schema_of_variant(record), F.lit(r"DECIMAL\(\d+,\d+\)|DOUBLE|FLOAT"),
                             F.lit("NUMBER"))
    shape = F.regexp_replace(shape, F.lit(_OPTIONAL), F.lit(""))
    return F.coalesce(  # NULL (a line Spark could not parse) is not simple: the UDF decides
        shape.isin(*_simple_schemas())
        & (F.variant_get(record, "$.schema", "string") == F.lit(SCHEMA_ID))
        & (F.abs(F.try_variant_get(record, "$.duration_s", "double")) < F.lit(float("inf")))
        # `[null]` has the schema of `[]`, so emptiness is checked on its own
        & F.variant_get(record, "$.findings[0]", "variant").isNull(),
        F.lit(False))


def _reason_of(line: str | None) -> str | None:
    return None if line is None else record_schema.parse_line(line)[1]


_reason_udf = F.udf(_reason_of, StringType(), useArrow=False)


def record_reason(line: Column, line_problem: Column, simple: Column) -> Column:
    """Why a line is skipped — `record_schema.parse_line`'s reason — or NULL for a valid record.

    `line_problem` comes from `line_reason` and `simple` from `simple_record`, each selected as
    a column before: Spark runs a Python UDF over every row of its stage, so the line is handed
    over only where neither settled the question.
    """
    return F.coalesce(line_problem, _reason_udf(F.when(line_problem.isNull() & ~simple, line)))
