"""kafka-local: the kafka-wire target against controller-only processes of an unpacked Kafka
distribution (`KAFKA_HOME`, any release the profiles know, including 3.3/3.5 which have no
`apache/kafka` image). Same properties and formatting as the containers
(isrcheck.adapters.real_kafka.kafka_properties), the same launcher (isrcheck.adapters.real_kafka.kafka_launcher); the
metadata log is
read by Raft Fetch (isrcheck.adapters.kafka_wire.metadata_fetch). Options: ``kafka-home=DIR`` (default $KAFKA_HOME),
``session-timeout-ms`` (default 3000 per controller), ``controllers=1|3`` (3: `fail_over_controller`
is supported), ``timeout``, ``classpath=PATH[:PATH]`` (class directories or jars put first on the
controllers' class path: a patched controller class, `patched_classpath`). Ports come from
$ISRCHECK_KAFKA_PORTS (default 20000-29999).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from isrcheck.adapters.base import Target, UnsupportedConfiguration
from isrcheck.adapters.kafka_wire.controller_endpoints import ControllerEndpoint
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.real_kafka.kafka_launcher import KafkaControllers, LocalRunner
from isrcheck.adapters.real_kafka.kafka_properties import CONTROLLER_PORT
from isrcheck.adapters.real_kafka.patched_classpath import classpath_first


def kafka_home_missing(home: str | None) -> str | None:
    """None when `home` looks like a Kafka distribution; otherwise why not, in one line."""
    if not home:
        return "KAFKA_HOME is not set"
    if not (Path(home) / "bin" / "kafka-server-start.sh").exists():
        return f"KAFKA_HOME={home} has no bin/kafka-server-start.sh"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no java on PATH and JAVA_HOME is not set"
    return None


def local_wire_target(options: dict[str, str]) -> Target:
    from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
    from isrcheck.adapters.options import float_option, int_option

    home = options.get("kafka-home") or os.environ.get("KAFKA_HOME", "")
    controllers = int_option(options, "controllers", 1)
    classpath = classpath_first(options["classpath"], "kafka-local") if "classpath" in options else ""
    provider = LocalControllers(home, int_option(options, "session-timeout-ms", 3000 * controllers), controllers,
                                classpath)
    target = KafkaWireTarget(provider, timeout_s=float_option(options, "timeout", 30.0), name="kafka-local")
    if controllers > 1:
        target.unsupported_operations = frozenset()
    return target


class LocalControllers(KafkaControllers):
    """EndpointProvider: controller-only nodes of `home` (isrcheck.adapters.real_kafka.kafka_launcher)."""

    def __init__(self, home: str, session_timeout_ms: int, controllers: int = 1, classpath: str = "") -> None:
        self.home = home
        super().__init__(lambda: LocalRunner(home, classpath=classpath), session_timeout_ms, controllers)

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        reason = kafka_home_missing(self.home)
        if reason is not None:
            raise UnsupportedConfiguration(reason)
        return super().endpoint_for(settings)


__all__ = ["CONTROLLER_PORT", "LocalControllers", "kafka_home_missing", "local_wire_target"]
