"""Load and check scenario files before anything runs (scenario-format.md, "Results and errors").

A malformed file — unknown operation or key, wrong type, unknown capture, unknown error name —
raises `ScenarioFormatError` naming the file, scenario and step.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from isrcheck.conformance.scenario.bounded_yaml import BoundedYamlError, load_bounded
from isrcheck.contract.errors import UsageError
from isrcheck.contract.operations.releases import ReleaseSpecifier
from isrcheck.contract.operations.step import Scenario, Step
from isrcheck.contract.operations.vocabulary import OPERATIONS, REQUIRED
from isrcheck.reference_impl.errors import Error

CAPTURE = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)([+-]\d+)?$")
SCENARIO_KEYS = {"name", "source", "level", "kafka", "config", "brokers", "steps"}
STEP_KEYS = {"expect", "as", "when"}
CONFIG_KINDS = {
    "unclean_leader_election_enable": "bool", "eligible_leader_replicas": "bool", "min_insync_replicas": "int",
    "metadata_version": "str", "broker_session_timeout_ms": "int",
    "replica_lag_time_max_ms": "int",
}
LEVELS = ("controller", "cluster")


class ScenarioFormatError(UsageError):
    pass


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_capture(value: Any) -> bool:
    return isinstance(value, str) and CAPTURE.match(value) is not None


def _int_like(value: Any) -> bool:
    return _is_int(value) or _is_capture(value)


def _epoch_like(value: Any) -> bool:
    return _int_like(value) or value == "current"


def kind_error(kind: str, value: Any) -> str | None:
    """Why `value` is not of `kind`, or None."""
    ok: bool
    match kind:
        case "int":
            ok = _int_like(value)
        case "epoch":
            ok = _epoch_like(value)
        case "sender":
            ok = _int_like(value) or value == "leader"
        case "bool":
            ok = isinstance(value, bool)
        case "str":
            ok = isinstance(value, str)
        case "label":
            ok = isinstance(value, str | int) and not isinstance(value, bool)
        case "version":
            ok = _is_int(value) and 0 <= value <= 3
        case "assignment":
            ok = isinstance(value, list) and all(
                isinstance(r, list) and all(_is_int(b) for b in r) for r in value
            )
        case "ints" | "intset":
            ok = isinstance(value, list) and all(_int_like(b) for b in value)
        case "isr":
            ok = isinstance(value, list) and all(
                _int_like(m)
                or (isinstance(m, list) and len(m) == 2 and _int_like(m[0]) and _epoch_like(m[1]))
                for m in value
            )
        case "mapping":
            ok = isinstance(value, dict) and all(isinstance(k, str) for k in value)
        case "partitions":
            ok = isinstance(value, list) and all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and _is_int(p[1]) for p in value
            )
        case "election":
            ok = value in ("preferred", "unclean")
        case "lrs":
            ok = value in ("RECOVERED", "RECOVERING")
        case "error":
            ok = isinstance(value, str) and value in Error.__members__
            if isinstance(value, str) and not ok:
                return f"unknown error name {value!r}"
        case "election_errors":
            ok = isinstance(value, list) and all(
                isinstance(e, list) and len(e) == 3 and isinstance(e[0], str) and _is_int(e[1])
                and e[2] in Error.__members__
                for e in value
            )
        case "any":
            ok = True
        case _:
            raise AssertionError(f"unknown kind {kind}")
    if ok:
        return None
    described = {"sender": "int or 'leader'"}.get(kind, kind.replace("_", " "))
    return f"expected {described}, got {value!r}"


def captures_in(value: Any) -> list[str]:
    if isinstance(value, str):
        match = CAPTURE.match(value)
        return [match.group(1)] if match else []
    if isinstance(value, list):
        return [name for item in value for name in captures_in(item)]
    if isinstance(value, dict):
        return [name for item in value.values() for name in captures_in(item)]
    return []


def load_file(path: Path) -> list[Scenario]:
    where = str(path)
    try:
        document = load_bounded(path)
    except BoundedYamlError as error:
        raise ScenarioFormatError(f"{where}: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(error, "problem", None) or error).split())
        raise ScenarioFormatError(f"{where}: not valid YAML{at}: {problem}") from None
    if isinstance(document, dict) and set(document) == {"scenarios"}:
        items = document["scenarios"]
        if not isinstance(items, list) or not items:
            raise ScenarioFormatError(f"{where}: 'scenarios' must be a non-empty list")
    elif isinstance(document, dict):
        items = [document]
    else:
        raise ScenarioFormatError(f"{where}: top level must be a scenario mapping or 'scenarios:' list")
    return [parse_scenario(where, position, item) for position, item in enumerate(items, 1)]


def parse_scenario(where: str, position: int, item: Any) -> Scenario:
    if not isinstance(item, dict):
        raise ScenarioFormatError(f"{where}: scenario #{position}: must be a mapping")
    name = item.get("name")
    label = f"{where}: scenario {name!r}" if isinstance(name, str) else f"{where}: scenario #{position}"
    if not isinstance(name, str) or not name.strip():
        raise ScenarioFormatError(f"{label}: 'name' is required and must be a string")
    unknown = set(item) - SCENARIO_KEYS
    if unknown:
        raise ScenarioFormatError(f"{label}: unknown key(s) {', '.join(sorted(unknown))}")
    source = item.get("source")
    if source is not None and not isinstance(source, str):
        raise ScenarioFormatError(f"{label}: 'source' must be a string")
    level = item.get("level", "controller")
    if level not in LEVELS:
        raise ScenarioFormatError(f"{label}: 'level' must be one of {', '.join(LEVELS)}, got {level!r}")
    kafka = None
    if item.get("kafka") is not None:
        try:
            kafka = ReleaseSpecifier.parse(str(item["kafka"]))
        except ValueError as error:
            raise ScenarioFormatError(f"{label}: 'kafka': {error}") from None
    config = item.get("config") or {}
    if not isinstance(config, dict):
        raise ScenarioFormatError(f"{label}: 'config' must be a mapping")
    for key, value in config.items():
        if key not in CONFIG_KINDS:
            raise ScenarioFormatError(
                f"{label}: 'config': unknown key {key!r} (known: {', '.join(sorted(CONFIG_KINDS))})"
            )
        problem = kind_error(CONFIG_KINDS[key], value)
        if problem:
            raise ScenarioFormatError(f"{label}: 'config' {key}: {problem}")
    brokers = item.get("brokers") or []
    if not isinstance(brokers, list) or not all(_is_int(b) for b in brokers):
        raise ScenarioFormatError(f"{label}: 'brokers' must be a list of broker ids")
    raw_steps = item.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise ScenarioFormatError(f"{label}: 'steps' is required and must be a non-empty list")
    defined: set[str] = set()
    steps = tuple(parse_step(label, level, index, raw, defined) for index, raw in enumerate(raw_steps, 1))
    return Scenario(where, name, source, level, kafka, dict(config), tuple(brokers), steps)


def parse_step(label: str, level: str, index: int, raw: Any, defined: set[str]) -> Step:
    if not isinstance(raw, dict):
        raise ScenarioFormatError(f"{label}: step {index}: must be a mapping with one operation key")
    ops = [key for key in raw if key not in STEP_KEYS]
    if len(ops) != 1:
        found = ", ".join(ops) if ops else "none"
        raise ScenarioFormatError(f"{label}: step {index}: needs exactly one operation key (found: {found})")
    op = ops[0]
    where = f"{label}: step {index} ({op})"
    spec = OPERATIONS.get(op)
    if spec is None:
        raise ScenarioFormatError(f"{label}: step {index}: unknown operation {op!r}")
    if spec.level == "cluster" and level != "cluster":
        raise ScenarioFormatError(f"{where}: a cluster-level operation in a controller-level scenario")
    args = raw[op] if raw[op] is not None else {}
    if not isinstance(args, dict):
        raise ScenarioFormatError(f"{where}: arguments must be a mapping")
    for key, value in args.items():
        if key in spec.args:
            kind = spec.args[key][0]
        elif spec.is_check and key in spec.results:
            kind = spec.results[key]
        else:
            raise ScenarioFormatError(f"{where}: unknown argument {key!r}")
        problem = kind_error(kind, value)
        if problem:
            raise ScenarioFormatError(f"{where}: argument {key!r}: {problem}")
    for key, (_, default) in spec.args.items():
        if default is REQUIRED and key not in args:
            raise ScenarioFormatError(f"{where}: missing argument {key!r}")
    expect = raw.get("expect")
    if expect is not None:
        if not isinstance(expect, dict):
            raise ScenarioFormatError(f"{where}: 'expect' must be a mapping")
        for key, value in expect.items():
            if key not in spec.results:
                raise ScenarioFormatError(f"{where}: 'expect' names {key!r}, which {op} does not return")
            problem = kind_error(spec.results[key], value) if value is not None else None
            if problem:
                raise ScenarioFormatError(f"{where}: 'expect' {key}: {problem}")
    used = captures_in(args) + captures_in(expect or {})
    for name in used:
        if name not in defined:
            raise ScenarioFormatError(f"{where}: unknown capture ${name} (not captured by an earlier step)")
    captures = raw.get("as") or {}
    if not isinstance(captures, dict) or not all(isinstance(v, str) for v in captures.values()):
        raise ScenarioFormatError(f"{where}: 'as' must map result fields to capture names")
    for field_name, capture in captures.items():
        if field_name not in spec.results:
            raise ScenarioFormatError(f"{where}: 'as' names {field_name!r}, which {op} does not return")
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", capture):
            raise ScenarioFormatError(f"{where}: 'as' capture name {capture!r} is not an identifier")
        defined.add(capture)
    when = None
    if raw.get("when") is not None:
        try:
            when = ReleaseSpecifier.parse(str(raw["when"]))
        except ValueError as error:
            raise ScenarioFormatError(f"{where}: 'when': {error}") from None
    return Step(index, op, dict(args), dict(expect) if expect is not None else None, dict(captures), when)


def scenario_files(paths: list[str]) -> list[Path]:
    """Files named, and every *.yaml / *.yml under directories named, in a stable order."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml")))
        elif path.exists():
            files.append(path)
        else:
            raise ScenarioFormatError(f"{name}: no such file or directory")
    if not files:
        raise ScenarioFormatError(f"no scenario files found in {', '.join(paths)}")
    return files


def load_all(paths: list[str]) -> list[Scenario]:
    return [scenario for path in scenario_files(paths) for scenario in load_file(path)]
