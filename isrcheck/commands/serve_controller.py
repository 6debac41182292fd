"""`isrcheck serve-controller`: the reference controller (or a mutant) behind a Kafka listener.

Answers the controller APIs a fake broker uses (controller.md §9.1): ApiVersions,
BrokerRegistration, BrokerHeartbeat, UnregisterBroker, CreateTopics, CreatePartitions,
AlterPartition (the release's versions, §7), ElectLeaders, AlterPartitionReassignments and
DescribeCluster. Binds loopback by default and prints ``listening on HOST:PORT`` once ready;
runs until interrupted (or, with ``--stop-on-stdin-eof``, until its standard input ends: how a
parent that started it makes sure it never outlives the parent). Time is the wall clock
(`isrcheck.adapters.reference_server.served_controller`), so a broker that stops heartbeating is fenced after
``--session-timeout-ms`` (§4.3). With ``--metadata-log DIR`` every metadata record is appended to
``DIR/__cluster_metadata.jsonl`` before the request that wrote it is answered (docs/wire.md).
"""

from __future__ import annotations

import argparse
import base64
import gc
import math
import os
import shutil
import signal
import sys
import threading
import uuid
from typing import Any

from isrcheck.adapters.base import UnsupportedConfiguration
from isrcheck.adapters.kafka_wire.controller_settings import ControllerSettings
from isrcheck.adapters.reference_server.controller_handler import ReferenceControllerHandler
from isrcheck.adapters.reference_server.served_controller import ServedController
from isrcheck.adapters.reference_server.server import (
    DEFAULT_FRAME_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    KafkaProtocolServer,
)
from isrcheck.contract.errors import UsageError
from isrcheck.reference_impl.controller import Controller
from isrcheck.reference_impl.mutants import CATALOGUE
from isrcheck.reference_impl.release import NEWEST, PROFILES, profile_named

DEFAULT_CLUSTER_ID = base64.urlsafe_b64encode(uuid.UUID("5ca1ab1e-0000-4000-8000-15c4ec000001").bytes).decode()[:22]
DEFAULT_NODE_ID = 3000


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve-controller", help="serve the reference controller over the Kafka protocol",
        description="Run the reference KRaft controller (or a mutant) as a Kafka-protocol server that fake "
        "brokers - e.g. the kafka-wire adapter - can drive. Prints 'listening on HOST:PORT' when ready.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default 0: any free port)")
    parser.add_argument("--kafka", default=NEWEST, metavar="RELEASE", help=f"release profile ({', '.join(PROFILES)})")
    parser.add_argument("--mutant", help="serve this controller mutant instead (see 'isrcheck mutants')")
    parser.add_argument("--session-timeout-ms", type=int, default=9000, metavar="MS",
                        help="broker.session.timeout.ms: heartbeat silence before fencing (default 9000)")
    parser.add_argument("--metadata-log", metavar="DIR", help="append every metadata record to DIR as JSON lines")
    parser.add_argument("--metadata-version", metavar="MV",
                        help="metadata.version, e.g. 3.5-IV2 (default: the release's)")
    elr = parser.add_mutually_exclusive_group()
    elr.add_argument("--elr", dest="elr", action="store_true", default=None, help="enable eligible leader replicas")
    elr.add_argument("--no-elr", dest="elr", action="store_false", help="disable eligible leader replicas")
    parser.add_argument("--unclean-leader-election", action="store_true",
                        help="cluster default unclean.leader.election.enable=true")
    parser.add_argument("--min-insync-replicas", type=int, default=1, metavar="N", help="cluster default (default 1)")
    parser.add_argument("--cluster-id", default=DEFAULT_CLUSTER_ID, help="cluster id brokers must register with")
    parser.add_argument("--node-id", type=int, default=DEFAULT_NODE_ID, help="this controller's node id")
    parser.add_argument("--stop-on-stdin-eof", action="store_true",
                        help="stop when standard input reaches end of file, e.g. because the process holding "
                        "the other end of the pipe exited or was killed")
    parser.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT_S, metavar="SECONDS",
                        help="close a connection silent this long between requests (default 600, Kafka's "
                        "connections.max.idle.ms)")
    parser.add_argument("--frame-timeout", type=float, default=DEFAULT_FRAME_TIMEOUT_S, metavar="SECONDS",
                        help="close a connection whose request is not complete this long after its first byte "
                        "(default 30)")
    parser.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS, metavar="N",
                        help=f"close new connections beyond N open ones (default {DEFAULT_MAX_CONNECTIONS})")
    parser.add_argument("--remove-metadata-log-at-exit", action="store_true",
                        help="delete the --metadata-log directory when stopping (a parent that starts a throw-away "
                        "controller may be killed before it can clean up after it)")
    parser.set_defaults(handler=run)


def settings_from(args: argparse.Namespace) -> ControllerSettings:
    try:
        release = profile_named(args.kafka).name
    except ValueError as error:
        raise UsageError(str(error)) from None
    config: dict[str, Any] = {"unclean_leader_election_enable": args.unclean_leader_election,
                              "min_insync_replicas": args.min_insync_replicas}
    if args.metadata_version is not None:
        config["metadata_version"] = args.metadata_version
    if args.elr is not None:
        config["eligible_leader_replicas"] = args.elr
    try:
        return ControllerSettings.for_run(release, config)
    except UnsupportedConfiguration as error:
        raise UsageError(str(error)) from None


def build_server(args: argparse.Namespace) -> tuple[KafkaProtocolServer, ServedController]:
    settings = settings_from(args)
    if args.session_timeout_ms < 1:
        raise UsageError("--session-timeout-ms must be positive")
    controller_class: type[Controller] = Controller
    if args.mutant is not None:
        mutant = CATALOGUE.get(args.mutant)
        if mutant is None:
            raise UsageError(f"unknown mutant {args.mutant!r} (known: {', '.join(CATALOGUE)})")
        if mutant.controller_class is None:
            raise UsageError(f"mutant {mutant.id} is {mutant.level}-level; serve-controller serves controller mutants")
        controller_class = mutant.controller_class
    controller = controller_class(settings.release, settings.cluster_config(args.session_timeout_ms))
    served = ServedController(controller, settings, session_timeout_ms=args.session_timeout_ms,
                              metadata_log_dir=args.metadata_log, mutant=args.mutant, cluster_id=args.cluster_id)
    handler = ReferenceControllerHandler(served, cluster_id=args.cluster_id, node_id=args.node_id,
                                         host=args.host, port=args.port)
    announce = lambda line: print(line, flush=True)  # noqa: E731 - the line wrappers wait for
    for name, value in (("--idle-timeout", args.idle_timeout), ("--frame-timeout", args.frame_timeout)):
        if not math.isfinite(value) or value <= 0:
            raise UsageError(f"{name} must be a positive, finite number of seconds")
    if args.max_connections < 1:
        raise UsageError("--max-connections must be at least 1")
    try:
        server = KafkaProtocolServer(handler, args.host, args.port, announce=announce, idle_timeout_s=args.idle_timeout,
                                     frame_timeout_s=args.frame_timeout, max_connections=args.max_connections)
    except ValueError as error:
        raise UsageError(str(error)) from None
    return server, served


def run(args: argparse.Namespace) -> int:
    """Serve on a background thread; the main thread waits for SIGINT/SIGTERM (or the end of stdin),
    then stops cleanly."""
    server, served = build_server(args)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    if args.stop_on_stdin_eof:  # from the start: a parent may die before the server listens
        threading.Thread(target=stop_at_end_of_input, args=(stop,), name="stdin-eof", daemon=True).start()
    # The server allocates many short-lived kio objects per request; moving the startup heap out
    # of the collector's sight and collecting less often is worth ~10% of a round trip.
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)
    try:
        server.start()
    except RuntimeError as error:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {error.__cause__ or error}") from None
    served.start_clock()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        served.close()
        if args.remove_metadata_log_at_exit and args.metadata_log is not None:
            shutil.rmtree(args.metadata_log, ignore_errors=True)
    print("serve-controller: stopped", file=sys.stderr)
    return 0


def stop_at_end_of_input(stop: threading.Event) -> None:
    """The kernel closes a process's end of a pipe however it ends, SIGKILL included, so end of
    file on stdin means the parent is gone (or let go of us): portable, unlike a parent-death
    signal, which Linux sends when the parent's *thread* ends."""
    try:
        while os.read(sys.stdin.fileno(), 4096):
            pass
    except OSError:
        pass
    stop.set()
