"""Discovery: find the sites that copy a work where search engines point, and crawl them.

    plan queries -> search -> keep new URLs -> crawl them, by site -> count -> track -> record

For each work (tracker.discovery.queries makes its queries: distinctive sentences, title,
chapter titles), each query goes through a search provider (tracker.discovery.providers);
the result URLs never seen before and not ignored are remembered and crawled, one crawl
for the run with the URLs grouped by site (`python -m crawler`, in a child process like
the daily re-crawl: Scrapy's reactor starts once per process, and the crawler's robots.txt
and politeness rules apply). A site that was not tracked and whose pages matched becomes
a tracked site, re-crawled daily; with Celery workers the pages are matched after the
crawl, and the next run tracks the sites of the last runs whose pages have matched since.
Each run and each query's counts are kept in the store (tracker.store.discovery).

A site is credited to the first query of the run that returned a new URL on it: its pages
stored and matches made count for that query only, so the queries add up to the run.

Settings come from FPT_* variables or the [discovery] table of the FPT_CONFIG file
(`DiscoverySettings`); the search API's key only from the environment (FPT_SEARCH_KEY).
"""
from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..sites.child_crawl import crawl_in_child
from ..sites.scope import start_urls_cover
from ..store import NotFound, Site, Work, now
from ..store.discovery import DiscoveredUrl, DiscoveryQuery, DiscoveryRun
from .providers import HTTPSearchProvider, SearchError, SearchProvider, SearchResult, config_from
from .queries import Query, QueryPlan, build_queries

log = logging.getLogger(__name__)

#: Longest a discovery crawl may take before it is stopped.
CRAWL_TIMEOUT_S = 3 * 3600
MAX_URL = 2000  # longer result URLs are not crawled (crawler.urls refuses them too)


class DiscoveryError(ValueError):
    """A discovery run that cannot start (no such work, a bad setting); one line with the fix."""


@dataclass(frozen=True)
class DiscoverySettings:
    """Discovery's settings: FPT_<NAME> variables, or NAME in FPT_CONFIG's [discovery] table."""
    search_provider: str = "http"  # FPT_SEARCH_PROVIDER: http, or package.module:Class
    search_preset: str = ""  # FPT_SEARCH_PRESET: searxng | bing | google | brave (answer shape, key header)
    search_url: str = ""  # FPT_SEARCH_URL: the API's URL template ({query}, {page}, ...)
    search_key: str = ""  # FPT_SEARCH_KEY: from the environment only
    search_key_header: str = ""  # FPT_SEARCH_KEY_HEADER
    search_results: str = ""  # FPT_SEARCH_RESULTS: dotted path of the result list [results]
    search_results_optional: str = ""  # FPT_SEARCH_RESULTS_OPTIONAL: true when the API omits an empty list
    search_url_field: str = ""  # FPT_SEARCH_URL_FIELD [url]
    search_title_field: str = ""  # FPT_SEARCH_TITLE_FIELD [title]
    search_snippet_field: str = ""  # FPT_SEARCH_SNIPPET_FIELD [content]
    search_per_page: int = 10  # FPT_SEARCH_PER_PAGE
    search_interval: float = 2.0  # FPT_SEARCH_INTERVAL: seconds between two requests to the API
    search_timeout: float = 15.0  # FPT_SEARCH_TIMEOUT
    search_retries: int = 2  # FPT_SEARCH_RETRIES
    search_backoff: float = 5.0  # FPT_SEARCH_BACKOFF: seconds before the first retry, doubled after
    discovery_results: int = 20  # FPT_DISCOVERY_RESULTS: result URLs asked per query
    discovery_sentences: int = 5  # FPT_DISCOVERY_SENTENCES: distinctive-sentence queries per work
    discovery_chapter_titles: int = 2  # FPT_DISCOVERY_CHAPTER_TITLES: chapter-title queries per work
    discovery_max_queries: int = 500  # FPT_DISCOVERY_MAX_QUERIES: queries per run (the API's quota)
    discovery_ignore: str = ""  # FPT_DISCOVERY_IGNORE: hosts never crawled, comma-separated (your own sites)
    discovery_depth: int = 1  # FPT_DISCOVERY_DEPTH: links followed from a found URL
    discovery_max_pages: int = 50  # FPT_DISCOVERY_MAX_PAGES: pages fetched per new site

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None) -> DiscoverySettings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        path = env.get("FPT_CONFIG")
        if path:
            try:
                with open(path, "rb") as f:
                    values.update(tomllib.load(f).get("discovery", {}))
            except OSError as e:
                raise DiscoveryError(f"cannot read FPT_CONFIG={path}: {e.strerror}; fix the path or unset it") from e
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
                raise DiscoveryError(f"FPT_CONFIG={path} is not valid TOML: {e}") from e
        for f in fields(cls):
            name = f"FPT_{f.name.upper()}"
            if name in env:
                values[f.name] = env[name]
        return cls().updated(values)

    def updated(self, values: Mapping[str, Any]) -> DiscoverySettings:
        known = {f.name for f in fields(self)}
        out = {}
        for name, raw in values.items():
            if name not in known:
                raise DiscoveryError(f"unknown discovery setting {name!r}; known: {', '.join(sorted(known))}")
            kind = type(getattr(self, name))
            try:
                out[name] = kind(raw)
            except (TypeError, ValueError):
                raise DiscoveryError(f"setting {name} (FPT_{name.upper()}) must be a {kind.__name__}, "
                                     f"got {raw!r}") from None
        s = replace(self, **out)
        if min(s.discovery_results, s.discovery_max_pages) < 1 or s.discovery_max_queries < 0 \
                or min(s.discovery_sentences, s.discovery_chapter_titles, s.discovery_depth) < 0:
            raise DiscoveryError("FPT_DISCOVERY_RESULTS and FPT_DISCOVERY_MAX_PAGES must be 1 or more; "
                                 "FPT_DISCOVERY_MAX_QUERIES (0: no limit), _SENTENCES, _CHAPTER_TITLES and _DEPTH "
                                 "0 or more")
        return s

    def plan(self) -> QueryPlan:
        return QueryPlan(sentences=self.discovery_sentences, chapter_titles=self.discovery_chapter_titles)

    def ignored(self) -> tuple[str, ...]:
        return tuple(h.strip().lower().removeprefix("www.") for h in self.discovery_ignore.split(",") if h.strip())

    def search_config(self):
        values = {"url": self.search_url, "key": self.search_key, "key_header": self.search_key_header or None,
                  "results": self.search_results or None, "url_field": self.search_url_field or None,
                  "title_field": self.search_title_field or None,
                  "snippet_field": self.search_snippet_field or None,
                  "results_optional": self.search_results_optional or None, "per_page": self.search_per_page,
                  "interval": self.search_interval, "timeout": self.search_timeout, "retries": self.search_retries,
                  "backoff": self.search_backoff}
        return config_from(values, self.search_preset)


def make_provider(settings: DiscoverySettings, name: str | None = None) -> SearchProvider:
    """The provider named `name` (default FPT_SEARCH_PROVIDER): "http", or "package.module:Class"
    for a plug-in, built with the discovery settings."""
    name = name or settings.search_provider
    if name == "http":
        return HTTPSearchProvider(settings.search_config())
    module, sep, attr = name.partition(":")
    if not sep or not module or not attr:
        raise DiscoveryError(f"unknown search provider {name!r}: use http, or package.module:Class for a plug-in")
    import importlib

    try:
        factory = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise DiscoveryError(f"cannot load the search provider {name!r}: {e}") from None
    provider = factory(settings)
    if not isinstance(provider, SearchProvider):
        raise DiscoveryError(f"{name} does not make a search provider (it needs `name` and `search(query, limit=)`)")
    return provider


# ---- the shapes that move between the stages -------------------------------------------------

@dataclass
class QueryOutcome:
    """What one query found."""
    query: Query
    results: list[SearchResult] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # new URLs sent to the crawler
    error: str = ""
    sites: list[str] = field(default_factory=list)  # sites credited to it
    stored: int = 0
    matches: int = 0


@dataclass
class DiscoveryReport:
    """A run: its record (None for a dry run), its queries and what it did."""
    run: DiscoveryRun | None
    queries: list[QueryOutcome]
    sites_added: list[str] = field(default_factory=list)
    crawl_error: str = ""

    @property
    def counts(self) -> dict[str, int]:
        q = self.queries
        return {"queries": len(q), "failed": sum(1 for o in q if o.error),
                "returned": sum(len(o.results) for o in q), "new": sum(len(o.new) for o in q),
                "stored": sum(o.stored for o in q), "matches": sum(o.matches for o in q),
                "sites_added": len(self.sites_added)}


# ---- the run -------------------------------------------------------------------------------------

def discover(ctx, settings: DiscoverySettings | None = None, *, provider: SearchProvider | None = None,
             work: str | None = None, max_queries: int | None = None, dry_run: bool = False,
             say: Callable[[str], None] = log.warning, crawl_options: Sequence[str] = (),
             provider_name: str | None = None,
             progress: Callable[[dict[str, Any]], None] | None = None) -> DiscoveryReport:
    """One discovery run over every work (or the work whose title or id is `work`); see the
    module's docstring. `say` gets one line per failure (a query the provider did not answer, a
    crawl that failed); the run goes on. `dry_run`: the queries only, nothing sent or stored.
    `provider` (or the one named `provider_name`, by default FPT_SEARCH_PROVIDER) answers the
    queries. `progress` gets {"run", "stage" (search, crawl), "done", "queries"} as the run goes.
    The run is recorded as "running" until it ends, and "failed" when an error stops it."""
    settings = settings or DiscoverySettings.load()
    store = ctx.store
    budget = settings.discovery_max_queries if max_queries is None else max_queries
    work_id = find_work(store, work).id if work is not None else None
    queries = plan_queries(store, settings, work_id)
    outcome = "finished"
    if budget and len(queries) > budget:
        queries, outcome = queries[:budget], "budget"
    if dry_run:
        return DiscoveryReport(run=None, queries=[QueryOutcome(q) for q in queries])
    provider = provider or make_provider(settings, provider_name)
    run = store.add_discovery_run(DiscoveryRun(started_at=now(), finished_at=now(), provider=provider.name,
                                               outcome="running", work=work_id or ""))
    try:
        return _run(ctx, settings, run, provider, queries, outcome, say, crawl_options, progress or (lambda _: None))
    except BaseException:
        run.finished_at, run.outcome = now(), "failed"
        try:
            store.update_discovery_run(run)
        except Exception:
            log.exception("discovery run %s: could not record its failure", run.id)
        raise


def _run(ctx, settings: DiscoverySettings, run: DiscoveryRun, provider: SearchProvider, queries: list[Query],
         outcome: str, say: Callable[[str], None], crawl_options: Sequence[str],
         progress: Callable[[dict[str, Any]], None]) -> DiscoveryReport:
    store = ctx.store
    tracked = store.sites()
    late = track_matched_sites(store, tracked)  # found by earlier runs, matched since (by the workers)
    tracked = store.sites() if late else tracked
    outcomes = []
    for q in queries:
        progress({"run": run.id, "stage": "search", "done": len(outcomes), "queries": len(queries)})
        outcomes.append(search(provider, q, settings.discovery_results, say))
    progress({"run": run.id, "stage": "crawl", "done": len(outcomes), "queries": len(queries)})
    keep_new(store, run, outcomes, tracked, ignored=(*settings.ignored(), _host(getattr(provider, "host", ""))))
    credit(outcomes, tracked)
    by_site = {s: o for o in outcomes for s in o.sites}
    before = {s: store.count_matches(site=s) for s in by_site}
    crawled, error = crawl(ctx.settings, outcomes, tracked, settings, crawl_options) if by_site else ({}, "")
    if error:
        say(error)
    added = list(late)
    tracked_names = {s.name for s in tracked}
    for site, o in by_site.items():
        made = store.count_matches(site=site) - before[site]
        o.stored += crawled.get(site, {}).get("stored", 0)
        o.matches += max(0, made)
        if made > 0 and site not in tracked_names:
            store.upsert_site(Site(name=site, start_urls=_start_urls(outcomes, tracked, site), recrawl=True))
            _give_to_owner_of(store, o.query.work, site)
            added.append(site)
    report = DiscoveryReport(run=run, queries=outcomes, sites_added=added, crawl_error=error)
    for n, o in enumerate(outcomes):
        store.put_discovery_query(DiscoveryQuery(run=run.id, n=n, work=o.query.work, kind=o.query.kind,
                                                 text=o.query.text, returned=len(o.results), new=len(o.new),
                                                 stored=o.stored, matches=o.matches, sites=o.sites,
                                                 error=o.error))
    run.finished_at, run.counts, run.sites_added, run.outcome = now(), report.counts, added, outcome
    report.run = store.update_discovery_run(run)
    return report


def _give_to_owner_of(store, work: str, site: str) -> None:
    """A site found for a work belongs to the work's organisation (tracker.store.tenancy)."""
    owner = getattr(store, "owner", None)
    if owner is None or not work:
        return
    try:
        org = owner("work", work)
        if org != owner("site", site):
            store.set_owner("site", site, org)
    except (ValueError, LookupError):  # a work removed meanwhile keeps the site where it was
        return


def track_matched_sites(store, tracked: Sequence[Site], runs: int = 30) -> list[str]:
    """Track the sites that the last `runs` runs crawled and whose pages have matched since
    (with Celery workers, pages are matched after the run that crawled them); their start
    URLs are their stored pages. Returns the sites added."""
    names = {s.name for s in tracked}
    found: dict[str, str] = {}  # site -> the work whose query found it first
    for run in store.discovery_runs(limit=runs):
        for q in store.discovery_queries(run.id):
            for site in q.sites:
                if site not in names:
                    found.setdefault(site, q.work)
    added = []
    for site, work in found.items():
        if store.count_matches(site=site) > 0:
            start = [p.url or p.key for p in store.find_pages(site=site, limit=20)]
            if start:
                store.upsert_site(Site(name=site, start_urls=start, recrawl=True))
                _give_to_owner_of(store, work, site)
                added.append(site)
    return added


def find_work(store, work: str) -> Work:
    """The work whose id is `work`, else the first whose title is; DiscoveryError when none is."""
    works = store.works()
    found = [w for w in works if w.id == work] or [w for w in works if w.title == work]
    if not found:
        raise DiscoveryError(f"no work titled {work!r}; register it with `fptrack add-work` "
                             "or see the titles with `fptrack works`")
    return found[0]


def plan_queries(store, settings: DiscoverySettings, work: str | None = None) -> list[Query]:
    """The queries of every work (or of the work whose title or id is `work`), work by work."""
    works = store.works() if work is None else [find_work(store, work)]
    plan = settings.plan()
    out: list[Query] = []
    for w in works:
        chapters = ((c.key, c.title, c.text) for c in store.chapters(w.id))
        out.extend(build_queries(w.id, w.title, chapters, plan, author=w.author))
    return out


def search(provider: SearchProvider, query: Query, limit: int, say: Callable[[str], None]) -> QueryOutcome:
    """One query through the provider; its failure is one line, and the run goes on."""
    try:
        results = provider.search(query.text, limit=limit)
    except SearchError as e:
        line = f"query {query.text} ({query.work}): {e}"
        say(line)
        return QueryOutcome(query, error=str(e))
    return QueryOutcome(query, results=list(results)[:limit])


def keep_new(store, run: DiscoveryRun, outcomes: Iterable[QueryOutcome], tracked: Sequence[Site], *,
             ignored: Sequence[str] = ()) -> None:
    """Set each outcome's `new` URLs: http(s), not on an ignored host, never returned by a
    search before and not a stored page; and remember them."""
    ignored = tuple(h for h in ignored if h)
    for o in outcomes:
        urls = []
        for r in o.results:
            url = clean_url(r.url)
            if url and not _on(url, ignored) and url not in urls:
                urls.append(url)
        seen = store.seen_urls(urls)
        fresh = [u for u in urls if u not in seen and not _stored(store, u)]
        records = [DiscoveredUrl(url=u, site=site_of(u, tracked), work=o.query.work, run=run.id, query=o.query.text)
                   for u in fresh]
        o.new = store.add_discovered_urls(records)


def credit(outcomes: Iterable[QueryOutcome], tracked: Sequence[Site]) -> None:
    """Credit each site with new URLs to the first query that returned one."""
    credited: set[str] = set()
    for o in outcomes:
        for url in o.new:
            site = site_of(url, tracked)
            if site not in credited:
                credited.add(site)
                o.sites.append(site)


def crawl(fpt_settings, outcomes: Sequence[QueryOutcome], tracked: Sequence[Site], settings: DiscoverySettings,
          options: Sequence[str] = ()) -> tuple[dict[str, dict[str, int]], str]:
    """Crawl every new URL in one child process (tracker.sites.child_crawl: `fptrack crawl`, which
    groups them by site and applies a tracked site's rules to its URLs), at the discovery depth, with
    a page budget of FPT_DISCOVERY_MAX_PAGES per site; returns the counts per site and a failure's line."""
    urls = list(dict.fromkeys(u for o in outcomes for u in o.new))
    sites = {site_of(u, tracked) for u in urls}
    done = crawl_in_child(fpt_settings, [*urls, "--depth", str(settings.discovery_depth), "--max-pages",
                                         str(settings.discovery_max_pages * len(sites)), "--job", "discovery",
                                         "--fresh", *options], timeout=CRAWL_TIMEOUT_S)
    if done.returncode is None:
        return {}, f"the crawl of the found URLs took more than {CRAWL_TIMEOUT_S} s and was stopped"
    counts: dict[str, dict[str, int]] = {}
    for row in done.rows:
        if isinstance(row.get("site"), str):
            counts[row["site"]] = {k: int(v) for k, v in row.items() if isinstance(v, int)}
    error = f"the crawl of the found URLs failed: {done.last_error()}" if done.failed else ""
    return counts, error


# ---- URLs and sites -------------------------------------------------------------------------------

def clean_url(url: str) -> str:
    """The URL without its fragment; "" when it is not an http(s) URL worth crawling."""
    url = url.strip()
    if len(url) > MAX_URL or any(c.isspace() or ord(c) < 32 for c in url):
        return ""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))


def site_name(url: str) -> str:
    """The name the crawler gives an unknown URL's site: its host without "www.", with the port
    when it is not the default (as crawler.rules.site_name; the tracker does not import the crawler)."""
    parts = urlsplit(url)
    host = _host(parts.hostname or "")
    return f"{host}:{parts.port}" if parts.port and parts.port not in (80, 443) else host


def site_of(url: str, tracked: Sequence[Site]) -> str:
    """The tracked site whose start URLs hold the URL (as the crawler picks its rules), or its own name."""
    for s in tracked:
        if start_urls_cover(s.start_urls, url):
            return s.name
    return site_name(url)


def _host(host: str) -> str:
    host = host.lower()
    return host[4:] if host.startswith("www.") else host


def _on(url: str, hosts: Sequence[str]) -> bool:
    host = _host(urlsplit(url).hostname or "")
    port = urlsplit(url).port
    return any(host == h or host.endswith("." + h) or f"{host}:{port}" == h for h in hosts)


def _stored(store, url: str) -> bool:
    try:
        store.get_page(url)
    except NotFound:
        return False
    return True


def _start_urls(outcomes: Sequence[QueryOutcome], tracked: Sequence[Site], site: str) -> list[str]:
    return list(dict.fromkeys(u for o in outcomes for u in o.new if site_of(u, tracked) == site))[:20]


# ---- the daily run --------------------------------------------------------------------------------

def daily_discovery(ctx) -> dict[str, Any]:
    """Discovery for the daily run (Celery beat): every work, within FPT_DISCOVERY_MAX_QUERIES;
    skipped, with a log line, when no search API is configured. Returns the run's counts."""
    try:
        settings = DiscoverySettings.load()
        if settings.search_provider == "http" and not settings.search_url:
            log.info("discovery skipped: no search API configured (FPT_SEARCH_URL)")
            return {"skipped": "no search API configured (FPT_SEARCH_URL)"}
        report = discover(ctx, settings, say=log.warning)
    except (DiscoveryError, SearchError) as e:
        log.error("discovery did not run: %s", e)
        return {"error": str(e)}
    summary = {"run": report.run.id if report.run else 0, **report.counts, "sites_added": report.sites_added}
    log.info("discovery: %s", summary)
    return summary
