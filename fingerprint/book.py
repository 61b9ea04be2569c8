"""A whole book as its named chapters: split at its headings (fingerprint.chapters) and named
as `fptrack add-work` names a book's chapters, so `simtool track` and the tracker report the
same chapter for the same text."""
from __future__ import annotations

from dataclasses import dataclass

from fingerprint.chapters import split_chapters


@dataclass(frozen=True)
class BookChapter:
    name: str  # the heading line ("第一章 雨夜来客"), "序" for a preamble; unique within the book
    title: str
    text: str
    number: int | None


def book_chapters(text: str) -> list[BookChapter]:
    """The chapters of a whole book, in order; a text with one heading or none is one chapter."""
    parts = split_chapters(text)
    if len(parts) <= 1:
        return [BookChapter(name="", title="", text=text, number=1)]
    out, seen = [], set()
    for i, c in enumerate(parts):
        name = c.heading or ("序" if c.number is None else f"{i:04d}")
        name = " ".join(name.split())[:80].replace("/", "／")  # a key's "/" separates the work from the chapter
        if name in seen:
            name = f"{name} ({i})"
        seen.add(name)
        out.append(BookChapter(name=name, title=c.heading or name, text=c.text, number=c.number))
    return out
