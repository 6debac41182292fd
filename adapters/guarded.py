"""Every adapter call with a timeout: a target that hangs becomes a `timeout` outcome and one that
raises becomes a `crash`, never a hung or aborted campaign (in-process plug-ins)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from isrcheck.adapters.base import Args, Result, Target, TargetFailure, UnsupportedConfiguration
from isrcheck.contract.history.ground_truth import ClusterObservation

T = TypeVar("T")
DEFAULT_TIMEOUT_S = 30.0


class GuardedTarget(Target):
    """Runs each call of `inner` on a worker thread and waits at most `timeout_s`. A call that
    times out leaves this wrapper broken (its thread cannot be killed); the engine builds a fresh
    target for the next run."""

    def __init__(self, inner: Target, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.inner = inner
        self.timeout_s = timeout_s
        self.name = inner.name
        self.levels = inner.levels
        self.releases = inner.releases
        self.unsupported_operations = inner.unsupported_operations
        self.observable_fields = inner.observable_fields
        self.black_box_history = inner.black_box_history
        self.observes_replica_logs = inner.observes_replica_logs
        self.options = getattr(inner, "options", {})
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="isrcheck-target")
        self.broken: str | None = None

    def call(self, what: str, function: Callable[[], T]) -> T:
        if self.broken is not None:
            raise TargetFailure("timeout", f"target unusable after an earlier timeout ({self.broken})")
        future = self.executor.submit(function)
        try:
            return future.result(timeout=self.timeout_s)
        except concurrent.futures.TimeoutError:
            self.broken = what
            self.executor.shutdown(wait=False, cancel_futures=True)
            raise TargetFailure("timeout", f"{what} did not answer within {self.timeout_s:g} s") from None
        except (UnsupportedConfiguration, TargetFailure):
            raise
        except Exception as error:
            raise TargetFailure("crash", f"{what} raised {type(error).__name__}: {error}") from error

    def open(self, release: str, config: Mapping[str, Any]) -> None:
        self.call("open", lambda: self.inner.open(release, config))

    def execute(self, op: str, args: Args) -> Result:
        return self.call(op, lambda: self.inner.execute(op, args))

    def observe(self, what: str, args: Args) -> Result:
        return self.call(f"observe {what}", lambda: self.inner.observe(what, args))

    def ground_truth(self) -> ClusterObservation | None:
        return self.call("ground truth", self.inner.ground_truth)

    def stop_heal_when(self, condition: Callable[[ClusterObservation], bool]) -> None:
        self.inner.stop_heal_when(condition)

    def close(self) -> None:
        """Ends one run; the wrapper stays usable for the next `open` unless it broke."""
        if self.broken is None:
            self.call("close", self.inner.close)

    def shutdown(self) -> None:
        """A broken wrapper leaves the inner target alone: its hung call may hold what shutting
        down would wait for."""
        if self.broken is None:
            self.call("shutdown", self.inner.shutdown)
