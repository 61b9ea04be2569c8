"""Lists written as CSV or JSON a row at a time, so a 100k-row export never sits in memory.

CSV cells are made safe for spreadsheets: a cell that starts with = + - @ (or a
tab or carriage return) is a formula to Excel and LibreOffice, and crawled
titles and URLs can be written to exploit that; such cells get a leading '
(clikit.cells.defuse, which both command lines use too).
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from clikit.cells import FORMULA_START, defuse

__all__ = ["FORMULA_START", "BOM", "attachment", "csv_lines", "json_default", "json_lines", "safe_cell"]

BOM = "\ufeff"  # lets Excel read the UTF-8 (Chinese titles) without asking


def json_default(value: Any) -> Any:
    """JSON for the values reports hold besides the plain ones."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def safe_cell(value: Any) -> str:
    """One CSV cell as text; text that a spreadsheet would run as a formula gets a leading '."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(round(value, 4)) if isinstance(value, float) else str(value)
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=json_default)
    else:
        text = str(value)
    return defuse(text)


def csv_lines(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """A header line, then one line per row (missing fields empty, extra fields left out)."""
    buf = io.StringIO()
    writer = csv.writer(buf)

    def line(cells: Iterable[str]) -> str:
        buf.seek(0)
        buf.truncate()
        writer.writerow(cells)
        return buf.getvalue()

    yield BOM + line(safe_cell(c) for c in columns)
    for row in rows:
        yield line(safe_cell(row.get(c)) for c in columns)


def json_lines(rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """One JSON array, written a row at a time."""
    yield "["
    first = True
    for row in rows:
        yield ("\n" if first else ",\n") + json.dumps(row, ensure_ascii=False, default=json_default)
        first = False
    yield "\n]\n"


def attachment(filename: str) -> str:
    """A Content-Disposition value for a download; names from crawled data cannot break the header."""
    ascii_name = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in filename) or "download"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"
