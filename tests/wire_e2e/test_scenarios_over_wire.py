"""(a) The bundled scenario suite through kafka-wire agrees with the reference (docs/wire.md).

Every scenario must pass or be skipped for a reason that is not "the wire could not do it":
release specifiers, the cluster level, or (for a fixed server) a configuration that server was
not started with.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from .conftest import RunningServer, isrcheck

ALLOWED_SKIPS = re.compile(r"expectations hold for Kafka|does not support the cluster level|"
                           r"configuration not supported: the controller under test differs")


def check_output(stdout: str, *, fixed_server: bool) -> tuple[int, int]:
    lines = stdout.strip().splitlines()
    closing = lines[-1]
    passed, failed, skipped = (int(n) for n in re.findall(r"\d+", closing))
    assert failed == 0, "\n".join(line for line in lines if line.startswith("FAIL"))
    for line in lines:
        if line.startswith("SKIP"):
            reason = line.split(" — ", 1)[1]
            assert ALLOWED_SKIPS.search(reason), line
            if not fixed_server:
                assert "controller under test differs" not in reason, line
    return passed, skipped


@pytest.mark.parametrize("release", ["3.3", "3.9"])
def test_scenarios_against_a_running_serve_controller(
    serve_controller: Callable[..., RunningServer], release: str
) -> None:
    server = serve_controller(release=release)
    result = isrcheck("scenario", "conformance/scenarios", "--adapter", f"kafka-wire,metadata-log={server.log_dir}",
                      "--bootstrap", f"{server.host}:{server.port}", "--kafka", release)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    passed, _ = check_output(result.stdout, fixed_server=True)
    assert passed >= 130


@pytest.mark.parametrize("release", ["3.5", "4.1"])
def test_scenarios_with_spawned_servers_cover_every_config(release: str) -> None:
    """Without --bootstrap kafka-wire starts one serve-controller per release/config: nothing
    is skipped for configuration, and 4.x restarts wait for real session expiry (§4.1)."""
    files = "conformance/scenarios" if release != "4.1" else "conformance/scenarios/broker_lifecycle.yaml"
    result = isrcheck("scenario", files, "--adapter", "kafka-wire,session-timeout-ms=400", "--kafka", release)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    passed, _ = check_output(result.stdout, fixed_server=False)
    assert passed >= 30


@pytest.mark.slow
@pytest.mark.parametrize("release", ["3.7", "3.8", "4.0", "4.1"])
def test_whole_suite_with_spawned_servers(release: str) -> None:
    result = isrcheck("scenario", "conformance/scenarios", "--adapter", "kafka-wire,session-timeout-ms=500",
                      "--kafka", release, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    check_output(result.stdout, fixed_server=False)
