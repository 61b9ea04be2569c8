"""What every simtool command shares: error reporting, progress bars, output formats."""
from __future__ import annotations

import csv
import functools
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click

from ..cells import defuse, json_text, printable
from ..errors import FingerprintError

quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bars or summaries on standard error.")


def friendly_errors(fn: Callable) -> Callable:
    """Turn the engine's errors into a one-line message with the fix, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except FingerprintError as e:
            raise click.ClickException(printable(str(e))) from e  # it may quote a file's name or text
        except BrokenPipeError:  # `simtool ... | head`
            sys.stderr.close()
            sys.exit(0)

    return wrapper


def progress(iterable: Iterable, *, quiet: bool, desc: str, total: int | None = None, unit: str = "doc"):
    """A tqdm progress bar on standard error, silent with -q or when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=quiet or None, file=sys.stderr, leave=False)


def note(message: str, *, quiet: bool) -> None:
    """A summary line on standard error (control characters from the inputs shown as escapes)."""
    if not quiet:
        click.echo(printable(message), err=True)


def show(message: str) -> None:
    """A line of plain output; names and titles from crawled pages cannot steer the terminal."""
    click.echo(printable(message))


def write_records(records: Iterable[dict[str, Any]], fmt: str, columns: Sequence[str], out=None) -> int:
    """Write records as JSON Lines, CSV or an aligned table; return how many were written.

    JSON Lines are exact, with every control character escaped; CSV text cells that a
    spreadsheet would run as formulas get a leading '; table cells show control characters
    as escapes, so a crawled title cannot move the cursor or reverse the line."""
    out = out or sys.stdout
    n = 0
    if fmt == "jsonl":
        for rec in records:
            out.write(json_text(rec) + "\n")
            n += 1
        return n
    if fmt == "csv":
        w = csv.DictWriter(out, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        for rec in records:
            w.writerow({c: _csv_cell(rec.get(c)) for c in columns})
            n += 1
        return n
    if fmt == "table":
        rows = [[printable(_cell(rec.get(c))) for c in columns] for rec in records]
        columns = [printable(c) for c in columns]
        widths = [max([_width(c)] + [_width(r[i]) for r in rows]) for i, c in enumerate(columns)]
        out.write("  ".join(_pad(c, w) for c, w in zip(columns, widths)).rstrip() + "\n")
        for r in rows:
            out.write("  ".join(_pad(v, w) for v, w in zip(r, widths)).rstrip() + "\n")
        return len(rows)
    raise click.BadParameter(f"unknown format {fmt!r}; use jsonl, csv or table")


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return "" if v is None else str(v)


def _csv_cell(v: Any) -> str:
    # Only text is defused: a negative number is a number, not a formula.
    return defuse(v) if isinstance(v, str) else _cell(v)


def _width(s: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, w: int) -> str:
    return s + " " * (w - _width(s))
