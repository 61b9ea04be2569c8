"""The layout the code keeps: no import cycle, each package importing only what scripts/layout.py's
MAY_IMPORT allows it, no module over 500 lines, and at most so many modules directly in each
package's folder.

Every module of the project's packages is parsed with `ast` (nothing is imported), and
each `import` / `from ... import` anywhere in it, at the top or inside a function, is an
edge to the project module it loads: `from . import tasks` loads tracker.workers.tasks,
`from .store import NotFound` loads tracker.store. Imports under `if TYPE_CHECKING:`
never run and are left out. A cycle is printed module by module, so that it can be cut
where it is cheapest. The functions live in scripts/layout.py, which prints the same counts.
"""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("layout", ROOT / "scripts" / "layout.py")
layout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layout)

PACKAGES = layout.PACKAGES
project_modules = layout.project_modules
import_graph = layout.import_graph
tangles = layout.tangles
a_cycle = layout.a_cycle
describe = layout.describe

#: Cycles known and waiting for their fix, as the sorted modules of the cycle -> why it is
#: still there. The test fails when one of them is gone, so that its entry is removed too.
PENDING: dict[tuple[str, ...], str] = {
}


@pytest.fixture(scope="module")
def graph():
    modules = project_modules()
    return modules, import_graph(modules)


def test_no_import_cycle_anywhere(graph):
    modules, g = graph
    found = layout.all_tangles(g)
    for group in found:
        print(describe(group, g, modules))
    new = [group for group in found if group not in PENDING]
    assert not new, "import cycles:\n" + "\n".join(describe(group, g, modules) for group in new)
    gone = set(PENDING) - set(found)
    assert not gone, f"these cycles are gone: remove them from PENDING: {sorted(gone)}"


def test_layers_import_downwards_only(graph):
    modules, g = graph
    up = layout.upward_imports(g)
    assert not up, "imports a package may not make (scripts/layout.py MAY_IMPORT):\n" + "\n".join(
        f"{a} imports {b} ({modules[a].relative_to(ROOT)}:{line})" for a, b, line in up)


def test_no_module_is_over_500_lines(graph):
    modules, _ = graph
    assert not layout.long_modules(modules), layout.long_modules(modules)


@pytest.mark.parametrize("package", sorted(layout.DIRECT_LIMITS))
def test_a_package_folder_holds_few_modules_directly(package):
    direct = layout.modules_directly_in(package)
    assert len(direct) <= layout.DIRECT_LIMITS[package], [p.name for p in direct]


def test_every_package_says_what_it_holds_and_what_it_may_import():
    """Each package's docstring says what it holds, and ends with the line "May import: ..." naming
    exactly itself and the packages MAY_IMPORT allows it."""
    for init in sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py")):
        where = init.relative_to(ROOT)
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        summary, _, rule = doc.rpartition("\n\n")
        assert len(summary) > 20, f"{where} needs a docstring saying what the package holds"
        assert rule.startswith("May import: "), f"{where}: the docstring's last line says what it may import"
        allowed = rule.partition("(")[0]
        named = {w.strip(" .,") for w in allowed.removeprefix("May import: ").replace(" and ", ", ").split(",")}
        named = {w.removesuffix(" only") for w in named}
        assert named == {where.parts[0], *layout.MAY_IMPORT[where.parts[0]]}, f"{where}: {rule}"


def test_the_checks_see_what_they_look_for(tmp_path):
    """A forbidden import and a long module in a made-up project are found (the real one has none)."""
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text('"""x"""\n')
    (tmp_path / "tracker" / "a.py").write_text("def f():\n    from crawler import b\n")
    (tmp_path / "crawler" / "b.py").write_text("x = 1\n" * 501)
    modules = project_modules(tmp_path)
    g = import_graph(modules)
    assert layout.upward_imports(g) == [("tracker.a", "crawler.b", 2)]
    assert layout.long_modules(modules) == [("crawler.b", 501)]
    text, ok = layout.report(tmp_path)
    assert not ok and "tracker.a imports crawler.b" in text


def test_celery_app_queue_and_tasks_import_one_way(graph):
    _, g = graph
    assert "tracker.workers.tasks" in g["tracker.workers.app"]
    assert "tracker.workers.app" in g["tracker.workers.queue"]
    for a, b in [("tracker.workers.tasks", "tracker.workers.app"), ("tracker.workers.tasks", "tracker.workers.queue"),
                 ("tracker.workers.app", "tracker.workers.queue"), ("tracker.workers.task_names", "tracker.workers.tasks")]:
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
