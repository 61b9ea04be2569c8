"""Make outside text encodable: lone surrogates become U+FFFD, and the caller learns how many.

Python strings can hold code points UTF-8 cannot encode: JSON's "\\ud800"
escapes, file names and arguments decoded with surrogateescape. Such a string
fails much later, deep in a hash or a database driver, and takes its whole
batch down with it. Every entry point runs outside text through `scrub` first.
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "scrub", "scrub_value"]

REPLACEMENT = "\ufffd"
# A high surrogate followed by a low one is one character split in two (UTF-16 leaking through):
# it is joined back. Any other surrogate is alone and cannot be encoded.
_SURROGATES = re.compile("([\ud800-\udbff][\udc00-\udfff])|[\ud800-\udfff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> tuple[str, int]:
    """(text with every lone surrogate replaced by U+FFFD, how many were replaced)."""
    if not _ANY_SURROGATE.search(text):  # the common case costs one C-level scan
        return text, 0
    replaced = 0

    def fix(m: re.Match) -> str:
        nonlocal replaced
        if m.group(1):
            return m.group(1).encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        replaced += 1
        return REPLACEMENT

    return _SURROGATES.sub(fix, text), replaced


def scrub_value(value: Any) -> tuple[Any, int]:
    """`value` with every string in it scrubbed (dict keys, list items, nested); and the count."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        out, total = {}, 0
        for k, v in value.items():
            k2, n = scrub_value(k)
            v2, m = scrub_value(v)
            out[k2] = v2
            total += n + m
        return out, total
    if isinstance(value, (list, tuple)):
        items, total = [], 0
        for v in value:
            v2, n = scrub_value(v)
            items.append(v2)
            total += n
        return type(value)(items), total
    return value, 0
