"""The sample novel, its pirated pages and example site rules.

Installed as the package `fptrack_samples` (this folder in a checkout), so that
`fptrack demo` and `simtool samples` find them wherever fptrack is installed.
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ORIGINALS = HERE / "originals"  # 山城旧事, three chapters, one .txt file each
PAGES = HERE / "pages"  # pirated forms of them, and an unrelated page
SITES = HERE / "sites.toml"  # example site rules for `fptrack sites import`
WORK, AUTHOR = "山城旧事", "林岚"

