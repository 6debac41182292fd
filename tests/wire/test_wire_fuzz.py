"""Fuzz the server with malformed frames over many TCP connections; it must stay up.

Each case is sent on its own connection (the server closes a connection at the first bad frame,
as Kafka does), from several threads at once; some cases are preceded by a valid request on the
same connection, which must still be answered first.  Afterwards ApiVersions on a fresh
connection must answer correctly.  Without ``adapters/wire/guard.py`` the hostile-count cases
abort the whole test process inside kio's Rust reader.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable

import pytest
from isrcheck.adapters.reference_server.server import KafkaProtocolServer
from isrcheck.adapters.wire import KafkaConnection, VersionRange
from isrcheck.adapters.wire.apis import API_TABLE, API_VERSIONS, DESCRIBE_CLUSTER, lookup
from isrcheck.adapters.wire.codec import MAX_FRAME_BYTES, decode_response, encode_request, frame, parse_frame_size
from kio.schema.errors import ErrorCode
from kio.static.primitive import i16

from .conftest import DummyHandler
from .rawnet import send_and_drain
from .samples import HOSTILE_COUNTS, minimal, mutate, valid_payloads

Case = tuple[str, bytes]

UNKNOWN_KEYS = [key for key in range(-5, 80) if key not in API_TABLE]


def _header(key: int, version: int, correlation_id: int, flexible: bool) -> bytes:
    return (
        i16(key).to_bytes(2, "big", signed=True)
        + i16(version).to_bytes(2, "big", signed=True)
        + correlation_id.to_bytes(4, "big", signed=True)
        + b"\xff\xff"  # null client_id
        + (b"\x00" if flexible else b"")
    )


def make_cases(rng: random.Random, count: int) -> list[Case]:
    requests = [payload for is_request, _, _, payload in valid_payloads() if is_request]
    entries = [entry for spec in API_TABLE.values() for entry in spec.versions.values()]
    generators: dict[str, Callable[[], bytes]] = {
        "random-frame": lambda: frame(rng.randbytes(rng.randint(0, 64))),
        "random-bytes": lambda: rng.randbytes(rng.randint(1, 16)),
        "truncated": lambda: (lambda f: f[: rng.randrange(1, len(f))])(frame(rng.choice(requests))),
        "huge-size": lambda: rng.randint(MAX_FRAME_BYTES + 1, 2**31 - 1).to_bytes(4, "big") + rng.randbytes(8),
        "negative-size": lambda: rng.randint(-(2**31), -1).to_bytes(4, "big", signed=True) + rng.randbytes(8),
        "unknown-key": lambda: frame(
            _header(rng.choice(UNKNOWN_KEYS), rng.randint(0, 20), 1, rng.random() < 0.5) + rng.randbytes(8)
        ),
        "bad-version": lambda: (
            lambda spec: frame(
                _header(spec.api_key, rng.choice([-1, spec.version_range.max_version + 1, 999]), 1, True)
                + rng.randbytes(8)
            )
        )(rng.choice([s for s in API_TABLE.values() if s.api_key != API_VERSIONS])),
        "api-versions-bad-version": lambda: frame(_header(API_VERSIONS, rng.choice([-1, 5, 77]), 1, True)),
        "garbage-body": lambda: (
            lambda entry: frame(
                _header(entry.api_key, entry.api_version, 1, entry.request.__flexible__)
                + rng.randbytes(rng.randint(0, 40))
            )
        )(rng.choice(entries)),
        "mutated": lambda: frame(mutate(rng, rng.choice(requests))),
        "hostile-count": lambda: (
            lambda payload: frame(
                payload[: (cut := rng.randrange(8, len(payload) + 1))] + rng.choice(HOSTILE_COUNTS) + payload[cut:]
            )
        )(rng.choice(requests)),
    }
    names = sorted(generators)
    return [(name, generators[name]()) for name in (names[i % len(names)] for i in range(count))]


def run_cases(address: tuple[str, int], cases: list[Case], threads: int, seed: int) -> Counter[str]:
    """Send every case (sometimes after a valid request) and check the server's reaction."""
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    lock = threading.Lock()
    valid = encode_request(minimal(lookup(DESCRIBE_CLUSTER, 0).request), 12345)

    def worker(index: int) -> None:
        rng = random.Random(seed + index)
        for name, data in cases[index::threads]:
            prefixed = rng.random() < 0.25
            received, closed = send_and_drain(address, (valid if prefixed else b"") + data, timeout_s=5.0)
            problem = None
            if not closed:
                problem = "server kept the connection open after EOF"
            elif prefixed:
                size = parse_frame_size(received[:4]) if len(received) >= 4 else -1
                if size < 0 or decode_response(received[4 : 4 + size], DESCRIBE_CLUSTER, 0)[0] != 12345:
                    problem = "valid request before the bad frame was not answered"
                received = received[4 + size :]
            if name == "api-versions-bad-version" and problem is None:
                _, response = decode_response(received[4:], API_VERSIONS, 0)
                if response.error_code != ErrorCode.unsupported_version:
                    problem = f"ApiVersions answered {response.error_code.name}"
            with lock:
                outcomes[name] += 1
                if problem is not None:
                    failures.append(f"{name}: {problem}: {data[:40].hex()}")

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert failures == []
    return outcomes


def check_still_serving(server: KafkaProtocolServer) -> None:
    with KafkaConnection(*server.address, timeout_s=5.0) as conn:
        assert conn.api_versions[API_VERSIONS] == VersionRange(0, 4)
        assert conn.api_versions[DESCRIBE_CLUSTER] == VersionRange(0, 2)
        assert conn.api_versions_response.error_code == ErrorCode.none
        assert conn.request(minimal(lookup(DESCRIBE_CLUSTER, 2).request)).error_code == ErrorCode.none


def test_fuzz_malformed_frames(server: KafkaProtocolServer) -> None:
    cases = make_cases(random.Random(7), 3000)
    outcomes = run_cases(server.address, cases, threads=6, seed=100)
    assert sum(outcomes.values()) == 3000 and len(outcomes) == 11
    check_still_serving(server)
    stats = server.stats()
    assert stats.connections_accepted >= 3000
    assert stats.closed_bad_input >= 2000  # most cases are rejected, not answered
    assert stats.closed_handler_error == 0


@pytest.mark.slow
def test_fuzz_malformed_frames_long() -> None:
    with KafkaProtocolServer(DummyHandler()) as server:
        for round_ in range(10):
            run_cases(server.address, make_cases(random.Random(round_), 5000), threads=8, seed=1000 * round_)
            check_still_serving(server)
