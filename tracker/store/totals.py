"""The running totals of matches a backend keeps for the reports (Store.match_totals,
count_matches): each is keyed by a few of a match's fields and holds, per group, how many
matches it has and their earliest first_seen and latest last_seen. Both backends keep the
same three; a query is answered from the smallest that is keyed by every field it groups
or filters by ("day" is the UTC date of first_seen)."""
from __future__ import annotations

#: (name, the fields it is keyed by), smallest first.
MATCH_TOTALS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("match_days", ("day", "work", "status")),  # the dashboard's chart, totals by work and status
    ("match_sites", ("work", "site", "status")),  # the works and sites lists, an organisation's sites
    ("match_groups", ("work", "chapter", "site", "status")),  # a work's chapter-by-site matrix
)


def totals_for(fields: set[str]) -> str | None:
    """The smallest running total keyed by every field in `fields`; None when none is."""
    return next((name for name, keys in MATCH_TOTALS if fields <= set(keys)), None)
