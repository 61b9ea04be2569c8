"""HTML to PDF with the system's headless chromium (`--print-to-pdf`).

Chromium rather than a Python PDF library: the report is one HTML file, and chromium lays
out Chinese text, highlighted passages and tables as the browser shows them, embedding the
fonts it used (a CJK font must be installed: fonts-noto-cjk on Debian); it is already on
the machines that render pages for the crawler and run the admin's browser tests.
WeasyPrint would need its own native libraries (Pango) and reportlab a second layout of
the report written in its own drawing API.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..browser import chromium_path as chromium

TIMEOUT = 90
NO_FONT = ("no Chinese font is installed: the PDF shows boxes for Chinese characters "
           "(apt-get install fonts-noto-cjk)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--mute-audio",
         "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw", "--virtual-time-budget=5000"]


class PdfError(RuntimeError):
    """No PDF could be made; the message says what to install or set."""


def cjk_font_installed() -> bool:
    """Whether fontconfig knows a font for Chinese (True when fc-list is not there to ask)."""
    fc = shutil.which("fc-list")
    if fc is None:
        return True
    try:
        out = subprocess.run([fc, ":lang=zh", "family"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return True
    return bool(out.strip())


def html_to_pdf(html: str, *, timeout: float = TIMEOUT) -> bytes:
    """The PDF of a self-contained HTML page (no network: its resources must be inline)."""
    browser = chromium()
    if browser is None:
        raise PdfError("no chromium to make the PDF with: install chromium (apt-get install chromium) or set "
                       "FPT_CHROMIUM to a chromium or chrome; or leave the PDF out (--no-pdf)")
    with tempfile.TemporaryDirectory(prefix="fpt-pdf-") as tmp:
        folder = Path(tmp)
        page, pdf = folder / "report.html", folder / "report.pdf"
        page.write_text(html, encoding="utf-8")
        cmd = [browser, *FLAGS, f"--user-data-dir={folder / 'profile'}", f"--print-to-pdf={pdf}", page.as_uri()]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, "HOME": str(folder)})
        except subprocess.TimeoutExpired as e:
            raise PdfError(f"chromium ({browser}) did not make the PDF within {timeout:.0f} s") from e
        except OSError as e:
            raise PdfError(f"chromium ({browser}) does not start: {e}; install chromium or set FPT_CHROMIUM") from e
        if not pdf.is_file() or pdf.stat().st_size == 0:
            last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1][:300]
            raise PdfError(f"chromium ({browser}) made no PDF: {last}")
        data = pdf.read_bytes()
    if not data.startswith(b"%PDF-"):
        raise PdfError(f"chromium ({browser}) wrote something that is not a PDF")
    return data
