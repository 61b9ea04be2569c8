"""What the admin shows, computed from the store's grouped queries and pages of rows.

Nothing here loads every match into Python: lists come one page at a time
(count_matches + matches(limit, offset, sort)), totals from match_totals, and
exports read in batches. Every function returns plain dicts and lists, the
same for the HTML views and the JSON API.

Reports count "active" matches by default: the copies still up (new, confirmed,
takedown-sent; tracker.store.ACTIVE_STATUSES), neither removed after a takedown nor
dismissed as no copy.

A chapter "copied" is one copied in full somewhere (the whole chapter on a page); chapters
copied only in part, or only quoted in an excerpt, are counted apart (tracker.store.totals),
each chapter under the most any copy of it carries.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from typing import Any

from tracker.followup import notify
from tracker.media.pictures import counts_sentence, readings_sentence, site_readings
from tracker.store import ACTIVE_STATUSES, PAGE_STATUSES, CrawlRun, MatchRecord, NotFound, Page, Store
from tracker.store.totals import best_kind, describe, kind_counts

from ..params import ACTIVE, Paging
from .catalog import ChapterCatalog, Outline
from .snapshots import Snapshots

EXPORT_BATCH = 1000
CRAWLS_LOOKED_AT = 50  # the latest crawl runs the dashboard looks through for failed ones
MATRIX_SITES = 25  # columns of the chapter-by-site matrix in HTML (the JSON has every site)
TOP = 10

MATCH_COLUMNS = ["page", "chapter", "chapter_title", "work", "site", "verdict", "similarity", "containment",
                 "page_share", "passages", "status", "first_seen", "last_seen"]
PAGE_COLUMNS = ["key", "url", "site", "status", "reason", "attempts", "fetched_at", "updated_at"]
RUN_COLUMNS = ["id", "site", "job", "started_at", "finished_at", "outcome", "fetched", "stored", "unchanged",
               "not_modified", "skipped", "failed", "matched", "skipped_reasons", "failed_reasons"]


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)


def _earlier(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def _count_in(agg: dict[str, Any], r: dict[str, Any]) -> None:
    """Count a summary row into `agg`: its matches, and the first and last time they were seen."""
    agg["matches"] += r["matches"]
    agg["first_seen"] = _earlier(agg["first_seen"], r["first_seen"])
    agg["last_seen"] = _later(agg["last_seen"], r["last_seen"])


def statuses_of(scope: str) -> str | list[str] | None:
    """The match statuses a scope stands for: "all" (None), one status, or "active" (the copies still up)."""
    return None if scope == "all" else list(ACTIVE_STATUSES) if scope == ACTIVE else scope


def summary(store: Store, by: Sequence[str], *, scope: str = ACTIVE, work: str | None = None,
            site: str | None = None) -> list[dict[str, Any]]:
    """Matches grouped by `by` in a scope: "all", one status, or "active" (the copies still up)."""
    return store.match_totals(by, work=work, site=site, status=statuses_of(scope))


def kind_fields(kinds: dict[str, int], chapters: int) -> dict[str, Any]:
    """A report's counts of chapters by the most any copy of each carries: "copied" (in full),
    "in_part", "excerpted", "chapters_found" (any of them), and "coverage" (copied in full / chapters)."""
    found = sum(kinds.values())
    return {"copied": kinds["full"], "in_part": kinds["part"], "excerpted": kinds["excerpt"],
            "chapters_found": found, "coverage": kinds["full"] / chapters if chapters else 0.0}


def fill_days(counts: dict[str, int], days: int, today: date | None = None) -> list[dict[str, Any]]:
    """One row per day for the last `days` days up to today (UTC), with 0 where nothing was found."""
    today = today or datetime.now(UTC).date()
    out = []
    for i in range(days - 1, -1, -1):
        d = (today - timedelta(days=i)).isoformat()
        out.append({"day": d, "matches": counts.get(d, 0)})
    return out


def page_row(p: Page) -> dict[str, Any]:
    return {"key": p.key, "url": p.url, "site": p.site, "status": p.status, "reason": p.reason,
            "attempts": p.attempts, "fetched_at": p.fetched_at, "updated_at": p.updated_at}


def run_row(r: CrawlRun) -> dict[str, Any]:
    row = {"id": r.id, "site": r.site, "job": r.job, "started_at": r.started_at, "finished_at": r.finished_at,
           "outcome": r.outcome, "skipped_reasons": dict(r.skipped), "failed_reasons": dict(r.failed)}
    for k in ("fetched", "stored", "unchanged", "skipped", "failed", "matched"):
        row[k] = r.counts.get(k, 0)
    row["not_modified"] = r.counts.get("not modified", 0)  # 304s: pages the server said are unchanged
    row["pictures"] = counts_sentence(r.counts, r.skipped, r.failed)  # chapters posted as pictures, in words
    return row


class Reports:
    """The reports of one request, on the app's store and chapter catalog."""

    def __init__(self, store: Store, catalog: ChapterCatalog, snapshots: Snapshots | None = None):
        self.store, self.catalog = store, catalog
        self.snapshots = snapshots or Snapshots(0)

    @cached_property
    def outline(self) -> Outline:
        return self.catalog.outline(self.store)

    def match_row(self, m: MatchRecord) -> dict[str, Any]:
        return {"page": m.page, "chapter": m.chapter, "chapter_title": self.outline.title(m.chapter), "work": m.work,
                "site": m.site, "verdict": m.verdict, "similarity": m.similarity, "containment": m.containment,
                "page_share": m.page_share, "passages": len(m.spans), "status": m.status,
                "first_seen": m.first_seen, "last_seen": m.last_seen}

    # ---- dashboard -------------------------------------------------------------

    def dashboard(self, days: int = 30, today: date | None = None) -> dict[str, Any]:
        return self.snapshots.get(("dashboard", days, today), lambda: self._dashboard(days, today))

    def _dashboard(self, days: int, today: date | None) -> dict[str, Any]:
        per_day = {str(r["day"]): r["matches"] for r in self.store.match_totals(["day"])}
        top = summary(self.store, ["site"])[:TOP]
        counts = self.store.counts()
        # No count of chapters by kind here: it reads every chapter's totals on every site (a third of a
        # second at 200,000 matches); the works list and each work's report give it.
        return {
            "counts": counts,
            "active": sum(counts["matches"].get(s, 0) for s in ACTIVE_STATUSES),
            "per_day": fill_days(per_day, days, today),
            "top_sites": [{"site": r["site"], "matches": r["matches"], "first_seen": r["first_seen"],
                           "last_seen": r["last_seen"]} for r in top],
            "failures": [page_row(p) for p in self.store.failures(TOP)],
            "crawl_failures": self._crawl_failures(),
        }

    def _crawl_failures(self) -> list[dict[str, Any]]:
        """The latest crawl runs that failed (pages failed, nothing fetched, or an abnormal end: the
        runs a crawl-failed event is raised for), with why: pages that failed while crawling are
        counted in their run, not kept as pages."""
        out = []
        for run in self.store.crawl_runs(limit=CRAWLS_LOOKED_AT):
            event = notify.crawl_failed_event(run)
            if event is not None:
                out.append({**run_row(run), "why": event.summary})
                if len(out) == TOP:
                    break
        return out

    # ---- works -----------------------------------------------------------------

    def works(self, scope: str = ACTIVE) -> list[dict[str, Any]]:
        """Every work with how much of it is copied (in full, in part, in an excerpt) and where."""
        return self.snapshots.get(("works", scope), lambda: self._works(scope))

    def _works(self, scope: str) -> list[dict[str, Any]]:
        agg: dict[str, dict[str, Any]] = {}
        verdicts: dict[tuple[str, str], list[str]] = {}
        for r in summary(self.store, ["work", "chapter", "verdict"], scope=scope):
            a = agg.setdefault(r["work"], {"matches": 0, "first_seen": None, "last_seen": None})
            _count_in(a, r)
            verdicts.setdefault((r["work"], r["chapter"]), []).append(r["verdict"])
        kinds: dict[str, list[str | None]] = {}
        for (work, _), vs in verdicts.items():
            kinds.setdefault(work, []).append(best_kind(vs))
        sites: dict[str, int] = {}
        for r in summary(self.store, ["work", "site"], scope=scope):
            sites[r["work"]] = sites.get(r["work"], 0) + 1
        rows = []
        for w in self.store.works():
            a = agg.get(w.id, {})
            total = self.outline.count(w.id)
            rows.append({"work": w.id, "title": w.title, "author": w.author, "chapters": total,
                         **kind_fields(kind_counts(kinds.get(w.id, [])), total), "matches": a.get("matches", 0),
                         "sites": sites.get(w.id, 0), "first_seen": a.get("first_seen"),
                         "last_seen": a.get("last_seen"), "registered": w.created_at})
        return rows

    def work(self, work_id: str, scope: str = ACTIVE) -> dict[str, Any]:
        """Where one work is copied: sites ranked by chapters copied, coverage, and a chapter-by-site matrix."""
        w = self.store.get_work(work_id)  # outside the snapshot: an unknown work is a 404 at once
        return self.snapshots.get(("work", w.id, scope), lambda: self._work(w, scope))

    def _work(self, w, scope: str) -> dict[str, Any]:
        chapters = self.outline.of_work(w.id)
        total = len(chapters)
        sites: dict[str, dict[str, Any]] = {}
        by_chapter: dict[str, dict[str, Any]] = {}
        on_site: dict[tuple[str, str], list[str]] = {}  # (site, chapter) -> its copies' verdicts
        for r in summary(self.store, ["site", "chapter", "verdict"], scope=scope, work=w.id):
            s = sites.setdefault(r["site"], {"site": r["site"], "matches": 0, "first_seen": None, "last_seen": None})
            c = by_chapter.setdefault(r["chapter"], {"by_site": {}, "matches": 0, "first_seen": None,
                                                      "last_seen": None, "verdicts": []})
            for a in (s, c):
                _count_in(a, r)
            c["by_site"][r["site"]] = c["by_site"].get(r["site"], 0) + r["matches"]
            c["verdicts"].append(r["verdict"])
            on_site.setdefault((r["site"], r["chapter"]), []).append(r["verdict"])
        site_kinds: dict[str, list[str | None]] = {}
        for (site, _), vs in on_site.items():
            site_kinds.setdefault(site, []).append(best_kind(vs))
        for name, s in sites.items():
            s.update(kind_fields(kind_counts(site_kinds[name]), total))
        ranked = sorted(sites.values(), key=lambda s: (-s["copied"], -s["chapters_found"], -s["matches"], s["site"]))
        rows = []
        known = set()
        for info in chapters:
            known.add(info.key)
            rows.append(self._chapter_row(info.key, info.title, info.number, by_chapter.get(info.key), True))
        for key in sorted(set(by_chapter) - known):  # matches stay when a chapter is deleted
            rows.append(self._chapter_row(key, self.outline.title(key), None, by_chapter[key], False))
        kinds = kind_counts(r["kind"] for r in rows if r["registered"])
        return {
            "work": {"work": w.id, "title": w.title, "author": w.author, "registered": w.created_at},
            "scope": scope,
            "totals": {"chapters": total, **kind_fields(kinds, total), "summary": describe(kinds, total),
                       "sites": len(ranked), "matches": sum(s["matches"] for s in ranked),
                       "first_seen": min((s["first_seen"] for s in ranked if s["first_seen"]), default=None),
                       "last_seen": max((s["last_seen"] for s in ranked if s["last_seen"]), default=None)},
            "sites": ranked,
            "chapters": rows,
            "matrix_sites": [s["site"] for s in ranked[:MATRIX_SITES]],
            # Its registered covers and illustrations, and how many copies of them pages show.
            "images": {"registered": self.store.count_work_images(w.id),
                       "copies": self.store.count_image_matches(work=w.id, status=statuses_of(scope))},
        }

    @staticmethod
    def _chapter_row(key: str, title: str, number: int | None, agg: dict[str, Any] | None,
                     registered: bool) -> dict[str, Any]:
        agg = agg or {"by_site": {}, "matches": 0, "first_seen": None, "last_seen": None, "verdicts": []}
        return {"chapter": key, "title": title, "number": number, "registered": registered,
                "kind": best_kind(agg["verdicts"]), "matches": agg["matches"], "sites": len(agg["by_site"]),
                "by_site": agg["by_site"], "first_seen": agg["first_seen"], "last_seen": agg["last_seen"]}

    # ---- sites -----------------------------------------------------------------

    def sites(self, scope: str = ACTIVE) -> list[dict[str, Any]]:
        """Every site seen in pages, matches or the crawl configuration."""
        return self.snapshots.get(("sites", scope), lambda: self._sites(scope))

    def _sites(self, scope: str) -> list[dict[str, Any]]:
        rows: dict[str, dict[str, Any]] = {}

        def row(name: str) -> dict[str, Any]:
            return rows.setdefault(name, {"site": name, "configured": False, "recrawl": None, "pages": 0,
                                          **dict.fromkeys(PAGE_STATUSES, 0), "last_fetched": None, "works": 0,
                                          "matches": 0, "first_seen": None, "last_seen": None,
                                          "last_crawl": None, "last_outcome": None})

        for r in self.store.page_summary(["site", "status"]):
            x = row(r["site"])
            x[r["status"]] = r["pages"]
            x["pages"] += r["pages"]
            x["last_fetched"] = _later(x["last_fetched"], r["last_fetched"])
        for r in summary(self.store, ["site", "work"], scope=scope):
            x = row(r["site"])
            x["works"] += 1
            _count_in(x, r)
        for s in self.store.sites():
            x = row(s.name)
            x["configured"], x["recrawl"] = True, s.recrawl
        for name, x in rows.items():
            runs = self.store.crawl_runs(site=name, limit=1)
            if runs:
                x["last_crawl"], x["last_outcome"] = runs[0].finished_at, runs[0].outcome
        return sorted(rows.values(), key=lambda x: (-x["matches"], -x["pages"], x["site"]))

    def site(self, name: str, paging: Paging, scope: str = ACTIVE, runs: int = 20) -> dict[str, Any]:
        """What one site copies, how its crawls went, and its failed pages (a page of them)."""
        try:
            config = self.store.get_site(name)
        except NotFound:
            config = None
        pages = {s: self.store.count_pages(site=name, status=s) for s in PAGE_STATUSES}
        works: dict[str, dict[str, Any]] = {}
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for r in summary(self.store, ["work", "chapter", "verdict"], scope=scope, site=name):
            w = works.setdefault(r["work"], {"work": r["work"], "matches": 0, "first_seen": None, "last_seen": None,
                                             "kinds": []})
            c = found.setdefault((r["work"], r["chapter"]), {
                "chapter": r["chapter"], "title": self.outline.title(r["chapter"]), "work": r["work"], "matches": 0,
                "first_seen": None, "last_seen": None, "verdicts": []})
            for a in (w, c):
                _count_in(a, r)
            c["verdicts"].append(r["verdict"])
        chapters = []
        for c in sorted(found.values(), key=lambda c: (-c["matches"], c["work"], c["chapter"])):
            c["kind"] = best_kind(c.pop("verdicts"))
            works[c["work"]]["kinds"].append(c["kind"])
            chapters.append(c)
        for w in works.values():
            total = self.outline.count(w["work"])
            w["chapters"] = total
            w.update(kind_fields(kind_counts(w.pop("kinds")), total))
        crawl = [run_row(r) for r in self.store.crawl_runs(site=name, limit=runs)]
        pictures = {"last_crawl": next((r["pictures"] for r in crawl if r["pictures"]), ""),
                    "now": readings_sentence(site_readings(self.store, name))}
        if config is None and not any(pages.values()) and not works and not crawl:
            raise NotFound(f"no site named {name!r} in the configuration, pages or matches")
        paging.total = pages["failed"]
        failures = self.store.find_pages(status="failed", site=name, limit=paging.per_page, offset=paging.offset)
        return {
            "site": name,
            "config": None if config is None else {"start_urls": list(config.start_urls), "rules": config.rules,
                                                   "recrawl": config.recrawl, "created_at": config.created_at,
                                                   "updated_at": config.updated_at},
            "scope": scope,
            "pages": pages,
            "works": sorted(works.values(),
                            key=lambda w: (-w["copied"], -w["chapters_found"], -w["matches"], w["work"])),
            "chapters": chapters[:100],
            "chapters_total": len(chapters),
            "crawls": crawl,
            "crawl_totals": self._crawl_totals(crawl),
            "pictures": pictures,
            "failures": [page_row(p) for p in failures],
            "paging": paging.to_json(),
        }

    @staticmethod
    def _crawl_totals(runs: list[dict[str, Any]]) -> dict[str, Any]:
        """The listed crawls added up: page counts, and pages per skip and failure reason."""
        counts = {k: sum(r[k] for r in runs) for k in ("fetched", "stored", "unchanged", "not_modified", "skipped",
                                                        "failed", "matched")}
        skipped: dict[str, int] = {}
        failed: dict[str, int] = {}
        outcomes: dict[str, int] = {}
        for r in runs:
            for reason, n in r["skipped_reasons"].items():
                skipped[reason] = skipped.get(reason, 0) + n
            for reason, n in r["failed_reasons"].items():
                failed[reason] = failed.get(reason, 0) + n
            outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
        order = lambda d: dict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))  # noqa: E731
        return {"runs": len(runs), "counts": counts, "skipped": order(skipped), "failed": order(failed),
                "outcomes": order(outcomes)}

    # ---- matches ---------------------------------------------------------------

    def matches(self, filters: dict[str, str | None], sort: str, paging: Paging) -> dict[str, Any]:
        paging.total = self.store.count_matches(**filters)
        found = self.store.matches(**filters, sort=sort, limit=paging.per_page, offset=paging.offset)
        return {"filters": filters, "sort": sort, "paging": paging.to_json(),
                "matches": [self.match_row(m) for m in found]}

    def iter_matches(self, filters: dict[str, str | None], sort: str = "-containment") -> Iterator[dict[str, Any]]:
        """Every match the filters select, read EXPORT_BATCH at a time."""
        offset = 0
        while True:
            batch = self.store.matches(**filters, sort=sort, limit=EXPORT_BATCH, offset=offset)
            for m in batch:
                yield self.match_row(m)
            if len(batch) < EXPORT_BATCH:
                return
            offset += EXPORT_BATCH

    def iter_pages(self, filters: dict[str, str | None]) -> Iterator[dict[str, Any]]:
        offset = 0
        while True:
            batch = self.store.find_pages(**filters, limit=EXPORT_BATCH, offset=offset)
            for p in batch:
                yield page_row(p)
            if len(batch) < EXPORT_BATCH:
                return
            offset += EXPORT_BATCH

    # ---- search ----------------------------------------------------------------

    def search(self, q: str, paging: Paging) -> dict[str, Any]:
        """Works by id, title or author; sites by name; pages by key or URL."""
        needle = q.casefold()
        works = [{"work": w.id, "title": w.title, "author": w.author} for w in self.store.works()
                 if needle in w.id.casefold() or needle in w.title.casefold() or needle in w.author.casefold()]
        names = {r["site"] for r in self.store.page_summary(["site"])} | {s.name for s in self.store.sites()}
        sites = sorted(n for n in names if needle in n.casefold())
        try:
            exact = page_row(self.store.get_page(q))
        except NotFound:
            exact = None
        paging.total = self.store.count_pages(url_contains=q)
        pages = self.store.find_pages(url_contains=q, limit=paging.per_page, offset=paging.offset)
        return {"q": q, "works": works, "sites": sites, "page": exact, "pages": [page_row(p) for p in pages],
                "paging": paging.to_json()}
