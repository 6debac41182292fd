"""Verdicts against a running server (issue 13): a run the server cannot serve is skipped, not a
finding, and a metadata log without the server's header falls back to DescribeCluster v2 (which
once failed on both sides: the request and the response lacked their v2 fields)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .conftest import RunningServer, isrcheck


def test_a_release_the_fixed_server_does_not_run_is_skipped_and_exit_2(
        serve_controller: Callable[..., RunningServer]) -> None:
    server = serve_controller(release="3.9")
    done = isrcheck("run", "--adapter", server.adapter, "--kafka", "4.1", "--examples", "3", "--seed", "1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "SKIPPED: the target refused this configuration: the controller under test differs" in done.stdout
    assert "FOUND" not in done.stdout and "CRASH" not in done.stdout


def test_without_the_servers_metadata_header_the_cluster_id_comes_from_describe_cluster(
        serve_controller: Callable[..., RunningServer], tmp_path: Path) -> None:
    server = serve_controller(release="3.9")
    elsewhere = tmp_path / "not-the-server-log"
    elsewhere.mkdir()
    (elsewhere / "__cluster_metadata.jsonl").write_text("")  # a log, but not this server's: no header
    adapter = f"kafka-wire,bootstrap={server.host}:{server.port},metadata-log={elsewhere}"
    done = isrcheck("run", "--adapter", adapter, "--kafka", "3.9", "--examples", "2", "--seed", "1")
    assert "TypeError" not in done.stdout + done.stderr
    assert "closed the connection" not in done.stdout, done.stdout


def test_a_metadata_log_directory_without_a_log_is_an_environment_error(
        serve_controller: Callable[..., RunningServer], tmp_path: Path) -> None:
    server = serve_controller(release="3.9")
    adapter = f"kafka-wire,bootstrap={server.host}:{server.port},metadata-log={tmp_path}"
    done = isrcheck("run", "--adapter", adapter, "--kafka", "3.9", "--examples", "2")
    assert done.returncode == 2
    assert done.stderr.strip() == (f"isrcheck run: error: kafka-wire: metadata-log={tmp_path} holds no metadata "
                                   "log (__cluster_metadata.jsonl): give the server's --metadata-log")
