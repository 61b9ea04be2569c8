"""No import cycles among tracker's modules, counting the imports inside functions.

Every module of the project's packages is parsed with `ast` (nothing is imported), and
each `import` / `from ... import` anywhere in it, at the top or inside a function, is an
edge to the project module it loads: `from . import tasks` loads tracker.workers.tasks,
`from .store import NotFound` loads tracker.store. Imports under `if TYPE_CHECKING:`
never run and are left out. A cycle is printed module by module, so that it can be cut
where it is cheapest.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("fingerprint", "tracker", "crawler", "web")

#: Cycles known and waiting for their fix, as the sorted modules of the cycle -> why it is
#: still there. The test fails when one of them is gone, so that its entry is removed too.
PENDING: dict[tuple[str, ...], str] = {
}


def project_modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of `packages` (a package is its __init__)."""
    found = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes under `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The project modules `name` imports, anywhere in its file -> the line of the first such import."""

    def known(dotted: str) -> str | None:
        # `import a.b.c` where a.b.c is an attribute, not a module, loads a.b
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: dict[str, int] = {}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [known(a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from pkg import mod` loads pkg.mod when it is a module, else pkg itself
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else known(source)
                       for a in node.names]
        for target in targets:
            if target and target != name:
                out.setdefault(target, node.lineno)
    return out


def import_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def tangles(graph: dict[str, dict[str, int]], within: str) -> list[tuple[str, ...]]:
    """The groups of modules under `within` that import each other in a circle (the strongly
    connected components with more than one module, by Tarjan's algorithm), sorted."""
    nodes = sorted(n for n in graph if n == within or n.startswith(within + "."))
    inside = set(nodes)
    edges = {n: sorted(t for t in graph[n] if t in inside) for n in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the number of modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for n in nodes:
        if n not in index:
            visit(n)
    return sorted(tuple(g) for g in groups)


def a_cycle(group: tuple[str, ...], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest way from the group's first module back to itself, through the group."""
    start, members = group[0], set(group)
    edges = {v: sorted(w for w in graph[v] if w in members) for v in group}
    paths = {start: [start]}
    todo = [start]
    while todo:
        nxt = []
        for v in todo:
            for w in edges[v]:
                if w == start:
                    return paths[v] + [start]
                if w in members and w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        todo = nxt
    raise AssertionError(f"no cycle through {start} in {group}")  # pragma: no cover


def describe(group: tuple[str, ...], graph: dict[str, dict[str, int]], modules: dict[str, Path],
             root: Path = ROOT) -> str:
    """The group, one cycle through it, and every import among its modules, with file and line."""
    steps = [f"{a} imports {b} ({modules[a].relative_to(root)}:{graph[a][b]})"
             for a in group for b in sorted(graph[a]) if b in group]
    return (", ".join(group) + ": " + " -> ".join(a_cycle(group, graph)) + "\n    " + "\n    ".join(steps))


@pytest.fixture(scope="module")
def graph():
    modules = project_modules()
    return modules, import_graph(modules)


def test_tracker_has_no_import_cycle(graph):
    modules, g = graph
    found = tangles(g, "tracker")
    for group in found:
        print(describe(group, g, modules))
    new = [group for group in found if group not in PENDING]
    assert not new, "import cycles in tracker/:\n" + "\n".join(describe(group, g, modules) for group in new)
    gone = set(PENDING) - set(found)
    assert not gone, f"these cycles are gone: remove them from PENDING: {sorted(gone)}"


def test_celery_app_queue_and_tasks_import_one_way(graph):
    _, g = graph
    assert "tracker.workers.tasks" in g["tracker.workers.app"]
    assert "tracker.workers.app" in g["tracker.workers.queue"]
    for a, b in [("tracker.workers.tasks", "tracker.workers.app"), ("tracker.workers.tasks", "tracker.workers.queue"),
                 ("tracker.workers.app", "tracker.workers.queue"), ("tracker.workers.names", "tracker.workers.tasks")]:
        assert b not in g[a], f"{a} imports {b}"


def test_the_graph_sees_imports_inside_functions(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .. import a\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n"
                              "def g():\n    import pkg.sub\n")
    (pkg / "c.py").write_text("from pkg import b\n")
    modules = project_modules(tmp_path, ("pkg",))
    g = import_graph(modules)
    assert set(g["pkg.a"]) == {"pkg.b"} and set(g["pkg.b"]) == {"pkg.sub"}  # c: only for type checkers
    assert g["pkg.sub"] == {"pkg.a": 1} and set(g["pkg.c"]) == {"pkg.b"}
    [group] = tangles(g, "pkg")
    assert group == ("pkg.a", "pkg.b", "pkg.sub") and a_cycle(group, g) == ["pkg.a", "pkg.b", "pkg.sub", "pkg.a"]
    assert "pkg.sub imports pkg.a (pkg/sub/__init__.py:1)" in describe(group, g, modules, tmp_path)
