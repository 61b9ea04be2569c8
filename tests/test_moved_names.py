"""Modules that moved when the packages were laid out by concern still import under their old
names for one release, each with a DeprecationWarning naming the new place (fingerprint.moved)."""
from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import crawler
import tracker
import web

TABLES = {**tracker.MOVED, **crawler.MOVED, **web.MOVED}


@pytest.mark.parametrize("old,new", sorted(TABLES.items()))
def test_an_old_name_is_the_new_module_with_a_warning(old, new):
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert said == [f"{old} has moved to {new}: import it from there (the old name goes in the next release)"]


def test_a_plugin_written_for_the_old_names_keeps_working(tmp_path):
    """A search provider plug-in subclassing the old path's class is a SearchProvider of the new."""
    (tmp_path / "myprovider.py").write_text(
        "from tracker.search_providers import SearchProvider\n"
        "class Mine(SearchProvider):\n    name = 'mine'\n")
    code = ("import warnings, sys; warnings.simplefilter('error', DeprecationWarning)\n"
            f"sys.path.insert(0, {str(tmp_path)!r})\n"
            "try:\n    import myprovider\nexcept DeprecationWarning as e:\n    print('warned:', e)\n"
            "warnings.simplefilter('ignore')\nimport myprovider\n"
            "from tracker.discovery.providers import SearchProvider\n"
            "print(SearchProvider in myprovider.Mine.__mro__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "warned: tracker.search_providers has moved to tracker.discovery.providers" in out.stdout
    assert out.stdout.strip().endswith("True")


def test_names_never_listed_are_not_made_up():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tracker.no_such_module")


def test_no_old_name_is_a_module_that_still_exists():
    """An old name is only kept for a module that is gone: a file still there would be loaded first."""
    root = Path(tracker.__file__).resolve().parent.parent
    for old in TABLES:
        path = root / old.replace(".", "/")
        assert not path.with_suffix(".py").exists() and not (path / "__init__.py").exists(), old
