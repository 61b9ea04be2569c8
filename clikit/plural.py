"""Counts in words: "1 copy", "2 copies", "0 matches", for every message that counts things."""
from __future__ import annotations

_SIBILANT = ("s", "x", "z", "ch", "sh")


def plural(noun: str) -> str:
    """The plural of an English noun phrase, its last word inflected.

    >>> plural("copy"), plural("match"), plural("day"), plural("webhook event")
    ('copies', 'matches', 'days', 'webhook events')
    """
    if not noun:
        return noun
    if len(noun) > 1 and noun.endswith("y") and noun[-2].lower() not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(_SIBILANT):
        return noun + "es"
    return noun + "s"


def counted(n: int, noun: str, many: str | None = None, *, sep: str = "") -> str:
    """`n` and the noun agreeing with it: counted(1, "copy") -> "1 copy", counted(3, "copy") -> "3 copies".

    `many` gives an irregular plural; sep="," writes thousands apart (1,024 pages)."""
    number = f"{n:,}" if sep == "," else str(n)
    return f"{number} {noun if n == 1 else (many or plural(noun))}"
