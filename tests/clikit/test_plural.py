"""Counts agree with their nouns: 1 copy, 2 copies, 0 matches."""
from __future__ import annotations

import pytest

from clikit.plural import counted, plural


@pytest.mark.parametrize("noun, many", [
    ("copy", "copies"), ("delivery", "deliveries"), ("query", "queries"),  # consonant + y
    ("day", "days"), ("key", "keys"),  # vowel + y
    ("match", "matches"), ("box", "boxes"), ("address", "addresses"), ("wish", "wishes"),
    ("page", "pages"), ("chapter", "chapters"), ("URL", "URLs"),
    ("webhook event", "webhook events"), ("image match", "image matches"), ("candidate pair", "candidate pairs"),
])
def test_plural(noun: str, many: str) -> None:
    assert plural(noun) == many


@pytest.mark.parametrize("n, said", [(0, "0 copies"), (1, "1 copy"), (2, "2 copies"), (21, "21 copies"),
                                     (-1, "-1 copies")])
def test_counted_agrees_with_the_number(n: int, said: str) -> None:
    assert counted(n, "copy") == said


def test_counted_irregular_and_thousands() -> None:
    assert counted(1, "child", "children") == "1 child"
    assert counted(2, "child", "children") == "2 children"
    assert counted(1024, "page", sep=",") == "1,024 pages"
    assert counted(1, "page", sep=",") == "1 page"
