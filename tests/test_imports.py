"""The package layout holds (docs/architecture.md): below the entry points no module imports
another in a cycle, function-level imports included; `core/` imports no domain; `fatturapa/` is
a pure library; nothing below the entry points imports an entry point."""

from __future__ import annotations

import ast
from pathlib import Path

import varco

SRC = Path(varco.__file__).parent
# Entry points may import any service: the web layer, the CLI, the jobs, the panel, the factories.
ENTRY_SUFFIXES = ("endpoints", ".cli", ".tasks", ".commands")
ENTRY_MODULES = {
    "varco.app",
    "varco.cli",
    "varco.cli_support",
    "varco.jobs_list",
    "varco.openapi",
    "varco.sdicoop_listener",
    "varco.sdi.simulator.soap.app",  # the process of `varco sdi serve-sdicoop`
}
ENTRY_PACKAGES = ("varco.panel", "varco.migrations", "varco.validate_cli")


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = ["varco", *path.relative_to(SRC).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, source: str | None = None) -> set[str]:
    """Every varco module `module` imports, anywhere in it (functions and TYPE_CHECKING blocks too)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source if source is not None else path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], base]
                ).strip(".")
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names
            ]
        else:
            continue
        found |= {target for name in names if name.startswith("varco") and (target := _resolve(name))}
    found.discard(module)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def is_entry_point(module: str) -> bool:
    if module.endswith(".models"):  # tables, wherever they are
        return False
    return (
        module in ENTRY_MODULES
        or module.endswith(ENTRY_SUFFIXES)
        or any(module == p or module.startswith(p + ".") for p in ENTRY_PACKAGES)
    )


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_below_the_entry_points():
    below = {
        m: {t for t in targets if not is_entry_point(t)}
        for m, targets in GRAPH.items()
        if not is_entry_point(m)
    }
    assert _cycles(below) == []


def test_no_import_cycle_among_the_entry_points_either():
    assert _cycles(GRAPH) == []


def test_nothing_below_the_entry_points_imports_one():
    wrong = {
        (module, target)
        for module, targets in GRAPH.items()
        if not is_entry_point(module)
        for target in targets
        if is_entry_point(target)
    }
    assert wrong == set()


def test_core_imports_no_domain():
    allowed = ("varco.core", "varco.settings")
    wrong = {
        (module, target)
        for module, targets in GRAPH.items()
        if module.startswith("varco.core")
        for target in targets
        if not target.startswith(allowed) and target != "varco"
    }
    assert wrong == set()


def test_fatturapa_is_a_pure_library():
    wrong = {
        (module, target)
        for module, targets in GRAPH.items()
        if module.startswith("varco.fatturapa")
        for target in targets
        if not target.startswith("varco.fatturapa") and target != "varco"
    }
    assert wrong == set()


def test_the_walk_sees_function_level_and_relative_imports():
    # The checks above prove nothing unless the walk sees an import hidden inside a function.
    source = "def f():\n    from varco.invoices import repository\n    from .blobs import store\n"
    assert _imports("varco.core.jobs", source) == {"varco.invoices.repository", "varco.core.blobs"}
