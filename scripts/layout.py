#!/usr/bin/env python3
"""The layout of the code, measured from its own files: run it from anywhere.

    python scripts/layout.py            # the counts, as a table
    python scripts/layout.py --check    # the same, and exit 1 when a limit is passed
    python scripts/layout.py --root DIR # another checkout (git worktree add DIR REV), to compare

It reads every module of the project's packages with `ast` (nothing is imported) and prints:
- how many modules sit directly in each package, against its limit;
- the modules over 500 lines;
- the import cycles, counting imports inside functions (imports under `if TYPE_CHECKING:`
  never run and are left out);
- the imports a package may not make (MAY_IMPORT): the engine imports nothing of the project,
  page reading only the engine, and so on up to the `fptrack` program, which may import all
  but simtool.

tests/test_import_cycles.py runs the same functions, so the numbers here are the ones CI holds.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The packages, lowest first, and what each may import besides itself: the engine nothing,
#: page reading the engine, OCR page reading (a picture found among files), the command-line kit
#: the engine's errors; simtool and the tracker are two programs on the same four, never on
#: each other; the crawler on the tracker, the admin on the crawler, and the `fptrack`
#: program on every package but simtool.
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "fingerprint": (),
    "pagetext": ("fingerprint",),
    "ocr": ("fingerprint", "pagetext"),
    "clikit": ("fingerprint",),
    "simtool": ("fingerprint", "pagetext", "ocr", "clikit"),
    "tracker": ("fingerprint", "pagetext", "ocr", "clikit"),
    "crawler": ("fingerprint", "pagetext", "ocr", "clikit", "tracker"),
    "web": ("fingerprint", "pagetext", "ocr", "clikit", "tracker", "crawler"),
    "fptrack": ("fingerprint", "pagetext", "ocr", "clikit", "tracker", "crawler", "web"),
}
PACKAGES = tuple(MAY_IMPORT)
#: Modules allowed directly in a package's folder (its __init__.py not counted).
DIRECT_LIMITS = {"fingerprint": 28, "pagetext": 10, "ocr": 10, "clikit": 6, "simtool": 12, "tracker": 15,
                 "crawler": 20, "web": 20, "fptrack": 4}
MAX_LINES = 500


def project_modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of `packages` (a package is its __init__)."""
    found = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
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
    nodes = sorted(n for n in graph if not within or n == within or n.startswith(within + "."))
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


def modules_directly_in(package: str, root: Path = ROOT) -> list[Path]:
    """The modules in the package's own folder, not in its sub-packages, __init__.py left out."""
    return sorted(p for p in (root / package).glob("*.py") if p.name != "__init__.py")


def lines_of(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def long_modules(modules: dict[str, Path], limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """(module, lines) for every module over `limit` lines, longest first."""
    found = [(name, lines_of(path)) for name, path in modules.items()]
    return sorted(((n, k) for n, k in found if k > limit), key=lambda x: (-x[1], x[0]))


def package_of(module: str) -> str:
    return module.partition(".")[0]


def may_import(a: str, b: str, rules: dict[str, tuple[str, ...]] = MAY_IMPORT) -> bool:
    """Whether module `a` may import module `b`: its own package, or one its package may import."""
    pa, pb = package_of(a), package_of(b)
    return pa == pb or pb in rules.get(pa, ())


def upward_imports(graph: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    """(module, the module it imports though its package may not, line), sorted."""
    return sorted((a, b, line) for a, targets in graph.items() for b, line in targets.items()
                  if not may_import(a, b))


def all_tangles(graph: dict[str, dict[str, int]]) -> list[tuple[str, ...]]:
    """The import cycles of the whole project, across packages too."""
    return tangles(graph, "")


def report(root: Path = ROOT) -> tuple[str, bool]:
    """The counts as text, and whether every limit holds."""
    modules = project_modules(root)
    graph = import_graph(modules)
    out, ok = [], True
    out.append(f"{'package':<12} {'modules':>8} {'in its folder':>14} {'limit':>6} {'lines':>7}")
    for pkg in PACKAGES:
        if not (root / pkg).is_dir():
            continue
        inside = [n for n in modules if n == pkg or n.startswith(pkg + ".")]
        direct = len(modules_directly_in(pkg, root))
        limit = DIRECT_LIMITS.get(pkg)
        over = limit is not None and direct > limit
        ok &= not over
        lines = sum(lines_of(modules[n]) for n in inside)
        out.append(f"{pkg:<12} {len(inside):>8} {direct:>14} {limit if limit else '-':>6} {lines:>7}"
                   + ("  over the limit" if over else ""))
    long = long_modules(modules)
    ok &= not long
    out.append(f"\nmodules over {MAX_LINES} lines: {len(long)}")
    out += [f"  {modules[n].relative_to(root)}  {k}" for n, k in long]
    up = upward_imports(graph)
    ok &= not up
    out.append(f"\nimports a package may not make (MAY_IMPORT): {len(up)}")
    out += [f"  {a} imports {b} ({modules[a].relative_to(root)}:{line})" for a, b, line in up]
    groups = all_tangles(graph)
    ok &= not groups
    out.append(f"\nimport cycles: {len(groups)}")
    out += ["  " + describe(g, graph, modules, root) for g in groups]
    return "\n".join(out), ok


def main(argv: list[str]) -> int:
    root = Path(argv[argv.index("--root") + 1]).resolve() if "--root" in argv[:-1] else ROOT
    text, ok = report(root)
    print(text)
    return 1 if "--check" in argv and not ok else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
