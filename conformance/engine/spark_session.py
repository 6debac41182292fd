"""Starting a quiet, small-footprint Spark session for a summary, local or remote.

The summary is a batch job of a few seconds on one machine by default (`local[*]`), but the same
code runs on a cluster: any master URL passes through, and an `sc://` URL goes to Spark Connect.
Defaults suit small data: few shuffle partitions, no UI, UTC, and log output limited to errors so
the command prints its own one-line result rather than pages of JVM chatter.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from isrcheck.contract.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"

DEFAULT_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    # records are small; duplicate keys keep the last value, as Python's json module does
    "spark.sql.variant.allowDuplicateKeys": "true",
    # the record checks make long generated methods; past 8000 bytes of bytecode HotSpot will not
    # JIT-compile a method, so Spark is told to split such stages instead (see its own docs)
    "spark.sql.codegen.hugeMethodLimit": "8000",
    # the record check fused into one whole-stage method grows past Java's 64 KB limit (inside a
    # fused stage the expressions read their input from local variables, so Spark cannot split
    # them into methods); Janino then fails with an ERROR and a stack trace on the console before
    # Spark falls back. Wide stages are therefore not fused: each operator's projection is still
    # compiled on its own, where Spark splits long code into methods
    "spark.sql.codegen.maxFields": "20",
}

# JVM-side logging to stderr. The root stays at WARN while the session starts — Spark announces
# "Setting default log level" whenever its shell level differs from the root's — and is lowered
# to ERROR once the session is up; the one routine start-up warning is silenced by name.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
"""


# The JVM of a local session is driver and executor at once, and lives for one job of a minute or
# two on a shared machine with few cores. Measured on the summary (docs/spark.md): the default G1
# collector's concurrent threads and the C2 compiler, which compiles the generated code of some
# fifty plans whether they run for a second or a minute, were about half of the CPU at 10^4
# records. The throughput collector (no concurrent threads), and C2 kept for methods that run ten
# times longer than HotSpot's default thresholds ask (the ingest's hot loop still gets there),
# cut the process's CPU by ~15% at 10^5 and ~20% at 10^6 on two cores. `spark.driver.extraJavaOptions`
# given by the user replaces these; a cluster's executors keep the JVM's defaults.
LOCAL_JVM_OPTIONS = (
    "-XX:+UseParallelGC",
    "-XX:Tier4InvocationThreshold=50000", "-XX:Tier4MinInvocationThreshold=6000",
    "-XX:Tier4CompileThreshold=150000", "-XX:Tier4BackEdgeThreshold=400000",
)

_LOCAL_MASTER = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]")


def check_master(url: str) -> None:
    """Spark's own rule for master URLs, checked before the JVM starts: a URL Spark refuses makes
    spark-submit print a Java stack trace and PySpark report only that its gateway exited."""
    if url.startswith(("sc://", "spark://", "k8s://")) or url == "yarn" or _LOCAL_MASTER.fullmatch(url):
        return
    raise UsageError(f"bad Spark master {url!r}: expected local, local[N], local[*], spark://HOST:PORT, yarn, "
                     "k8s://URL or sc://HOST:PORT")


def spark_problem(url: str | None) -> str | None:
    """What keeps Spark from starting for `url`, found in a second rather than after a JVM's
    minute of retries and its stack traces: no Java for a JVM-backed session, nothing listening
    at a standalone master's or a Connect server's address."""
    url = url or DEFAULT_MASTER
    if not url.startswith("sc://") and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Spark needs Java: no java on PATH and JAVA_HOME is not set"
    if url.startswith(("spark://", "sc://")):
        addresses = url.split("://", 1)[1].split("/", 1)[0].split(";", 1)[0]
        default_port = 7077 if url.startswith("spark://") else 15002
        problem = None
        for address in addresses.split(","):
            host, _, port = address.rpartition(":") if ":" in address else (address, "", str(default_port))
            try:
                with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
                    return None
            except (OSError, ValueError) as error:
                problem = f"no Spark master listening at {address} ({getattr(error, 'strerror', None) or error})"
        return problem
    return None


def check_spark(url: str | None) -> None:
    """A usage error (exit 2, one line) when Spark cannot start for `url`."""
    check_master(url or DEFAULT_MASTER)
    problem = spark_problem(url)
    if problem is not None:
        raise UsageError(problem)


_log_config_path: Path | None = None


def _log_config() -> Path:
    """The log4j2 file the JVMs read, one per isrcheck process and removed when it exits (a fixed
    shared path stayed in the temp directory for good, and one process could rewrite it under
    another's starting JVM)."""
    global _log_config_path
    if _log_config_path is None or not _log_config_path.exists():
        handle, name = tempfile.mkstemp(prefix="isrcheck-spark-log4j2-", suffix=".properties")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(_LOG4J2)
        _log_config_path = Path(name)
        atexit.register(_log_config_path.unlink, missing_ok=True)
    return _log_config_path


def start_session(master: str | None = None, conf: Mapping[str, str] | None = None,
                  app_name: str = "isrcheck summarize") -> SparkSession:
    """A session for `master` (default local[*]); `conf` overrides the defaults above. The name
    is what a cluster's UI lists the application as."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("pyspark is not installed (pip install pyspark)") from None
    url = master or DEFAULT_MASTER
    check_spark(url)
    builder = SparkSession.builder.appName(app_name)
    settings = dict(DEFAULT_CONF)
    if url.startswith("sc://"):
        builder = builder.remote(url)
    else:
        if url.startswith("local"):
            # a local session talks to itself only: bind to loopback (and skip the warning Spark
            # prints when the host name resolves to it)
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.master(url)
        option = f"-Dlog4j2.configurationFile=file:{_log_config()}"
        local_options = LOCAL_JVM_OPTIONS if url.startswith("local") else ()
        settings["spark.driver.extraJavaOptions"] = " ".join([option, *local_options])
        settings["spark.executor.extraJavaOptions"] = option
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as error:  # JVM missing, bad master URL, unreachable Connect server
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise UsageError(f"cannot start Spark (master {url}): {first_line}") from None
    if not url.startswith("sc://"):
        session.sparkContext.setLogLevel("ERROR")
    return session


def stop_session(session: SparkSession) -> None:
    """Stop Spark, then the JVM this process started for it, and wait until that JVM has exited.

    `SparkSession.stop` leaves the JVM to notice later that its stdin has closed (when Python
    exits), so a command would return while its JVM — and the Python workers the JVM started,
    which end with it — still ran in its process group. A Spark Connect session (no JVM here) or
    a JVM this process did not start is only stopped.
    """
    session.stop()
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)
    if gateway is None or not isinstance(process, subprocess.Popen):
        return
    gateway.shutdown()
    if process.stdin is not None:
        process.stdin.close()  # the gateway server exits at the end of its stdin
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    SparkContext._gateway = None
    SparkContext._jvm = None
