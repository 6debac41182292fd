"""Where a real Kafka node runs: a process of an unpacked release (`ProcessHost`) or an
`apache/kafka` container (`ContainerHost`). Everything else about a node — its properties, ports,
proxies, log and data directories, how it is formatted and when it counts as started — is the
same code for both (`cluster_processes`, `kafka_launcher`), so a container run tests exactly
what a process run tests.

A container shares the host's network namespace (`network_mode=host`): its listeners are the
same 127.0.0.1 ports a process would bind, so the TCP proxies a nemesis cuts or holds sit in
front of a container exactly as in front of a process. Its run directory (properties, data, logs)
is bind-mounted at the same path, and it runs as the invoking user, so logs are read, kept and
removed the same way. What differs is how a node is signalled:

| fault | process | container |
|---|---|---|
| crash | SIGKILL to its process group | `docker kill` (SIGKILL) |
| clean shutdown | SIGTERM (SIGKILL after the timeout: `killed`) | `docker stop` (SIGTERM, SIGKILL after the timeout) |
| pause / resume | SIGSTOP / SIGCONT to the group | `docker pause` / `unpause` (cgroup freezer) |

Host networking needs a Linux engine (Docker Engine, or Docker Desktop 4.34+ with host
networking switched on): docs/real-kafka.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from isrcheck.adapters.real_kafka.docker_engine import container_user, session_labels


class NodeStartError(RuntimeError):
    """The host could not start a node (the engine refused the container, a tool did not run)."""


class NodeHandle(Protocol):
    """One started node: a process group or a container."""

    paused: bool
    """Stopped by `pause` (SIGSTOP, `docker pause`) and not resumed since."""

    def alive(self) -> bool: ...

    def kill(self) -> None:
        """SIGKILL (a crash), and wait until it is gone."""
        ...

    def terminate(self, timeout_s: float) -> bool:
        """SIGTERM (a clean shutdown); SIGKILL when it has not ended within `timeout_s`. Whether
        it was killed so: its shutdown did not complete, which Kafka takes for an unclean one (a
        broker writes its clean-shutdown file last, `LogManager.shutdown`, 4.1.1)."""
        ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...


class NodeHost(Protocol):
    description: str
    kafka_root: str
    """Where the release's bin/ and libs/ are, as the node sees it."""

    def share(self, path: str) -> None:
        """Make `path` (a run directory) visible to the nodes at the same path."""
        ...

    def run_tool(self, argv: Sequence[str], env: Mapping[str, str], timeout_s: float) -> tuple[int, str]:
        """Run one of the release's tools (kafka-storage.sh, kafka-dump-log.sh) to its end."""
        ...

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str], stdout: Path) -> NodeHandle:
        """Start a node in the background, its console appended to `stdout`."""
        ...


# ---------------------------------------------------------------------------------------- process


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL this child when the thread that started it dies (Linux prctl)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class ProcessNode:
    process: subprocess.Popen[bytes]
    paused: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGCONT)
                os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=15)
        self.paused = False

    def terminate(self, timeout_s: float) -> bool:
        if not self.alive():
            return False
        self.resume()
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            return True
        return False

    def pause(self) -> None:
        if self.alive() and not self.paused:
            os.killpg(self.process.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.alive() and self.paused:
            os.killpg(self.process.pid, signal.SIGCONT)
        self.paused = False


@dataclass
class ProcessHost:
    """Nodes as processes of an unpacked release (`KAFKA_HOME`), each in its own process group,
    SIGKILLed by the kernel if the thread that started it dies."""

    home: Path
    description: str = ""

    def __post_init__(self) -> None:
        self.description = self.description or f"KAFKA_HOME={self.home}"

    @property
    def kafka_root(self) -> str:
        return str(self.home)

    def share(self, path: str) -> None:
        """A process sees the host's files already."""

    def run_tool(self, argv: Sequence[str], env: Mapping[str, str], timeout_s: float) -> tuple[int, str]:
        process = subprocess.Popen(list(argv), env={**os.environ, **env}, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent)
        try:
            output, _ = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return -9, output.decode(errors="replace") + f"\n(killed after {timeout_s:g} s)"
        return process.returncode, output.decode(errors="replace")

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str], stdout: Path) -> ProcessNode:
        with open(stdout, "ab") as out:
            process = subprocess.Popen(list(argv), env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent)
        return ProcessNode(process)


# ---------------------------------------------------------------------------------------- container


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\"'\"'") + "'"


@dataclass
class ContainerNode:
    container: Any
    """docker SDK container (testcontainers' `get_wrapped_container()`)."""
    paused: bool = False

    def status(self) -> str:
        try:
            self.container.reload()
        except Exception:  # removed: the reaper or a kill got there first
            return "removed"
        return str(self.container.status)

    def alive(self) -> bool:
        return self.status() in ("running", "paused", "restarting")

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.container.kill()
        self._wait_gone(15)
        self.paused = False

    def terminate(self, timeout_s: float) -> bool:
        """`docker stop`: SIGTERM, SIGKILL after the timeout — killed so when the container's exit
        code is 137 (128 + SIGKILL; the JVM ending on SIGTERM exits 143)."""
        if not self.alive():
            return False
        self.resume()
        with contextlib.suppress(Exception):
            self.container.stop(timeout=int(max(1, timeout_s)))
        killed = self.exit_code() == 137
        self._wait_gone(10)
        return killed

    def exit_code(self) -> int | None:
        """The stopped container's exit code (None when it is gone or still running)."""
        try:
            self.container.reload()
            state = self.container.attrs["State"]
        except Exception:  # removed: the reaper or a kill got there first
            return None
        return None if state.get("Running") else int(state.get("ExitCode", -1))

    def pause(self) -> None:
        if self.alive() and not self.paused:
            self.container.pause()
            self.paused = True

    def resume(self) -> None:
        if self.paused:
            with contextlib.suppress(Exception):
                self.container.unpause()
        self.paused = False

    def _wait_gone(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.remove()

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self.container.remove(force=True)


@dataclass
class ContainerHost:
    """Nodes as containers of `image` (an `apache/kafka` image: the release in /opt/kafka), on the
    host's network, with `mounts` (the run's directories) bind-mounted at their own paths."""

    image: str
    mounts: list[str] = field(default_factory=list)
    kafka_root: str = "/opt/kafka"
    description: str = ""
    started: list[ContainerNode] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.description = self.description or f"image {self.image}"

    def share(self, path: str) -> None:
        if path not in self.mounts:
            self.mounts.append(path)

    def _container(self, name: str, argv: Sequence[str], env: Mapping[str, str], stdout: Path | None) -> Any:
        from testcontainers.core.config import testcontainers_config
        from testcontainers.core.container import DockerContainer

        testcontainers_config.ryuk_disabled = True  # the session reaper removes what we start
        command = " ".join(_quote(word) for word in argv)
        if stdout is not None:
            command = f"exec {command} >> {_quote(str(stdout))} 2>&1"
        labels = session_labels()
        container = DockerContainer(self.image).with_command(["-c", command]).with_name(
            f"isrcheck-{name}-{uuid.uuid4().hex[:6]}")
        for key, value in env.items():
            container = container.with_env(key, value)
        for mount in self.mounts:
            container = container.with_volume_mapping(mount, mount, "rw")
        return container.with_kwargs(entrypoint=["sh"], network_mode="host", user=container_user(), labels=labels)

    def _started(self, container: Any) -> Any:
        import docker.errors

        try:
            return container.start()
        except docker.errors.DockerException as error:
            raise NodeStartError(f"{self.image}: {type(error).__name__}: {error}") from None

    def run_tool(self, argv: Sequence[str], env: Mapping[str, str], timeout_s: float) -> tuple[int, str]:
        container = self._started(self._container("tool", argv, env, None))
        wrapped = container.get_wrapped_container()
        try:
            status = wrapped.wait(timeout=timeout_s)
            code = int(status.get("StatusCode", -1))
        except Exception as error:  # the engine's read timeout
            code = -9
            return code, f"{self.image}: {' '.join(argv)} did not end within {timeout_s:g} s ({error})"
        finally:
            output = b""
            with contextlib.suppress(Exception):
                output = wrapped.logs()
            with contextlib.suppress(Exception):
                wrapped.remove(force=True)
        return code, output.decode(errors="replace")

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str], stdout: Path) -> ContainerNode:
        container = self._started(self._container(name, argv, env, stdout))
        node = ContainerNode(container.get_wrapped_container())
        self.started.append(node)
        return node

    def remove_all(self) -> None:
        for node in self.started:
            node.remove()
        self.started.clear()


def host_for(image: str | None, home: Path | None, mounts: list[str]) -> NodeHost:
    """The host of a run: containers of `image` when one is given, else processes of `home`."""
    if image is not None:
        return ContainerHost(image, mounts)
    assert home is not None
    return ProcessHost(home)
