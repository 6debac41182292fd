"""`--adapter kafka-jvm`: Kafka's own controller classes, in process in one JVM per class path.

Which classes run (docs/kafka-jvm.md):

* `classpath=A:B:DIR/*` — exactly these (a Kafka developer's build output, or a patched class
  ahead of a release's jars);
* `kafka-home=DIR` — every jar of `DIR/libs`;
* neither — `$KAFKA_HOME` if set, else the release the run asks for in the repository's
  `../shared/kafka/<X.Y>` (so `--kafka 3.3` runs 3.3.2's classes and `--kafka 3.9` 3.9.0's).

The JVM is the harness of `isrcheck.adapters.kafka_jvm.launcher`, spoken to through `ExecTarget`
(docs/exec-protocol.md); it reports the one release its classes are, and a run for another
release is skipped with that reason. Only one JVM runs at a time per target: a run for another
release stops the previous one.

Observation is exact and costs no round trip of its own: the harness declares exec/1's optional
`snapshot` capability, so it answers each operation together with every partition and broker
registration after it, and `ExecTarget` answers the step's observations from that.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from isrcheck.adapters.base import CONTROLLER, Args, Result, Target, UnsupportedConfiguration
from isrcheck.adapters.kafka_jvm.launcher import explicit_classpath, find_jdk, harness_command, kafka_home_classpath
from isrcheck.adapters.plugins.exec_target import ExecTarget
from isrcheck.contract.errors import UsageError

SHARED_KAFKA = Path(__file__).resolve().parents[2].parent / "shared" / "kafka"
"""`<repo>/../shared/kafka`: one KAFKA_HOME per release line (3.3, 3.5, 3.7, 3.9)."""


def clients_version(entries: list[Path]) -> str | None:
    """The Kafka version in the name of the first `kafka-clients-X.Y.Z.jar` on the class path."""
    for entry in entries:
        match = re.fullmatch(r"kafka-clients-(\d+\.\d+\.\d+.*)\.jar", entry.name)
        if match:
            return match.group(1)
    return None


def release_line(release: str) -> str:
    parts = release.strip().split(".")
    return ".".join(parts[:2])


class KafkaJvmTarget(Target):
    """A controller-level target backed by `ExecTarget` processes running the Java harness."""

    levels = frozenset({CONTROLLER})

    def __init__(self, classpath: str | None = None, kafka_home: str | None = None, timeout_s: float = 30.0,
                 shared_kafka: Path = SHARED_KAFKA, without: tuple[str, ...] = ()) -> None:
        """No JVM starts here: the first `open` starts it (campaigns build targets just to read
        their attributes). `without` becomes `unsupported_operations`: the controller generator
        sends none of them (docs/kafka-jvm.md)."""
        if classpath is not None and kafka_home is not None:
            raise UsageError("kafka-jvm: give classpath= or kafka-home=, not both")
        self.jdk = find_jdk()
        self.timeout_s = timeout_s
        self.shared_kafka = shared_kafka
        self.fixed: list[Path] | None = None
        if classpath is not None:
            self.fixed = explicit_classpath(classpath)
        elif kafka_home is not None:
            self.fixed = kafka_home_classpath(Path(kafka_home))
        elif os.environ.get("KAFKA_HOME"):
            self.fixed = kafka_home_classpath(Path(os.environ["KAFKA_HOME"]))
        self.current: ExecTarget | None = None
        self.current_key: str | None = None
        self.unsupported_operations = frozenset(without)
        if self.fixed is not None:
            self.name = "kafka-jvm"
            version = clients_version(self.fixed)
            self.releases = None if version is None else frozenset({release_line(version)})
        else:
            available = sorted(p.name for p in shared_kafka.glob("*") if (p / "libs").is_dir())
            if not available:
                raise UsageError(f"kafka-jvm: no KAFKA_HOME given (kafka-home=, classpath= or $KAFKA_HOME) and no "
                                 f"release under {shared_kafka}")
            self.name = "kafka-jvm"
            self.releases = frozenset(available)

    def start(self, entries: list[Path], key: str) -> ExecTarget:
        command = harness_command(entries, self.jdk)
        target = ExecTarget(shlex.join(command), timeout_s=self.timeout_s)
        self.current_key = key
        return target

    def target_for(self, release: str) -> ExecTarget:
        if self.fixed is not None:
            if self.current is None:
                self.current = self.start(self.fixed, "fixed")
                self.name = self.current.name
            return self.current
        line = release_line(release)
        if self.current is not None and self.current_key == line:
            return self.current
        home = self.shared_kafka / line
        if not (home / "libs").is_dir():
            raise UnsupportedConfiguration(f"kafka-jvm: no Kafka {line} under {self.shared_kafka} (give kafka-home=)")
        if self.current is not None:
            self.current.stop()
            self.current = None
        self.current = self.start(kafka_home_classpath(home), line)
        return self.current

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        self.target_for(release).open(release, config)

    def execute(self, op: str, args: Args) -> Result:
        assert self.current is not None
        return self.current.execute(op, args)

    def observe(self, what: str, args: Args) -> Result:
        assert self.current is not None
        return self.current.observe(what, args)

    def close(self) -> None:
        if self.current is not None:
            self.current.close()

    def shutdown(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None
