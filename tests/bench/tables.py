"""Reading the markdown tables the benchmark scripts print."""
from __future__ import annotations

from collections.abc import Collection


def table_rows(out: str, names: Collection[str]) -> dict[str, list[str]]:
    """The cells of each table row whose first cell is one of `names`, by that name."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] in names:
            rows[cells[0]] = cells[1:]
    return rows
