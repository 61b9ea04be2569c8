"""Site rules' selectors: CSS or XPath, compiled once, and what they pick from a page."""
from __future__ import annotations

from functools import lru_cache

__all__ = ["compiled", "select", "selected_text"]


@lru_cache(maxsize=256)
def compiled(sel: str):
    from lxml import etree

    try:
        if sel.lstrip().startswith(("/", "(")):
            return etree.XPath(sel)
        from lxml.cssselect import CSSSelector

        return CSSSelector(sel, translator="html")
    except Exception as e:  # cssselect and lxml each have their own syntax error types
        raise ValueError(f"not a valid CSS selector or XPath: {sel!r} ({e})") from None


def select(tree, sel: str) -> list:
    """Elements (or strings, for an XPath ending in text() or @attr) that `sel` picks."""
    if not sel:
        return []
    try:
        found = compiled(sel)(tree)
    except Exception:  # e.g. an XPath that is valid but fails on this document
        return []
    if not isinstance(found, list):
        found = [found] if isinstance(found, str) and found.strip() else []
    return found


def selected_text(item) -> str:
    return " ".join((item if isinstance(item, str) else item.text_content()).split())
