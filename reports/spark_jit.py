"""Which JIT compilers the JVM of a local summary runs, chosen from the size of its input.

HotSpot compiles hot methods twice: C1 quickly, then C2, the optimising compiler, for the methods
that keep running. On a summary of small input C2 is pure cost: it compiles Spark's planning code
and the generated code of some twenty jobs that each run for well under a second, and the job
ends before the compiled code pays back. On a large input the ingest's generated code runs long
enough that C2's faster code is worth its compile time. Measured with `isrcheck summarize
--master local[2]` on the synthetic records of `bench/summary.py` (process CPU seconds, JVM
threads sampled from /proc; docs/spark.md, "The JVM of a local session"): C1 alone
(`-XX:TieredStopAtLevel=1`) saved about 10 CPU s at 10^4 records (4.4 MB) and 12 at 10^5 (44 MB),
and cost about 21 more at 10^6 (442 MB), where the ingest's tasks ran slower; the two cross near
4 x 10^5 records (~190 MB). Below `C1_ONLY_BELOW_BYTES`, well short of that, a local summary's
JVM runs C1 only.

The option goes in `spark.driver.defaultJavaOptions`, which Spark puts before
`spark.driver.extraJavaOptions` (where `spark_session.LOCAL_JVM_OPTIONS` go), so the session's
other options stay. A user who sets either key chooses the JVM's options alone; a cluster's
executors are not local, and keep theirs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

C1_ONLY = "-XX:TieredStopAtLevel=1"
C1_ONLY_BELOW_BYTES = 128 * 1024 * 1024
DEFAULT_OPTIONS = "spark.driver.defaultJavaOptions"
USER_OPTIONS = (DEFAULT_OPTIONS, "spark.driver.extraJavaOptions")


def input_bytes(files: Sequence[Path]) -> int:
    """The size of the record files on disk (a file that vanished counts nothing: the job will
    say so)."""
    total = 0
    for path in files:
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total


def is_local(master: str | None) -> bool:
    """A master whose driver JVM is the one that runs the tasks: local, local[N], local[*]
    (the default when no master is given). local-cluster runs its executors in JVMs of their own."""
    return master is None or master == "local" or master.startswith("local[")


def summary_conf(files: Sequence[Path], master: str | None, conf: Mapping[str, str]) -> dict[str, str]:
    """`conf`, and C1 only for the driver JVM when the summary is local, its input is smaller than
    `C1_ONLY_BELOW_BYTES`, and the user gave no Java options of the driver."""
    chosen = dict(conf)
    if is_local(master) and not any(key in chosen for key in USER_OPTIONS) \
            and input_bytes(files) < C1_ONLY_BELOW_BYTES:
        chosen[DEFAULT_OPTIONS] = C1_ONLY
    return chosen
