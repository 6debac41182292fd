"""The typed Spark shape of a valid `isrcheck.run/1` record: an explicit StructType, never inferred,
derived from the one definition of the record (`isrcheck.contract.records.schema.RUN`).

Inference would cost a pass over the data and would type a column by whatever the sample held.
A line reaches this schema only after `spark_rules` has checked every field's JSON type, so the
cast from VARIANT is exact. Free-form JSON (a finding's evidence, the counterexample: fields marked
`json_text`) stays JSON text: its shape is the engine's business and Parquet readers need no
variant support for it. All integers are 64-bit, the range the schema accepts.
"""

from __future__ import annotations

from isrcheck.contract.records import schema
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

_SCALARS: dict[str, DataType] = {
    "boolean": BooleanType(), "integer": LongType(), "number": DoubleType(), "string": StringType(),
}


def spark_type(rule: schema.Field) -> DataType:
    if rule.json_text:
        return StringType()
    if isinstance(rule.items, schema.Shape):
        return ArrayType(struct_of(rule.items))
    if isinstance(rule.items, str):
        return ArrayType(_SCALARS[rule.items])
    kinds = rule.types - {"null"}
    if "number" in kinds:
        return DoubleType()
    (kind,) = kinds
    return _SCALARS[kind]


def struct_of(shape: schema.Shape) -> StructType:
    return StructType([StructField(rule.name, spark_type(rule)) for rule in shape.fields])


FINDING = struct_of(schema.FINDING)
RUN = struct_of(schema.RUN)
