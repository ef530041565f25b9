"""The package stays easy to carry on: no import cycle between its modules, no module imports
another's private name, no mock in production code (line length, format and types: ruff and mypy,
run by ``make test``)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "searchgen_nb"


def _modules() -> dict[str, tuple[Path, ast.Module]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return out


def _imports(tree: ast.Module, known: set[str]) -> set[str]:
    """The package modules a module imports, at any depth (lazy imports count too)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n for n in names if n in known)
    return found


def test_no_import_cycle():
    modules = _modules()
    graph = {m: _imports(tree, set(modules)) - {m} for m, (_, tree) in modules.items()}
    # a package imports its own modules (``__init__`` re-exports): not a cycle of the flow
    graph = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(" -> ".join(path[path.index(d) :] + [d]))
            elif d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def _source(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ``import from`` names (a relative one resolved from ``name``)."""
    if not node.level:
        return node.module or ""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def test_no_module_imports_another_modules_private_name():
    private = [
        f"{name}: {_source(name, path, node)}.{alias.name}"
        for name, (path, tree) in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and _source(name, path, node).startswith("searchgen_nb")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert private == []


def test_production_code_does_not_use_unittest_mock():
    users = [
        name
        for name, (_, tree) in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and any(
            "unittest" in n
            for n in [getattr(node, "module", None) or "", *(a.name for a in node.names)]
        )
    ]
    assert users == []
