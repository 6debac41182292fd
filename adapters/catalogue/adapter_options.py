"""`--adapter` specs with options: ``NAME[,KEY=VALUE...]`` for the wire and real-Kafka adapters.

Options travel inside the spec string, so the campaign's worker processes, the records and the
printed replay commands all carry them (docs/wire.md, docs/real-kafka.md):

* ``kafka-wire`` — ghost brokers against a controller. Without ``bootstrap`` it starts its own
  ``isrcheck serve-controller`` children (one per distinct release/config); with
  ``bootstrap=HOST:PORT,metadata-log=DIR`` it drives a running serve-controller, with
  ``bootstrap=HOST:PORT,kafka-home=DIR`` a running real KRaft controller (observed by Raft Fetch,
  decoded with DIR's kafka-metadata schemas; DIR may also be that jar). Options:
  ``session-timeout-ms`` (children's broker.session.timeout.ms, default 1000), ``mutant``
  (children serve a mutant), ``keep`` (children kept alive, default 2), ``timeout`` (seconds
  per request, default 10), ``cluster-id``.
* ``kafka-docker`` — the same against a controller-only ``apache/kafka`` container;
  ``image=apache/kafka:3.9.0`` or ``version=3.9.0`` pick the image, ``session-timeout-ms``.
* ``kafka-local`` — the same against an unpacked distribution: ``kafka-home=DIR`` (default $KAFKA_HOME).
* ``kafka-cluster`` — real brokers (isrcheck.adapters.real_kafka.kafka_cluster).
* ``kafka-jvm`` — Kafka's own controller classes in one JVM (docs/kafka-jvm.md): ``kafka-home=DIR``
  or ``classpath=A:B:DIR/*`` (default $KAFKA_HOME, else ``<repo>/../shared/kafka/<release>``),
  ``timeout`` (seconds per request, default 30), ``without=OP+OP`` (operations not generated).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from isrcheck.adapters.base import Target
from isrcheck.adapters.options import float_option, int_option
from isrcheck.contract.errors import UsageError

DEFAULT_WIRE_SESSION_TIMEOUT_MS = 1000


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    name, *parts = [p.strip() for p in spec.split(",")]
    options: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise UsageError(f"adapter {spec!r}: option {part!r} is not KEY=VALUE")
        options[key] = value
    return name, options


def host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UsageError(f"bootstrap {text!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def kafka_wire(options: dict[str, str]) -> Target:
    from isrcheck.adapters.kafka_wire.controller_endpoints import FixedEndpoint, ServeControllerProcesses
    from isrcheck.adapters.kafka_wire.target import KafkaWireTarget

    known = {"bootstrap", "metadata-log", "session-timeout-ms", "mutant", "keep", "timeout", "cluster-id",
             "kafka-home"}
    unknown = set(options) - known
    if unknown:
        raise UsageError(f"kafka-wire: unknown option(s) {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(known))})")
    session_timeout_ms = int_option(options, "session-timeout-ms", DEFAULT_WIRE_SESSION_TIMEOUT_MS)
    provider: Any
    if "bootstrap" in options and "kafka-home" in options:  # a running real controller, read by Raft Fetch
        from isrcheck.adapters.real_kafka.kafka_launcher import RunningController

        host, port = host_port(options["bootstrap"])
        provider = RunningController(host, port, options["kafka-home"], session_timeout_ms, options.get("cluster-id"))
    elif "bootstrap" in options:
        if "metadata-log" not in options:
            raise UsageError("kafka-wire with bootstrap=HOST:PORT needs metadata-log=DIR (the server's --metadata-log) "
                             "or, for a real KRaft controller, kafka-home=DIR (its release's schemas)")
        if "mutant" in options:
            raise UsageError("kafka-wire: mutant= applies to the serve-controller it starts, not to bootstrap=")
        host, port = host_port(options["bootstrap"])
        provider = FixedEndpoint(host, port, options["metadata-log"], session_timeout_ms, options.get("cluster-id"))
    else:
        provider = ServeControllerProcesses(session_timeout_ms, options.get("mutant"), int_option(options, "keep", 2))
    return KafkaWireTarget(provider, timeout_s=float_option(options, "timeout", 10.0))


def kafka_docker(options: dict[str, str]) -> Target:
    from isrcheck.adapters.real_kafka.kafka_docker import docker_wire_target

    return docker_wire_target(options)


def kafka_local(options: dict[str, str]) -> Target:
    from isrcheck.adapters.real_kafka.kafka_local import local_wire_target

    return local_wire_target(options)


def kafka_cluster(options: dict[str, str]) -> Target:
    from isrcheck.adapters.real_kafka.kafka_cluster import cluster_target

    return cluster_target(options)


def kafka_jvm(options: dict[str, str]) -> Target:
    from isrcheck.adapters.kafka_jvm.target import KafkaJvmTarget

    unknown = set(options) - {"kafka-home", "classpath", "timeout", "without"}
    if unknown:
        raise UsageError(f"kafka-jvm: unknown option(s) {', '.join(sorted(unknown))} "
                         "(known: classpath, kafka-home, timeout, without)")
    without = tuple(op for op in options.get("without", "").split("+") if op)
    return KafkaJvmTarget(options.get("classpath"), options.get("kafka-home"), float_option(options, "timeout", 30.0),
                          without=without)


FACTORIES: dict[str, Callable[[dict[str, str]], Target]] = {
    "kafka-wire": kafka_wire, "kafka-docker": kafka_docker, "kafka-local": kafka_local,
    "kafka-cluster": kafka_cluster, "kafka-jvm": kafka_jvm,
}


def is_option_spec(spec: str) -> bool:
    return spec.split(",", 1)[0].strip() in FACTORIES


def make_option_target(spec: str) -> Target:
    name, options = parse_spec(spec)
    return FACTORIES[name](options)


def environment_problem(spec: str, release: str | None = None) -> str | None:
    """What keeps an adapter from running at all here, in one line, found before any campaign
    starts: no Docker engine, no Kafka distribution, nothing listening at `bootstrap`, no metadata
    log, an unknown mutant for the served controller. None when nothing is known to be wrong
    (what depends on a run's release or configuration is still found by `open`, as a skip; with
    `release`, a container adapter's image is looked for on the engine too)."""
    if not is_option_spec(spec):
        return None
    name, options = parse_spec(spec)
    if name == "kafka-docker" or (name == "kafka-cluster" and options.get("containers")):
        from isrcheck.adapters.real_kafka.docker_engine import docker_unavailable, missing_image
        from isrcheck.adapters.real_kafka.kafka_properties import image_for

        reason = docker_unavailable()
        if reason is None and release is not None:
            try:
                reason = missing_image(image_for(release, options))
            except ValueError as error:
                reason = str(error)
        return None if reason is None else f"{name}: {reason}"
    if name == "kafka-local":
        from isrcheck.adapters.real_kafka.kafka_local import kafka_home_missing

        reason = kafka_home_missing(options.get("kafka-home") or os.environ.get("KAFKA_HOME"))
        return None if reason is None else f"kafka-local: {reason} (an unpacked Kafka distribution, docs/real-kafka.md)"
    if name == "kafka-wire":
        return wire_problem(options)
    return None


def check_environment(spec: str, release: str | None = None) -> None:
    """A usage error (exit 2, one line) when the adapter cannot run here at all (for `release`)."""
    problem = environment_problem(spec, release)
    if problem is not None:
        raise UsageError(problem)


def wire_problem(options: dict[str, str]) -> str | None:
    mutant_id = options.get("mutant")
    if mutant_id is not None:
        from isrcheck.reference_impl.mutants import CATALOGUE

        mutant = CATALOGUE.get(mutant_id)
        if mutant is None:
            return f"kafka-wire: unknown mutant {mutant_id!r} (known: {', '.join(CATALOGUE)})"
        if mutant.controller_class is None:
            return (f"kafka-wire: mutant {mutant_id} is {mutant.level}-level; "
                    "the served controller takes controller mutants")
    if "bootstrap" not in options:
        return None
    host, port = host_port(options["bootstrap"])
    try:
        with socket.create_connection((host, port), timeout=5):
            pass
    except OSError as error:
        return f"kafka-wire: no controller listening at {host}:{port} ({error.strerror or error})"
    log = options.get("metadata-log")
    if log is not None:
        from isrcheck.adapters.kafka_wire.metadata_log import log_path

        file = log_path(log) if Path(log).is_dir() else Path(log)
        if not file.is_file():
            return (f"kafka-wire: metadata-log={log} holds no metadata log ({file.name}): "
                    "give the server's --metadata-log")
    return None


def with_cli_options(spec: str, bootstrap: str | None = None, kafka: str | None = None) -> str:
    """Fold the `--bootstrap` flag into a kafka-wire spec, and a full `--kafka X.Y.Z` release into
    a kafka-docker/kafka-cluster spec as its image version (the profile only keeps X.Y)."""
    if not is_option_spec(spec):
        if bootstrap is not None:
            raise UsageError(f"--bootstrap applies to --adapter kafka-wire, not {spec!r}")
        return spec
    name, options = parse_spec(spec)
    if bootstrap is not None:
        if name != "kafka-wire":
            raise UsageError(f"--bootstrap applies to --adapter kafka-wire, not {name!r}")
        options.setdefault("bootstrap", bootstrap)
    if kafka is not None and name in ("kafka-docker", "kafka-cluster") and kafka.count(".") == 2:
        options.setdefault("version", kafka)
    return ",".join([name, *(f"{k}={v}" for k, v in options.items())])
