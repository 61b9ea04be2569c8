"""Copied passages marked in a text: <mark> around the evidence spans, every piece escaped.

Texts come from crawled pages, so nothing here trusts them: each segment goes
through `escape` before it is joined to the markup.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

ELLIPSIS = "…"


def merge_spans(spans: Iterable[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """Clamp spans to [0, length], drop empty ones, and merge overlapping or touching ones, in order."""
    clamped = sorted((min(max(int(s), 0), length), min(max(int(e), 0), length)) for s, e in spans)
    out: list[tuple[int, int]] = []
    for start, end in clamped:
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def segments(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[str, bool]]:
    """The text cut into (piece, copied) runs that join back to the whole text."""
    out: list[tuple[str, bool]] = []
    at = 0
    for start, end in merge_spans(spans, len(text)):
        if start > at:
            out.append((text[at:start], False))
        out.append((text[start:end], True))
        at = end
    if at < len(text):
        out.append((text[at:], False))
    return out


def highlight(text: str, spans: Iterable[tuple[int, int]]) -> Markup:
    """The text as HTML with the copied spans inside <mark>."""
    return Markup("").join(Markup("<mark>{}</mark>").format(piece) if copied else escape(piece)
                           for piece, copied in segments(text, spans))


def side_spans(spans: Sequence[Mapping[str, Any]], side: str) -> list[tuple[int, int]]:
    """(start, end) pairs of one side of a match's evidence: "page" or "original"."""
    return [(int(s.get(f"{side}_start", 0)), int(s.get(f"{side}_end", 0))) for s in spans]


def excerpt(text: str, start: int, end: int, limit: int = 160) -> str:
    """The text of a span on one line, cut to `limit` characters."""
    start, end = max(0, start), min(len(text), end)
    piece = " ".join(text[start:end].split())
    return piece if len(piece) <= limit else piece[:limit - 1] + ELLIPSIS
