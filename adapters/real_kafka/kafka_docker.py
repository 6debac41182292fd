"""kafka-docker: the kafka-wire target against a controller-only `apache/kafka` container.

One container per distinct controller settings (release/image, metadata.version, ELR,
cluster defaults), started on demand and kept while runs use it (formatting fixes those
settings, controller.md §9.3) by the launcher kafka-local uses (isrcheck.adapters.real_kafka.kafka_launcher);
observation reads the committed metadata log by Raft Fetch (isrcheck.adapters.kafka_wire.metadata_fetch), decoded
with the image's own kafka-metadata jar. Options: ``image=`` or ``version=`` (image tag),
``session-timeout-ms`` (default 3000 per controller), ``controllers=1|3``, ``timeout``.
`isrcheck ... --adapter kafka-docker --kafka 3.9.0` picks `apache/kafka:3.9.0`.
"""

from __future__ import annotations

from isrcheck.adapters.base import Target, UnsupportedConfiguration
from isrcheck.adapters.kafka_wire.controller_endpoints import ControllerEndpoint
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.real_kafka.docker_engine import docker_unavailable
from isrcheck.adapters.real_kafka.kafka_launcher import DockerRunner, KafkaControllers
from isrcheck.adapters.real_kafka.kafka_properties import image_for

DEFAULT_SESSION_TIMEOUT_MS = 3000


class DockerControllers(KafkaControllers):
    """EndpointProvider: controller containers of the image for the run's release, started by the
    launcher `kafka-local` uses too (isrcheck.adapters.real_kafka.kafka_launcher)."""

    def __init__(self, options: dict[str, str], session_timeout_ms: int, controllers: int = 1) -> None:
        self.options = options
        super().__init__(None, session_timeout_ms, controllers)

    def endpoint_for(self, settings: ControllerSettings) -> ControllerEndpoint:
        reason = docker_unavailable()
        if reason is not None:
            raise UnsupportedConfiguration(reason)
        try:
            image = image_for(settings.release, self.options)
        except ValueError as error:
            raise UnsupportedConfiguration(str(error)) from None
        self.runner_factory = lambda: DockerRunner(image)
        return super().endpoint_for(settings)


def docker_wire_target(options: dict[str, str]) -> Target:
    from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
    from isrcheck.adapters.options import float_option, int_option

    controllers = int_option(options, "controllers", 1)
    timeout_ms = int_option(options, "session-timeout-ms", DEFAULT_SESSION_TIMEOUT_MS * controllers)
    provider = DockerControllers(options, timeout_ms, controllers)
    target = KafkaWireTarget(provider, timeout_s=float_option(options, "timeout", 30.0), name="kafka-docker")
    if controllers > 1:
        target.unsupported_operations = frozenset()
    return target
