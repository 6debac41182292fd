"""The one module that reaches into Hypothesis internals (tested with hypothesis 6.131–6.155;
pyproject.toml pins below the next minor series): draws that depend on the seed alone, a
shrinking time limit that is restored afterwards, and whether Hypothesis cut the example ending
now short (`example_overran`).

Hypothesis draws that depend on the seed alone, not on which modules happen to be imported:

Hypothesis (6.131 and later) draws about one value in twenty from the literals of the *local*
modules loaded so far. The same `--seed` then generated different interleavings in a test
process, in `isrcheck run` and in `isrcheck pipeline`, because each had imported different parts
of isrcheck (found when a seeded engine test passed alone and failed under `pytest -n 2`). A
printed replay command must reproduce its finding in any process, so a campaign draws from one
fixed pool: the literals of the modules that define the model, the generators and the
properties, always all of them. The literals stay (they are what makes Hypothesis try the
boundaries the model cares about); only their dependence on import order goes.

The pool is read from the modules' source here, not through `constants_from_module`: that
caches each module's literals in `.hypothesis/constants/` under the working directory, and a
file another process is writing at that moment (truncated, not yet written) reads as a module
with no literals. Two campaigns started together in one directory, or the two forked workers of
`--workers 2`, then drew from different pools now and then, and the same seed ran different
examples (found as `tests/reliability/test_kills.py` counting a batch's runs differently in two
identical campaigns under load).

This reaches into Hypothesis internals; where they are absent (older Hypothesis), draws never
depended on local modules and nothing is changed.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from hypothesis.control import current_build_context
from hypothesis.errors import InvalidArgument
from hypothesis.internal.conjecture import engine as conjecture_engine
from hypothesis.internal.conjecture import providers
from hypothesis.internal.conjecture.data import Status

ENGINE_PACKAGES = ("isrcheck.reference_impl", "isrcheck.conformance.generator", "isrcheck.conformance.properties")


def engine_modules() -> list[str]:
    names = set(ENGINE_PACKAGES)
    for package_name in ENGINE_PACKAGES:
        package = importlib.import_module(package_name)
        names.update(info.name for info in pkgutil.walk_packages(package.__path__, f"{package_name}."))
    return sorted(names)


@lru_cache(maxsize=1)
def engine_constants() -> Any:
    pool = providers.Constants(
        integers=providers.SortedSet(), floats=providers.SortedSet(key=providers.float_to_int),
        bytes=providers.SortedSet(), strings=providers.SortedSet(),
    )
    for name in engine_modules():
        pool |= module_constants(name)
    return pool


def module_constants(name: str) -> Any:
    """The literals Hypothesis's `constants_from_module` collects from module `name`, read from
    the source every time rather than through the working directory's cache, which a concurrent
    writer can leave empty. (Its 512 KiB cut-off is left out: no engine module comes near it.)"""
    from hypothesis.internal.constants_ast import _constants_from_source

    source = Path(inspect.getsourcefile(importlib.import_module(name)) or "").read_bytes()
    if "limit" in inspect.signature(_constants_from_source).parameters:  # 6.140 and later
        return _constants_from_source(source, limit=True)
    return _constants_from_source(source)


@contextmanager
def seed_only_draws() -> Iterator[None]:
    local_constants = getattr(providers, "_get_local_constants", None)
    cache: Any = getattr(providers, "CONSTANTS_CACHE", None)
    if local_constants is None or cache is None:
        yield
        return
    pool = engine_constants()
    cache.cache.clear()
    providers._get_local_constants = lambda: pool
    try:
        yield
    finally:
        providers._get_local_constants = local_constants
        cache.cache.clear()


def keep_files_out_of_the_working_directory() -> None:
    """Point Hypothesis's storage (its home, `.hypothesis/` under the working directory by default)
    at the user's cache, `$XDG_CACHE_HOME/isrcheck/hypothesis` or `~/.cache/isrcheck/hypothesis`.
    For `isrcheck` commands and their worker processes, which keep no example database: importing
    kio registers its Hypothesis strategies, which builds Hypothesis's character map and wrote
    `.hypothesis/unicode_data` into whatever directory a user ran any command in, `--version`
    included. Tests and the pytest plugin keep Hypothesis's default."""
    from hypothesis.configuration import set_hypothesis_home_dir

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    set_hypothesis_home_dir(cache / "isrcheck" / "hypothesis")


@contextmanager
def shrinking_within(seconds: float) -> Iterator[None]:
    """Hypothesis stops shrinking after `seconds` (its module-level MAX_SHRINKING_SECONDS, which
    no setting exposes); the previous limit is restored afterwards, so nothing else in the
    process (a user's own Hypothesis tests beside the pytest plugin) inherits ours."""
    before = conjecture_engine.MAX_SHRINKING_SECONDS
    conjecture_engine.MAX_SHRINKING_SECONDS = seconds
    try:
        yield
    finally:
        conjecture_engine.MAX_SHRINKING_SECONDS = before


def example_overran() -> bool:
    """Whether Hypothesis stopped the example now ending because it ran out of choices (status
    OVERRUN): a run's draws went past the number of choices Hypothesis allowed the example. In
    generation that is not our draws being large — a run draws a few hundred choices, far below
    the 8 KiB buffer — but Hypothesis replaying a choice sequence it made up, capped at its own
    length: a mutation that copies one span of an earlier run over another
    (`generate_mutations_from`), or an early example capped at five times the simplest one's
    length. The run is cut after fewer steps than asked and Hypothesis does not count it towards
    max_examples. False outside a Hypothesis example."""
    try:
        data = current_build_context().data
    except InvalidArgument:
        return False
    return data.status is Status.OVERRUN
