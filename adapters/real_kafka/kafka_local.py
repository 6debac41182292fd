"""kafka-local: the kafka-wire target against controller-only processes of an unpacked Kafka
distribution (`KAFKA_HOME`, any release the profiles know, including 3.3/3.5 which have no
`apache/kafka` image). Same properties and formatting as the containers
(isrcheck.adapters.real_kafka.kafka_properties); the metadata log is read with the distribution's own
`kafka-dump-log.sh`. Options: ``kafka-home=DIR`` (default $KAFKA_HOME), ``session-timeout-ms``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from isrcheck.adapters.base import Target, UnsupportedConfiguration
from isrcheck.adapters.kafka_wire.controller_endpoints import ControllerEndpoint
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.kafka_dump_log import DumpLogSource
from isrcheck.adapters.real_kafka.kafka_containers import random_cluster_id, wait_for_api_versions
from isrcheck.adapters.real_kafka.kafka_properties import (
    CONTROLLER_PORT,
    controller_node,
    dump_log_command,
    start_script,
)


def kafka_home_missing(home: str | None) -> str | None:
    """None when `home` looks like a Kafka distribution; otherwise why not, in one line."""
    if not home:
        return "KAFKA_HOME is not set"
    if not (Path(home) / "bin" / "kafka-server-start.sh").exists():
        return f"KAFKA_HOME={home} has no bin/kafka-server-start.sh"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no java on PATH and JAVA_HOME is not set"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalControllers:
    """EndpointProvider: one controller process (the latest settings) from KAFKA_HOME."""

    def __init__(self, home: str, session_timeout_ms: int) -> None:
        self.home = home
        self.session_timeout_ms = session_timeout_ms
        self.current: tuple[ControllerSettings, subprocess.Popen[bytes], ControllerEndpoint, str] | None = None

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        if self.current is not None and self.current[0] == settings and self.current[1].poll() is None:
            return self.current[2]
        reason = kafka_home_missing(self.home)
        if reason is not None:
            raise UnsupportedConfiguration(reason)
        self.close()
        work = tempfile.mkdtemp(prefix="isrcheck-kafka-")
        port = free_port()
        node = controller_node(settings, self.session_timeout_ms)
        node = type(node)(**{**node.__dict__, "data_dir": f"{work}/data", "quorum_voters": f"1@127.0.0.1:{port}",
                             "listeners": f"CONTROLLER://127.0.0.1:{port}"})
        cluster_id = random_cluster_id()
        script = start_script(node, cluster_id, settings, kafka_root=self.home,
                              properties_path=f"{work}/server.properties")
        log = open(f"{work}/server.log", "wb")  # noqa: SIM115 - lives as long as the process
        process = subprocess.Popen(["sh", "-c", script], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_api_versions("127.0.0.1", port)
        segment_dir = f"{work}/data/__cluster_metadata-0"
        command = dump_log_command(segment_dir, self.home)

        def dump() -> str:
            return subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False).stdout

        endpoint = ControllerEndpoint("127.0.0.1", port, lambda: DumpLogSource(dump), self.session_timeout_ms,
                                      settings, cluster_id, f"{self.home} controller on 127.0.0.1:{port}")
        self.current = (settings, process, endpoint, work)
        return endpoint

    def close(self) -> None:
        if self.current is None:
            return
        _, process, _, work = self.current
        self.current = None
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(work, ignore_errors=True)


def local_wire_target(options: dict[str, str]) -> Target:
    from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
    from isrcheck.adapters.options import float_option, int_option

    home = options.get("kafka-home") or os.environ.get("KAFKA_HOME", "")
    provider = LocalControllers(home, int_option(options, "session-timeout-ms", 3000))
    return KafkaWireTarget(provider, timeout_s=float_option(options, "timeout", 30.0), name="kafka-local")


__all__ = ["CONTROLLER_PORT", "LocalControllers", "kafka_home_missing", "local_wire_target"]
