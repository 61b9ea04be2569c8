"""Outside text made safe to show: CSV cells a spreadsheet will not run, terminal text that cannot
steer the terminal. Crawled site names, titles and URLs are written by whoever runs the site."""
from __future__ import annotations

import json
from typing import Any

__all__ = ["FORMULA_START", "defuse", "json_text", "printable"]

#: A cell starting with one of these is a formula to Excel and LibreOffice (OWASP's list).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]  # embeddings, overrides and isolates
_SURROGATES = range(0xD800, 0xE000)  # cannot be written to a UTF-8 stream at all
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# One table for str.translate: C0, DEL, C1 and the bidi controls become visible escapes.
_ESCAPES = {
    c: _NAMED.get(chr(c), f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}")
    for c in (*range(0x20), *range(0x7F, 0xA0), *_BIDI, *_SURROGATES)
}


def defuse(text: str) -> str:
    """A CSV cell's text; one a spreadsheet would run as a formula gets a leading '."""
    return "'" + text if text.startswith(FORMULA_START) else text


def printable(text: str) -> str:
    """`text` for a terminal: control characters (ESC, C1, bidi overrides...) shown as escapes like \\x1b."""
    return text.translate(_ESCAPES)


# JSON escapes C0 itself but writes DEL, C1, the bidi controls and lone surrogates raw;
# \uXXXX keeps the value exact.
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in (*range(0x7F, 0xA0), *_BIDI, *_SURROGATES)}


def json_text(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON (one line unless indented; CJK kept readable) with no raw control character in it."""
    return json.dumps(value, ensure_ascii=False, indent=indent).translate(_JSON_ESCAPES)
