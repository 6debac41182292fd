"""isrcheck's pytest plugin (entry point `pytest11`): the markers its suites use, available in
any project that installs isrcheck."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long-running isrcheck test (campaigns, Spark, browser)")
    config.addinivalue_line("markers", "docker: needs a Docker engine or KAFKA_HOME; skipped when absent")
