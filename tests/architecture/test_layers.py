"""The dependency rule of docs/architecture.md, checked on the source: imports point down the
layers, the reports read records only, and no two sub-packages import each other in a circle.

The modules are read as text (ast), not imported, so the check is fast and sees every import,
including the ones inside functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAPPED = ("adapters", "conformance", "contract", "reference_impl", "reports")

LAYERS: tuple[tuple[str, ...], ...] = (
    ("isrcheck.contract",),
    ("isrcheck.reference_impl",),
    ("isrcheck.adapters", "isrcheck.conformance.generator", "isrcheck.conformance.properties"),
    ("isrcheck.conformance.scenario",),
    ("isrcheck.conformance.engine",),
    ("isrcheck.reports",),
    ("isrcheck.cli", "isrcheck.commands", "isrcheck.pipeline", "isrcheck.pytest_plugin", "isrcheck.__main__"),
)
"""Bottom first. A module may import its own layer and any layer below, except that the targets,
generators and checkers (INDEPENDENT) know nothing of one another, and the reports import nothing
but the bottom layer: records are the one contract between running and reporting."""

INDEPENDENT = 2
READS_RECORDS_ONLY = "isrcheck.reports"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] in MAPPED:
        parts.insert(0, "isrcheck")
    return ".".join(parts)


def source_modules() -> Iterator[tuple[str, Path]]:
    for top in ("isrcheck", *MAPPED):
        for path in sorted((ROOT / top).rglob("*.py")):
            yield module_name(path), path


def imported_modules(name: str, path: Path) -> Iterator[tuple[str, int]]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target, node.lineno
            for alias in node.names:
                yield f"{target}.{alias.name}", node.lineno


def owner(module: str) -> tuple[int, str] | None:
    """The (layer, package) a module belongs to: the longest package prefix named in LAYERS."""
    best: tuple[int, str] | None = None
    for level, packages in enumerate(LAYERS):
        for package in packages:
            if (module == package or module.startswith(package + ".")) and (
                best is None or len(package) > len(best[1])
            ):
                best = (level, package)
    return best


def violations(edges: list[tuple[str, str, str]]) -> list[str]:
    """Every import edge (importer, imported, where) that breaks the layering."""
    found = []
    for importer, imported, where in edges:
        source, target = owner(importer), owner(imported)
        if source is None or target is None or source[1] == target[1]:
            continue
        if source[1] == READS_RECORDS_ONLY and target[0] != 0:
            found.append(f"{where}: {importer} imports {imported} (the reports read records only)")
        elif target[0] > source[0]:
            found.append(f"{where}: {importer} imports {imported}, a higher layer")
        elif target[0] == source[0] == INDEPENDENT:
            found.append(f"{where}: {importer} imports {imported}, a sibling of the same layer")
    return found


def subpackage(module: str) -> str:
    """isrcheck.conformance.engine.campaign -> isrcheck.conformance.engine (a folder's package)."""
    parts = module.split(".")
    for depth in range(len(parts), 1, -1):
        candidate = ROOT.joinpath(*(_folder(parts[:depth])))
        if candidate.is_dir() and (candidate / "__init__.py").exists():
            return ".".join(parts[:depth])
    return ".".join(parts[:2])  # a module of the root package (isrcheck.contract.errors, isrcheck.cli) stands alone


def _folder(parts: list[str]) -> list[str]:
    if len(parts) > 1 and parts[0] == "isrcheck" and parts[1] in MAPPED:
        return parts[1:]
    return parts


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def project_edges() -> list[tuple[str, str, str]]:
    known = {name for name, _ in source_modules()}
    edges = []
    for name, path in source_modules():
        for imported, line in imported_modules(name, path):
            if imported in known:
                edges.append((name, imported, f"{path.relative_to(ROOT)}:{line}"))
    return edges


def test_every_module_has_a_layer() -> None:
    bare_packages = ("isrcheck", "isrcheck.conformance")
    orphans = [name for name, _ in source_modules() if owner(name) is None and name not in bare_packages]
    assert orphans == []


def test_imports_point_down_the_layers() -> None:
    assert violations(project_edges()) == []


def test_no_cycles_between_subpackages() -> None:
    graph: dict[str, set[str]] = {}
    for importer, imported, _ in project_edges():
        source, target = subpackage(importer), subpackage(imported)
        if source != target:
            graph.setdefault(source, set()).add(target)
    assert cycles(graph) == []


@pytest.mark.parametrize(
    ("importer", "imported", "message"),
    [
        ("isrcheck.reference_impl.controller", "isrcheck.adapters.base", "a higher layer"),
        ("isrcheck.reports.html_report", "isrcheck.reference_impl.mutants", "the reports read records only"),
        ("isrcheck.adapters.reference.cluster_target", "isrcheck.conformance.properties.monitor", "a sibling"),
        ("isrcheck.conformance.generator.cluster_machine", "isrcheck.conformance.engine.run_context", "a higher"),
    ],
)
def test_the_check_flags_upward_imports(importer: str, imported: str, message: str) -> None:
    [found] = violations([(importer, imported, "x.py:1")])
    assert message in found


def test_the_check_accepts_downward_imports() -> None:
    assert violations([("isrcheck.conformance.engine.campaign", "isrcheck.adapters.base", "x.py:1"),
                       ("isrcheck.reports.html_report", "isrcheck.contract.records.run_record", "x.py:1")]) == []


def test_cycles_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# ------------------------------------------------------------------------------------ concepts

PROPERTY_MODULES = "isrcheck.conformance.properties"
VERDICT_MAKERS = ("Violation", "Property", "Finding")


def where_in(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line}"


def property_definitions(name: str, path: Path) -> Iterator[tuple[str, str]]:
    """(property id, where) for every `Property("ID", ...)` in a module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Property"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value, where_in(path, node.lineno)


def property_verdicts(path: Path) -> Iterator[tuple[str, str]]:
    """(property id, where) for every violation or finding a module builds with a literal property id:
    `Violation("ID", ...)`, `Finding(..., property="ID")`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in VERDICT_MAKERS):
            continue
        literals = [node.args[0]] if node.func.id == "Violation" and node.args else []
        literals += [k.value for k in node.keywords if k.arg == "property"]
        for literal in literals:
            if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                yield literal.value, where_in(path, node.lineno)


def concept_violations(modules: list[tuple[str, Path]]) -> list[str]:
    """Each property is defined once (one `Property`), and only its own module says a step broke it."""
    defined: dict[str, list[str]] = {}
    home: dict[str, str] = {}
    for name, path in modules:
        for pid, where in property_definitions(name, path):
            defined.setdefault(pid, []).append(where)
            home[pid] = name
    found = [f"{pid} is defined {len(wheres)} times: {', '.join(wheres)}" for pid, wheres in defined.items()
             if len(wheres) > 1]
    for name, path in modules:
        for pid, where in property_verdicts(path):
            if home.get(pid) != name:
                found.append(f"{where}: judges {pid} outside its definition ({home.get(pid, 'none')})")
    return found


def test_each_property_is_defined_once_and_judged_only_there() -> None:
    modules = list(source_modules())
    defined = {pid for name, path in modules for pid, _ in property_definitions(name, path)}
    # P-ACK P-HWV P-ELIG P-LOG P-HWM P-1IF P-LEAD LeaderInIsr P-ADM P-SHRINK P-LIVE P-HWC P-FENCE
    assert len(defined) == 13
    assert concept_violations(modules) == []


def test_the_concept_check_flags_a_second_definition_and_a_verdict_elsewhere(tmp_path: Path) -> None:
    first = tmp_path / "p_x.py"
    first.write_text('PROPERTY = Property("P-X")\ndef f(): return Violation("P-X", 1, "m")\n')
    second = tmp_path / "other.py"
    second.write_text('AGAIN = Property("P-X")\n')
    third = tmp_path / "engine.py"
    third.write_text('def g(): return Finding("violation", "op", 1, "m", property="P-X")\n')
    found = concept_violations([("p_x", first), ("other", second), ("engine", third)])
    assert any("P-X is defined 2 times" in line for line in found)
    assert any(line.startswith("engine.py:1: judges P-X outside") for line in found)
    assert concept_violations([("p_x", first)]) == []


def run_loops(modules: list[tuple[str, Path]]) -> list[str]:
    """Every class with a method that executes one `Step` of a run (`def step(self, step: Step)`):
    the engine's run loop is written once (conformance/engine/run.py), whatever the level."""
    found = []
    for name, path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if (isinstance(method, ast.FunctionDef) and method.name == "step" and len(method.args.args) == 2
                        and isinstance(method.args.args[1].annotation, ast.Name)
                        and method.args.args[1].annotation.id == "Step"):
                    found.append(f"{name}.{node.name}")
    return found


def test_one_run_loop_for_every_level() -> None:
    assert run_loops(list(source_modules())) == ["isrcheck.conformance.engine.run.Run"]


def test_the_run_loop_check_flags_a_second_loop(tmp_path: Path) -> None:
    second = tmp_path / "pair.py"
    second.write_text("class PairRun:\n    def step(self, step: Step) -> list[Finding]:\n        return []\n")
    other = tmp_path / "cluster.py"
    other.write_text("class Cluster:\n    def step(self, rng: Random) -> bool:\n        return True\n")
    assert run_loops([("pair", second), ("cluster", other)]) == ["pair.PairRun"]
