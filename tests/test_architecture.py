"""The package's layers, enforced: who may import whom, and no import cycles.

ARCHITECTURE.md states these rules; this test reads every module of ``jupyter_agent_tools``
with ``ast`` and checks them. Every import counts — at module level, inside functions and
inside ``if TYPE_CHECKING:`` — because each one couples the two modules all the same.

A failure names each violation (and, for a cycle, one path around it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "jupyter_agent_tools"
ROOT = "__init__"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE

# The first part of a module's name below the package ("__init__" is the package's own).
BASE = {"files", "notebooks", "processes", "keeper", "sandbox", "_version"}
RUNTIME = {"runtime"}
RESOURCES = {"lsp", "dap", "kernels", "structural", "questions", "workers", "discovery"}
TOOLS = {"tools"}
OUTSIDE = {"__init__", "http", "mcp_endpoint", "widgets", "app", "activity", "auth", "cli", "client", "notebook",
           "demo", "testing", "agent_tokens"}

# Each resource package raises one family of exceptions, rooted in <package>/errors.py.
ERROR_BASES = {
    "lsp": "LspError",
    "dap": "DebugError",
    "kernels": "KernelError",
    "structural": "StructuralError",
    "questions": "QuestionError",
    "workers": "WorkerError",
}

@dataclass(frozen=True)
class Module:
    name: str  # dotted, below the package: "lsp.session"; "__init__" for the package itself
    path: Path
    is_package: bool

    @property
    def part(self) -> str:
        return self.name.split(".", 1)[0]


def package_modules() -> dict[str, Module]:
    """Every importable module: files under directories that all have an __init__.py."""
    modules: dict[str, Module] = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(PACKAGE_DIR)
        directories = [PACKAGE_DIR.joinpath(*relative.parts[:depth])
                       for depth in range(1, len(relative.parts))]
        if not all((directory / "__init__.py").is_file() for directory in directories):
            continue  # data, not code: e.g. demo/sample_project
        parts = list(relative.with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts) or ROOT
        modules[name] = Module(name, path, is_package)
    return modules


def imported_names(module: Module) -> Iterator[str]:
    """Dotted names (absolute, with the package prefix) every import statement of module names,
    plus importlib.import_module("...") calls with a literal name."""
    tree = ast.parse(module.path.read_text(), filename=str(module.path))
    here = [PACKAGE] if module.name == ROOT else [PACKAGE, *module.name.split(".")]
    if not module.is_package:
        here.pop()  # relative imports start from the module's package
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = here[: len(here) - (node.level - 1)]
                source = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            # `from pkg import name` names the module pkg.name when there is one, else pkg
            yield from (f"{source}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of ours it imports (each dotted name to the longest module it names)."""
    modules = package_modules()
    graph: dict[str, set[str]] = {}
    for module in modules.values():
        targets: set[str] = set()
        for dotted in imported_names(module):
            if dotted != PACKAGE and not dotted.startswith(PACKAGE + "."):
                continue
            parts = dotted.split(".")[1:]
            while parts and ".".join(parts) not in modules:
                parts.pop()
            targets.add(".".join(parts) or ROOT)
        graph[module.name] = targets - {module.name}
    return graph


def _layer(part: str) -> str:
    for layer, parts in (("base", BASE), ("runtime", RUNTIME), ("resource", RESOURCES),
                         ("tools", TOOLS), ("outside", OUTSIDE)):
        if part in parts:
            return layer
    raise AssertionError(f"{PACKAGE}.{part} is in no layer: add it to a layer here and in "
                         "ARCHITECTURE.md")


def broken_rule(importer: str, imported: str) -> str | None:
    """Why importer may not import imported, or None when it may."""
    importer_part, imported_part = importer.split(".")[0], imported.split(".")[0]
    importer_layer, imported_layer = _layer(importer_part), _layer(imported_part)
    if importer_layer == "base":
        # processes.py imports nothing of ours; files/ only it; notebooks/ the rest of the base.
        allowed = {"processes": {"processes"}, "keeper": {"keeper"}, "sandbox": {"sandbox"},
                   "files": {"files", "processes"}}.get(importer_part, BASE)
        if imported_part not in allowed:
            return f"{importer_part}/ imports only {' and '.join(sorted(allowed))}"
        return None
    if importer_layer == "runtime":
        if imported_layer not in {"base", "runtime"}:
            return "runtime imports only runtime and the base (files, notebooks, processes)"
        return None
    if importer_layer == "resource":
        if imported_layer not in {"base", "runtime", "resource"}:
            return "a resource imports only the base, the runtime and resources"
        if imported == "runtime.results":
            return "a resource raises its own errors, not ToolError/ToolResult (runtime.results)"
        if imported == "runtime":
            return ("a resource imports the runtime's modules it may use (runtime.limits, ...), "
                    "not the runtime package, which re-exports ToolError/ToolResult")
        return None
    if importer_layer == "tools":
        if imported_layer == "outside":
            return "tools import only the runtime, the base and resources"
        return None
    return None


def layer_violations(graph: dict[str, set[str]]) -> dict[str, str]:
    """'importer -> imported' -> the rule it breaks."""
    return {f"{importer} -> {imported}": rule
            for importer, targets in graph.items() for imported in targets
            if (rule := broken_rule(importer, imported)) is not None}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as one cycle
    through all of its modules' order of discovery, smallest name first."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = lowlink[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                lowlink[node] = min(lowlink[node], lowlink[target])
            elif target in on_stack:
                lowlink[node] = min(lowlink[node], index[target])
        if lowlink[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete cycle through the component's first module, for the failure message."""
    start = component[0]
    members = set(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        next_frontier = []
        for node in frontier:
            for target in sorted(graph[node] & members):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    next_frontier.append(target)
        frontier = next_frontier
    raise AssertionError(f"{component} is not a cycle")


def cycle_violations(graph: dict[str, set[str]]) -> dict[str, str]:
    """'cycle: a, b, c' (the modules of one strongly connected component) -> one path through it."""
    return {f"cycle: {', '.join(component)}": " -> ".join(shortest_cycle(graph, component))
            for component in cycles(graph)}


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph between top-level parts (files, runtime, lsp, ...)."""
    packages: dict[str, set[str]] = {}
    for importer, targets in graph.items():
        part = importer.split(".")[0]
        packages.setdefault(part, set()).update(target.split(".")[0] for target in targets)
        packages[part].discard(part)
    return packages


def error_family_violations(modules: dict[str, Module]) -> set[str]:
    violations = set()
    for package, base in ERROR_BASES.items():
        errors = modules.get(f"{package}.errors")
        if errors is None or not _defines_exception(errors.path, base):
            violations.add(f"{package}: no {base}(Exception) in {package}/errors.py")
    return violations


def _defines_exception(path: Path, class_name: str) -> bool:
    tree = ast.parse(path.read_text(), filename=str(path))
    return any(isinstance(node, ast.ClassDef) and node.name == class_name
               and any(isinstance(base, ast.Name) and base.id == "Exception" for base in node.bases)
               for node in tree.body)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def _assert_none(found: set[str], details: dict[str, str], kind: str) -> None:
    message = [f"{kind.capitalize()} violations (fix them; see ARCHITECTURE.md):"]
    message += [f"  {violation}{details.get(violation, '')}" for violation in sorted(found)]
    assert not found, "\n".join(message)


def test_every_module_belongs_to_a_layer():
    parts = {module.part for module in package_modules().values()}
    assert parts - (BASE | RUNTIME | RESOURCES | TOOLS | OUTSIDE) == set()


def test_each_layer_imports_only_what_it_may(graph):
    found = layer_violations(graph)
    _assert_none(set(found), {name: f"  ({rule})" for name, rule in found.items()}, "layer")


def test_the_import_graph_has_no_cycles(graph):
    found = cycle_violations(graph)
    _assert_none(set(found), {name: f"\n    e.g. {path}" for name, path in found.items()},
                  "cycle")


def test_the_packages_import_each_other_without_cycles(graph):
    packages = package_graph(graph)
    found = {f"package {name}": path for name, path in cycle_violations(packages).items()}
    _assert_none(set(found), {name: f"\n    e.g. {path}" for name, path in found.items()},
                  "package cycle")


def test_each_resource_package_has_one_exception_family():
    _assert_none(error_family_violations(package_modules()), {}, "error family")


def test_the_graph_sees_every_kind_of_import(tmp_path):
    """TYPE_CHECKING, function-level, relative and importlib imports are all edges."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "from . import session\n"
        "from ..runtime.limits import ServerLimits\n"
        "if TYPE_CHECKING:\n"
        "    from ..tools import lsp\n"
        "def later():\n"
        "    from jupyter_agent_tools.http import base\n"
        "    importlib.import_module('jupyter_agent_tools.widgets.cards')\n"
    )
    path = tmp_path / "supervisor.py"
    path.write_text(source)
    names = set(imported_names(Module("lsp.supervisor", path, is_package=False)))
    # a name imported from a module is resolved to that module when the graph is built
    assert {"jupyter_agent_tools.lsp.session", "jupyter_agent_tools.runtime.limits.ServerLimits",
            "jupyter_agent_tools.tools.lsp", "jupyter_agent_tools.http.base",
            "jupyter_agent_tools.widgets.cards"} <= names


def test_a_cycle_is_named_by_its_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycle_violations(graph) == {"cycle: a, b, c": "a -> b -> c -> a"}
