"""(b) The engine over the wire: nothing against the plain serve-controller, and the
controller-level mutants found when serve-controller serves them (`kafka-wire,mutant=ID`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from isrcheck.conformance.engine.campaign import CampaignConfig, CampaignResult, run_campaign

from .conftest import RunningServer


def campaign(adapter: str, release: str = "3.9", examples: int = 20, steps: int = 25, collect: bool = False,
             seed: int = 1, batch_size: int = 10) -> CampaignResult:
    """Collect mode skips shrinking (costly over the wire). The generator reads only the
    reference, so a seed finds a mutant over the wire exactly where a reference-only campaign with
    the same unsupported operations (no fail-over) does — seed 1 finds all four in 60 runs."""
    return run_campaign(CampaignConfig(adapter=adapter, release=release, examples=examples, steps=steps, seed=seed,
                                       batch_size=batch_size, stop_at_first=not collect))


def test_engine_finds_nothing_against_the_plain_server(serve_controller: Callable[..., RunningServer]) -> None:
    server = serve_controller(release="3.9")
    result = campaign(server.adapter, examples=25)
    assert result.runs >= 25 and result.steps > 300
    assert dict(result.signatures) == {}, result.examples
    assert result.outcomes["pass"] == result.runs


@pytest.mark.parametrize("mutant", ["B01", "B02", "D1", "D12"])
def test_engine_finds_controller_mutants_over_the_wire(mutant: str) -> None:
    result = campaign(f"kafka-wire,session-timeout-ms=1000,mutant={mutant}", examples=60, steps=30, collect=True,
                      seed=1)
    assert result.found, f"{mutant} not found in {result.runs} runs"
    assert result.outcomes["finding"] >= 1 and not {"timeout", "crash", "error"} & set(result.outcomes)


def test_negative_control_is_not_flagged() -> None:
    """A 3 s session: with 1 s, a loaded machine (load 13-20, the full suite beside container tests)
    let the served controller's wall-clock sessions expire between two of a run's steps, and the
    fenced brokers made a leaderless partition the reference did not have."""
    result = campaign("kafka-wire,session-timeout-ms=3000,mutant=N1", examples=15)
    assert not result.found, result.examples
    assert result.runs >= 15 and result.outcomes["pass"] == result.runs


@pytest.mark.slow
@pytest.mark.parametrize("release", ["3.3", "3.5", "3.7", "4.0", "4.1"])
def test_engine_finds_nothing_on_every_release(release: str) -> None:
    result = campaign("kafka-wire,session-timeout-ms=600", release=release, examples=30, steps=30)
    assert not result.found, result.examples


@pytest.mark.slow
@pytest.mark.parametrize("mutant", ["B14", "B21"])
def test_engine_finds_more_mutants_over_the_wire(mutant: str) -> None:
    result = campaign(f"kafka-wire,session-timeout-ms=1000,mutant={mutant}", examples=80, collect=True)
    assert result.found


def free_port(low: int = 25000, high: int = 26000) -> int:
    """A port of this suite's range that nothing listens on now."""
    import socket

    for port in range(low, high):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port in 25000-25999")


def test_a_bootstrap_campaign_connects_and_reads_the_log_once(
        serve_controller: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run of a campaign against `bootstrap=` reuses the connection and the metadata image
    (each run's endpoint once compared unequal to the last, so every run reconnected and replayed
    the whole log from its start: a campaign slowed down as it went)."""
    from isrcheck.adapters.kafka_wire import controller_endpoints, target

    opened: list[str] = []
    connected: list[int] = []

    class CountedTail(controller_endpoints.MetadataLogTail):
        def __init__(self, *args: object, **kwargs: object) -> None:
            opened.append(str(args[0]))
            super().__init__(*args, **kwargs)

    class CountedConnection(target.KafkaConnection):
        def __init__(self, *args: object, **kwargs: object) -> None:
            connected.append(int(str(args[1])))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(controller_endpoints, "MetadataLogTail", CountedTail)
    monkeypatch.setattr(target, "KafkaConnection", CountedConnection)
    server = serve_controller("--port", str(free_port()), release="3.9")
    result = campaign(server.adapter, examples=8, steps=10)
    assert result.runs >= 8 and not result.found
    assert len(opened) == 1, opened
    assert connected == [server.port]
