"""kafka-local: the kafka-wire target against controller-only processes of an unpacked Kafka
distribution (`KAFKA_HOME`, any release the profiles know, including 3.3/3.5 which have no
`apache/kafka` image). Same properties and formatting as the containers
(adapters.kafka_properties); the metadata log is read with the distribution's own
`kafka-dump-log.sh`. Options: ``kafka-home=DIR`` (default $KAFKA_HOME), ``session-timeout-ms``.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from adapters.base import Target, UnsupportedConfiguration
from adapters.controller_endpoints import ControllerEndpoint
from adapters.controller_settings import ControllerSettings
from adapters.kafka_containers import random_cluster_id, wait_for_api_versions
from adapters.kafka_properties import CONTROLLER_PORT, controller_node, start_script
from adapters.metadata_fetch import RaftFetchSource
from adapters.metadata_schema import RecordDecoder


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
    low, high = (int(p) for p in os.environ.get("ISRCHECK_KAFKA_PORTS", "20000-29999").split("-"))
    for port in random.sample(range(low, high + 1), min(200, high - low + 1)):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port in {low}-{high}")


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
        decoder = RecordDecoder.for_kafka_home(self.home)
        endpoint = ControllerEndpoint("127.0.0.1", port, lambda: RaftFetchSource("127.0.0.1", port, decoder),
                                      self.session_timeout_ms,
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
    from adapters.adapter_options import float_option, int_option
    from adapters.kafka_wire import KafkaWireTarget

    home = options.get("kafka-home") or os.environ.get("KAFKA_HOME", "")
    provider = LocalControllers(home, int_option(options, "session-timeout-ms", 3000))
    return KafkaWireTarget(provider, timeout_s=float_option(options, "timeout", 30.0), name="kafka-local")


__all__ = ["CONTROLLER_PORT", "LocalControllers", "kafka_home_missing", "local_wire_target"]
