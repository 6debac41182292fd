"""Pytest fixtures for the reporting layer; the record sets themselves are in `report_fixtures`."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import write_fixture


@pytest.fixture
def records_dir(tmp_path: Path) -> Path:
    write_fixture(tmp_path / "records")
    return tmp_path / "records"


@pytest.fixture(scope="session")
def shared_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture written once per session, for the tests that only read it (Spark is slow)."""
    directory = tmp_path_factory.mktemp("shared") / "records"
    write_fixture(directory)
    return directory


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local Spark session for the run; tests needing it skip when Java or pyspark is absent."""
    if shutil.which("java") is None:
        pytest.skip("Spark tests need Java 17+ on PATH")
    pytest.importorskip("pyspark")
    from isrcheck.conformance.engine.spark_session import start_session

    session = start_session("local[2]")
    yield session
    session.stop()


@pytest.fixture
def write_lines(tmp_path: Path) -> Callable[..., Path]:
    """Write raw lines to a .jsonl file and return its path."""

    def write(lines: list[str], name: str = "runs.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write
