"""The records of discovery (tracker.discovery.discover): each run, what each of its search queries
found, and every URL a search has ever returned, so that a URL is crawled once."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .records import now

#: The parts of a work a query is made from.
QUERY_KINDS = ("title", "chapter-title", "sentence")
#: How a run ended: every query sent; stopped by its query budget; queries only (--dry-run);
#: not ended yet (or its process was killed); stopped by an error.
RUN_OUTCOMES = ("finished", "budget", "dry-run", "running", "failed")


@dataclass
class DiscoveryQuery:
    """One query of a run and what it led to. `stored` and `matches` count the pages and
    matches of the crawl of the new sites this query was the first to return in its run
    (each site is credited to one query, so a run's queries add up to its totals)."""
    run: int  # DiscoveryRun.id
    n: int  # its place in the run, from 0
    work: str  # Work.id
    kind: str  # one of QUERY_KINDS
    text: str  # the query as sent to the search provider
    returned: int = 0  # result URLs the provider returned
    new: int = 0  # of those, URLs never seen before and not ignored: sent to the crawler
    stored: int = 0  # pages stored by the crawl of the sites credited to this query
    matches: int = 0  # matches made on those sites
    sites: list[str] = field(default_factory=list)  # the sites credited to this query
    error: str = ""  # why the provider gave no answer (one line); "" when it answered


@dataclass
class DiscoveryRun:
    """One discovery run: its provider, its totals and the sites it started tracking."""
    started_at: datetime
    finished_at: datetime
    provider: str
    outcome: str = "finished"  # one of RUN_OUTCOMES
    work: str = ""  # the one work searched for; "" for all
    counts: dict[str, int] = field(default_factory=dict)  # queries, failed, returned, new, stored, matches
    sites_added: list[str] = field(default_factory=list)  # sites it added to the tracked sites
    id: int = 0  # assigned by the store


@dataclass
class DiscoveredUrl:
    """A URL a search returned, first seen by the query `query` of run `run`."""
    url: str
    site: str  # the site name the crawler gives it (host[:port])
    work: str = ""
    run: int = 0
    query: str = ""
    first_seen: datetime = field(default_factory=now)


def check_query(q: DiscoveryQuery) -> None:
    """Raise ValueError for a query record no backend should keep."""
    if q.kind not in QUERY_KINDS:
        raise ValueError(f"unknown query kind {q.kind!r}; use one of: {', '.join(QUERY_KINDS)}")
    if q.run < 1 or q.n < 0:
        raise ValueError("a discovery query needs the id of its run (1 or more) and its place in it (0 or more)")


def check_run(run: DiscoveryRun) -> None:
    if run.outcome not in RUN_OUTCOMES:
        raise ValueError(f"unknown discovery outcome {run.outcome!r}; use one of: {', '.join(RUN_OUTCOMES)}")
