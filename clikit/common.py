"""What every simtool command shares: error reporting, progress bars, output formats."""
from __future__ import annotations

import csv
import functools
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import click

from clikit.cells import defuse, json_text, printable
from fingerprint.errors import FingerprintError

#: The formats of a listing: an aligned table for people, CSV, JSON Lines and a JSON array for machines.
RECORD_FORMATS = ["table", "csv", "jsonl", "json"]
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
    """Write records as JSON Lines, a JSON array, CSV or an aligned table; return how many were written.

    JSON is exact, with every control character escaped (\\u001b, \\u009b...); dates are ISO 8601 with
    their UTC offset in JSON and CSV, whole numbers are integers. CSV text cells that a spreadsheet
    would run as formulas get a leading '; CSV written to a terminal, and table cells, show control
    characters as escapes, so a crawled title cannot move the cursor, retitle the window or reverse
    the line."""
    out = out or sys.stdout
    n = 0
    if fmt in ("jsonl", "json"):
        if fmt == "json":
            out.write("[")
        for rec in records:
            line = json_text({k: machine_value(v) for k, v in rec.items()})
            out.write((",\n " if n and fmt == "json" else "") + line + ("\n" if fmt == "jsonl" else ""))
            n += 1
        if fmt == "json":
            out.write("]\n")
        return n
    if fmt == "csv":
        safe = printable if _is_terminal(out) else str  # exact data for files and pipes
        w = csv.DictWriter(out, fieldnames=[safe(c) for c in columns], extrasaction="ignore")
        w.writeheader()
        for rec in records:
            w.writerow({safe(c): safe(_csv_cell(machine_value(rec.get(c)))) for c in columns})
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
    raise click.BadParameter(f"unknown format {fmt!r}; use table, csv, jsonl or json")


def machine_value(v: Any) -> Any:
    """A value as the machine formats write it: a date and time as ISO 8601 with its UTC offset
    (a naive one is UTC), a whole float as an integer (4070.0 -> 4070), lists and dicts likewise inside."""
    if isinstance(v, datetime):
        return (v if v.tzinfo else v.replace(tzinfo=UTC)).isoformat(timespec="seconds")
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    if isinstance(v, dict):
        return {k: machine_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [machine_value(x) for x in v]
    return v


def _is_terminal(out) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed or non-file stream
        return False


def _cell(v: Any) -> str:
    if isinstance(v, datetime):  # a table is read by people: minutes, in UTC
        return (v.astimezone(UTC) if v.tzinfo else v).strftime("%Y-%m-%d %H:%M")
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return "" if v is None else str(v)


def _csv_cell(v: Any) -> str:
    # Only text is defused: a negative number is a number, not a formula.
    if isinstance(v, str):
        return defuse(v)
    if isinstance(v, (dict, list)):
        return json_text(v)
    return _cell(v)


def _width(s: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, w: int) -> str:
    return s + " " * (w - _width(s))
