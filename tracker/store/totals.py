"""The running totals of matches a backend keeps for the reports (Store.match_totals,
count_matches): each is keyed by a few of a match's fields and holds, per group, how many
matches it has and their earliest first_seen and latest last_seen. Both backends keep the
same three; a query is answered from the smallest that is keyed by every field it groups
or filters by ("day" is the UTC date of first_seen).

The kinds of copy: a match's verdict (fingerprint.engine.verdict_for) says how much of the
chapter a page carries; the reports count chapters copied in full, in part and in an
excerpt apart, so a short quotation never reads as a whole chapter copied.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..wording import EXCERPT, FULL_COPY, PART
from ..wording import KINDS as WORDED_KINDS

#: (name, the fields it is keyed by), smallest first.
MATCH_TOTALS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("match_days", ("day", "work", "status")),  # the dashboard's chart, totals by work and status
    ("match_sites", ("work", "site", "status")),  # the works and sites lists, an organisation's sites
    # a work's chapter-by-site matrix, and how much of each chapter a site copies
    ("match_verdicts", ("work", "chapter", "site", "status", "verdict")),
)
#: Totals kept by earlier versions, dropped when a store is opened.
RETIRED_TOTALS = ("match_groups",)

#: How much of a chapter a copy carries, the most first: the whole chapter (alone or among
#: other text), a large share of it, or a small one.
KINDS = ("full", "part", "excerpt")
#: The verdict of a match -> its kind, as tracker.wording names the kinds of copy.
KIND_OF_VERDICT = {verdict: {FULL_COPY: "full", PART: "part", EXCERPT: "excerpt"}[worded]
                   for verdict, worded in WORDED_KINDS.items()}


def totals_for(fields: set[str]) -> str | None:
    """The smallest running total keyed by every field in `fields`; None when none is."""
    return next((name for name, keys in MATCH_TOTALS if fields <= set(keys)), None)


def kind_of(verdict: str) -> str:
    """The kind of copy a verdict stands for; an unknown one counts as the least (an excerpt)."""
    return KIND_OF_VERDICT.get(verdict, "excerpt")


def best_kind(verdicts: Iterable[str]) -> str | None:
    """The most of a chapter any of its copies carries (full > part > excerpt); None for no copy.

    >>> best_kind(["excerpt", "part"])
    'part'
    """
    ranks = [KINDS.index(kind_of(v)) for v in verdicts]
    return KINDS[min(ranks)] if ranks else None


def kind_counts(kinds: Iterable[str | None]) -> dict[str, int]:
    """{"full": n, "part": n, "excerpt": n}: how many chapters have each kind as their best."""
    out = dict.fromkeys(KINDS, 0)
    for k in kinds:
        if k is not None:
            out[k] += 1
    return out


def describe(kinds: dict[str, int], chapters: int) -> str:
    """How much of a work is copied, in words.

    >>> describe({"full": 3, "part": 0, "excerpt": 1}, 4)
    '3 of 4 chapters copied in full, 1 quoted in an excerpt'
    """
    words = [f"{kinds.get('full', 0)} of {chapters} chapter{'' if chapters == 1 else 's'} copied in full"]
    if kinds.get("part"):
        words.append(f"{kinds['part']} copied in part")
    if kinds.get("excerpt"):
        n = kinds["excerpt"]
        words.append(f"{n} quoted in {'an excerpt' if n == 1 else 'excerpts'}")
    return ", ".join(words)
