"""isrcheck's pytest plugin (entry point `pytest11`).

It registers the markers isrcheck's suites use and offers `conformance_test`, which turns a
target into a Hypothesis state-machine test case that pytest (and `pytest -n auto`) collects
like any other — the way implementation authors run the suite from their own test tree:

    from isrcheck.pytest_plugin import conformance_test
    TestMyController = conformance_test("exec:./my-controller --stdio", release="4.1")

A failure prints the shrunk interleaving (Hypothesis's program) and the finding.

pytest loads this module into every session of any environment where isrcheck is installed, so
it imports nothing of isrcheck or Hypothesis until `conformance_test` is called.
"""

from __future__ import annotations

import unittest
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long-running isrcheck test (campaigns, Spark, browser)")
    config.addinivalue_line("markers", "docker: needs a Docker engine or KAFKA_HOME; skipped when absent")


def conformance_test(
    adapter: str = "reference",
    release: str = "4.1",
    mutant: str | None = None,
    max_examples: int = 100,
    steps: int = 50,
    differential: bool = True,
) -> type[unittest.TestCase]:
    """A TestCase running the controller-level machine against `adapter` (stop at first finding)."""
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    from isrcheck.adapters.reference.controller_target import ReferenceTarget
    from isrcheck.conformance.engine.run_context import RunContext
    from isrcheck.conformance.engine.targets import TargetSpec
    from isrcheck.conformance.generator.controller_machine import ControllerMachine

    spec = TargetSpec(adapter, mutant)

    def run_machine(self: unittest.TestCase) -> None:
        make_target = spec.factory()
        described = make_target()
        context = RunContext(
            make_reference=ReferenceTarget, make_target=make_target, release=release, config={},
            on_run=lambda finished: None, stop_at_first=True, differential=differential,
            unsupported=described.unsupported_operations, observable_fields=described.observable_fields,
        )
        machine = type(f"Conformance_{spec.display_name}", (ControllerMachine,), {"context": context})
        run_state_machine_as_test(machine, settings=settings(
            max_examples=max_examples, stateful_step_count=steps, deadline=None,
            suppress_health_check=list(HealthCheck),
        ))

    attributes: dict[str, Any] = {"test_conformance": run_machine, "__test__": True}
    return type(f"Conformance_{spec.display_name}", (unittest.TestCase,), attributes)
