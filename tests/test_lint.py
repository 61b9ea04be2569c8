"""The code is clean under the linter configured in pyproject.toml ([tool.ruff]): `ruff check` over
the whole checkout finds nothing, so an unused import, an import out of order or a late-bound loop
variable fails here rather than drifting in."""
from __future__ import annotations

import shutil
import subprocess
import sys

from .conftest import ROOT, need


def _ruff() -> list[str] | None:
    try:
        import ruff  # noqa: F401  (the package that ships the binary)
    except ImportError:
        found = shutil.which("ruff")
        return [found] if found else None
    return [sys.executable, "-m", "ruff"]


def test_ruff_finds_nothing():
    ruff = _ruff()
    need(ruff is not None, "ruff is not installed: scripts/bootstrap test installs it (the test extra)")
    r = subprocess.run([*ruff, "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"ruff check found:\n{r.stdout[-4000:]}{r.stderr[-1000:]}"


def test_ruff_sees_a_fault(tmp_path):
    """The check can fail: the same configuration finds an unused import in a file of the project's kind."""
    ruff = _ruff()
    need(ruff is not None, "ruff is not installed: scripts/bootstrap test installs it (the test extra)")
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    r = subprocess.run([*ruff, "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "F401" in r.stdout
