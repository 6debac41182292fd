"""The typed Spark shape of a valid `isrcheck.run/1` record: an explicit StructType, never inferred.

Inference would cost a pass over the data and would type a column by whatever the sample held.
A line reaches this schema only after `spark_rules` has checked every field's JSON type, so the
cast from VARIANT is exact. Free-form JSON (a finding's evidence, the counterexample) stays JSON
text: its shape is the engine's business and Parquet readers need no variant support for it.
All integers are 64-bit, the range `record_rules` accepts.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

FINDING = StructType([
    StructField("kind", StringType()),
    StructField("signature", StringType()),
    StructField("operation", StringType()),
    StructField("property", StringType()),
    StructField("field", StringType()),
    StructField("codes", ArrayType(StringType())),
    StructField("step", LongType()),
    StructField("message", StringType()),
    StructField("evidence", StringType()),  # JSON text
])

RUN = StructType([
    StructField("schema", StringType()),
    StructField("run_id", StringType()),
    StructField("campaign_id", StringType()),
    StructField("started_at", StringType()),
    StructField("seed", LongType()),
    StructField("adapter", StringType()),
    StructField("target", StringType()),
    StructField("release", StringType()),
    StructField("mutant", StringType()),
    StructField("level", StringType()),
    StructField("differential", BooleanType()),
    StructField("steps", LongType()),
    StructField("duration_s", DoubleType()),
    StructField("outcome", StringType()),
    StructField("skip_reason", StringType()),
    StructField("findings", ArrayType(FINDING)),
    StructField("counterexample", StringType()),  # JSON text
    StructField("replay", StringType()),
])
