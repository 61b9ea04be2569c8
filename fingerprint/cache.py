"""A small on-disk cache for tables that are slow to build and never change.

The code-point tables of the normaliser and the pinyin module take about a
second to build; loading them takes milliseconds. A cache entry is named after
everything it depends on (library versions, Unicode version, a format number),
written atomically, and rebuilt when missing or unreadable. When the cache
folder cannot be written, the tables are simply built in memory each time.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np


def cache_dir() -> Path:
    """FPT_CACHE_DIR, else $XDG_CACHE_HOME/fptrack, else ~/.cache/fptrack."""
    env = os.environ.get("FPT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fptrack"


def cached_arrays(name: str, depends_on: str, build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Load arrays `name` made under `depends_on`, or build and store them."""
    tag = hashlib.sha256(depends_on.encode()).hexdigest()[:16]
    path = cache_dir() / f"{name}-{tag}.npz"
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError):
        pass
    arrays = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except OSError:
        pass  # read-only home or full disk: the tables still work, built in memory
    return arrays
