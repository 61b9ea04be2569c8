"""Old module names that still import after a move, each with a DeprecationWarning, for one release.

A package lists its moved modules, old name -> new name, and calls `keep_old_names` once from its
__init__.py. `import tracker.search_providers` (or `from tracker.search_providers import X`,
or a plug-in path in a setting) then loads tracker.discovery.providers, warns once that the
name has moved and where to, and binds the old name to the very same module object, so a
class imported by either name is one class. Only names that no longer exist are listed: a
name that is now a package of its own (tracker.discovery) cannot be kept this way.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Mapping
from types import ModuleType


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved = dict(moved)

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # a placeholder; exec_module puts the real module in its place

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        new = self.moved[old]
        warnings.warn(f"{old} has moved to {new}: import it from there (the old name goes in the next release)",
                      DeprecationWarning, stacklevel=2)
        # The import system returns what sys.modules holds under the name once this returns.
        sys.modules[old] = importlib.import_module(new)


def keep_old_names(moved: Mapping[str, str]) -> None:
    """Make each old dotted name import its new module (idempotent per table)."""
    for finder in sys.meta_path:
        if isinstance(finder, _OldNames) and finder.moved == dict(moved):
            return
    sys.meta_path.insert(0, _OldNames(moved))  # before the path finders: a stale folder must not win
