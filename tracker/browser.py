"""Where the headless browser is: the crawler renders pages with it, the evidence report is
printed to PDF with it. Debian's `chromium` is installed by scripts/system-deps."""
from __future__ import annotations

import os
import shutil

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path() -> str | None:
    """FPT_CHROMIUM when set (None when it is not an executable file), else the first chromium or
    chrome on PATH, else None."""
    given = os.environ.get("FPT_CHROMIUM", "").strip()
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None
