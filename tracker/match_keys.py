"""A match named the short way: its chapter by a unique prefix of the chapter's key, or of the
chapter's name within its work ("第一章" for "山城旧事/第一章 雨夜来客"), among the chapters
the page copies. What people type at `fptrack set-status` without copying a whole title."""
from __future__ import annotations

from .store import Store


class AmbiguousKey(ValueError):
    """A short name that fits more than one chapter; the message lists them."""


def chapter_of_match(store: Store, page: str, original: str) -> str | None:
    """The key of the chapter, among those `page` copies, that `original` names: the key itself,
    or the one chapter whose key or name starts with `original`. None when none does; raises
    AmbiguousKey, listing the candidates, when several do."""
    keys = sorted({m.chapter for m in store.matches(page=page, limit=None)})
    if original in keys:
        return original
    if not original:
        return None
    hits = [k for k in keys if k.startswith(original) or k.split("/", 1)[-1].startswith(original)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise AmbiguousKey(f"{original!r} fits {len(hits)} chapters that {page!r} copies: "
                           + ", ".join(repr(k) for k in hits) + "; give more of the key")
    return None
