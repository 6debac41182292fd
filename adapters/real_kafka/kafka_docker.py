"""kafka-docker: the kafka-wire target against a controller-only `apache/kafka` container.

One container per distinct controller settings (release/image, metadata.version, ELR,
cluster defaults), started on demand and kept while runs use it (formatting fixes those
settings, controller.md §9.3); observation reads the container's metadata log with
`kafka-dump-log.sh` (isrcheck.adapters.kafka_wire.kafka_dump_log). Options: ``image=`` or ``version=`` (image tag),
``session-timeout-ms`` (default 3000), ``timeout``. `isrcheck ... --adapter kafka-docker
--kafka 3.9.0` picks `apache/kafka:3.9.0`.
"""

from __future__ import annotations

from collections import OrderedDict

from isrcheck.adapters.base import Target, UnsupportedConfiguration
from isrcheck.adapters.kafka_wire.controller_endpoints import ControllerEndpoint
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.kafka_wire.kafka_dump_log import DumpLogSource
from isrcheck.adapters.real_kafka.kafka_containers import ControllerContainer, docker_unavailable
from isrcheck.adapters.real_kafka.kafka_properties import image_for

DEFAULT_SESSION_TIMEOUT_MS = 3000


class DockerControllers:
    """EndpointProvider: controller containers, at most `keep` running."""

    def __init__(self, options: dict[str, str], session_timeout_ms: int, keep: int = 1) -> None:
        self.options = options
        self.session_timeout_ms = session_timeout_ms
        self.keep = keep
        self.running: OrderedDict[ControllerSettings, tuple[ControllerContainer, ControllerEndpoint]] = OrderedDict()

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        if settings in self.running:
            self.running.move_to_end(settings)
            return self.running[settings][1]
        reason = docker_unavailable()
        if reason is not None:
            raise UnsupportedConfiguration(reason)
        try:
            image = image_for(settings.release, self.options)
        except ValueError as error:
            raise UnsupportedConfiguration(str(error)) from None
        while len(self.running) >= self.keep:
            self.running.popitem(last=False)[1][0].stop()
        node = ControllerContainer(image, settings, self.session_timeout_ms)
        host, port = node.start()
        endpoint = ControllerEndpoint(host, port, lambda: DumpLogSource(node.dump), self.session_timeout_ms,
                                      settings, node.cluster_id, f"{image} on {host}:{port}")
        self.running[settings] = (node, endpoint)
        return endpoint

    def close(self) -> None:
        while self.running:
            self.running.popitem()[1][0].stop()


def docker_wire_target(options: dict[str, str]) -> Target:
    from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
    from isrcheck.adapters.options import float_option, int_option

    timeout_ms = int_option(options, "session-timeout-ms", DEFAULT_SESSION_TIMEOUT_MS)
    provider = DockerControllers(options, timeout_ms)
    return KafkaWireTarget(provider, timeout_s=float_option(options, "timeout", 30.0), name="kafka-docker")
