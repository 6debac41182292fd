"""(c) Thousands of malformed frames against serve-controller; afterwards ApiVersions still answers
with the release's ranges and the reference still serves a fake broker.

The server is built by the command's own `build_server` (in-process, so its counters can be read);
the cases and checks are the wire layer's fuzz helpers (tests/wire/test_wire_fuzz.py). Mutated
frames that still decode reach the real handler: it must answer them, never crash.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import pytest
from isrcheck.adapters.kafka_wire.controller_endpoints import FixedEndpoint
from isrcheck.adapters.kafka_wire.target import KafkaWireTarget
from isrcheck.adapters.wire import KafkaConnection, VersionRange
from isrcheck.adapters.wire.apis import ALTER_PARTITION, API_VERSIONS, BROKER_REGISTRATION
from kio.schema.errors import ErrorCode
from wire.test_wire_fuzz import make_cases, run_cases

from isrcheck.cli import build_parser
from isrcheck.commands.serve_controller import build_server


def server_args(tmp_path: Path, release: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve-controller", "--port", "0", "--kafka", release,
                                      "--metadata-log", str(tmp_path), "--session-timeout-ms", "5000"])


@pytest.mark.parametrize(("release", "alter_partition"), [("3.3", (0, 2)), ("4.1", (2, 3))])
def test_fuzzed_serve_controller_keeps_serving(tmp_path: Path, release: str, alter_partition: tuple[int, int]) -> None:
    server, served = build_server(server_args(tmp_path, release))
    served.start_clock()
    with server:
        outcomes = run_cases(server.address, make_cases(random.Random(11), 3000), threads=6, seed=5)
        assert sum(outcomes.values()) == 3000
        stats = server.stats()
        assert stats.closed_handler_error == 0, "a decodable request made the reference handler fail"
        with KafkaConnection(*server.address, timeout_s=5.0) as connection:
            assert connection.api_versions_response.error_code == ErrorCode.none
            assert connection.api_versions[API_VERSIONS] == VersionRange(0, 4)
            assert connection.api_versions[ALTER_PARTITION] == VersionRange(*alter_partition)
            assert BROKER_REGISTRATION in connection.api_versions
        # ... and the controller behind it is still a working controller.
        target = KafkaWireTarget(FixedEndpoint(*server.address, str(tmp_path), 5000))
        try:
            target.open(release, {})
            for broker in (1, 2):
                assert target.execute("register_broker", {"broker": broker, "incarnation": "x"})["error"] == "NONE"
                assert target.execute("unfence_broker", {"broker": broker})["is_fenced"] is False
            assert target.execute("create_topic", {"topic": "t", "assignment": [[1, 2]]})["error"] == "NONE"
            assert target.observe("partition", {"topic": "t", "partition": 0})["isr"] == [1, 2]
        finally:
            target.shutdown()
    served.close()
