"""Match totals (Store.match_totals), counts and page summaries stay exact under every change.

The SQLite store answers these from running totals kept by triggers (tracker/store/sqlite/
rollups.py), MongoDB by aggregation; both must agree with the matches themselves after any
sequence of inserts, re-observations, status changes and deletions.
"""
from __future__ import annotations

import itertools
import random
from collections import defaultdict
from datetime import timedelta

import pytest

from tracker.store import ACTIVE_STATUSES, MATCH_STATUSES, PAGE_STATUSES, Chapter, NotFound, Work

from .store_contract import at, match, page

GROUPINGS = [list(p) for n in (1, 2, 3)
             for p in itertools.permutations(("work", "site", "chapter", "status", "day", "verdict"), n)]
VERDICTS = ("duplicate", "contains", "part", "excerpt")


def truth(store, by, *, work=None, site=None, status=None) -> list[dict]:
    """The totals computed here from every match the store returns."""
    wanted = None if status is None else {status} if isinstance(status, str) else set(status)
    works = None if work is None else {work} if isinstance(work, str) else set(work)
    groups: dict[tuple, dict] = {}
    for m in store.matches():
        if (works is not None and m.work not in works) or (site is not None and m.site != site) or (
                wanted is not None and m.status not in wanted):
            continue
        values = {"work": m.work, "site": m.site, "chapter": m.chapter, "status": m.status,
                  "day": m.first_seen.date().isoformat(), "verdict": m.verdict}
        key = tuple(values[f] for f in by)
        g = groups.setdefault(key, {**{f: values[f] for f in by}, "matches": 0, "first_seen": m.first_seen,
                                    "last_seen": m.last_seen})
        g["matches"] += 1
        g["first_seen"], g["last_seen"] = min(g["first_seen"], m.first_seen), max(g["last_seen"], m.last_seen)
    return sorted(groups.values(), key=lambda g: (-g["matches"], *(g[f] for f in by)))


def check_everything(store, works, sites) -> None:
    for by in GROUPINGS:
        assert store.match_totals(by) == truth(store, by), by
    for w, s, st in itertools.product([None, works[0], list(works[:2])], [None, sites[0]],
                                      [None, "new", ["new", "confirmed"], list(ACTIVE_STATUSES)]):
        for by in (["site"], ["work", "chapter"], ["site", "chapter"], ["day"], ["site", "work"],
                   ["work", "chapter", "verdict"], ["site", "chapter", "verdict"]):
            assert store.match_totals(by, work=w, site=s, status=st) == truth(store, by, work=w, site=s, status=st), (
                by, w, s, st)
        assert store.count_matches(work=w, site=s, status=st) == len(store.matches(work=w, site=s, status=st))
    pages = defaultdict(lambda: [0, None])
    for p in store.find_pages(limit=None):
        g = pages[(p.site, p.status)]
        g[0] += 1
        g[1] = p.fetched_at if g[1] is None else max(g[1], p.fetched_at)
    assert {(r["site"], r["status"]): [r["pages"], r["last_fetched"]] for r in store.page_summary(["site", "status"])
            } == dict(pages.items())
    counts = store.counts()
    for s in MATCH_STATUSES:
        assert counts["matches"][s] == store.count_matches(status=s)
    for s in PAGE_STATUSES:
        assert counts["pages"][s] == store.count_pages(status=s)


class TotalsContract:
    def test_match_totals_are_the_summary_without_distinct_counts(self, store):
        for _i, (p, c, site, minutes) in enumerate([("https://a.com/1", "W/1", "a.com", 0), ("https://a.com/2", "W/2",
                                                   "a.com", 60 * 24), ("https://a.com/1b", "W/1", "a.com", 1),
                                                  ("https://b.org/x", "V/1", "b.org", 2)]):
            store.upsert_match(match(p, c, site=site, first_seen=at(minutes), last_seen=at(minutes + 60)))
        store.set_match_status("https://a.com/2", "W/2", "confirmed", by="ann")
        for by in GROUPINGS:
            summary = [{k: v for k, v in r.items() if k not in ("pages", "chapters")} for r in store.match_summary(by)]
            assert store.match_totals(by) == summary, by
        assert store.match_totals(["site"], work="W") == [
            {"site": "a.com", "matches": 3, "first_seen": at(0), "last_seen": at(60 * 24 + 60)}]
        assert store.match_totals(["work"], work=["nothing"]) == []
        with pytest.raises(ValueError, match="unknown match status"):
            store.match_totals(["work"], status="gone")
        for bad in ([], ["password"], ["site", "site"]):
            with pytest.raises(ValueError):
                store.match_totals(bad)

    def test_a_page_that_copies_more_moves_its_match_to_another_kind(self, store):
        store.upsert_match(match("https://a.com/1", "W/1", site="a.com", verdict="excerpt", first_seen=at(0),
                                 last_seen=at(30)))
        store.upsert_match(match("https://b.org/1", "W/1", site="b.org", verdict="duplicate", first_seen=at(0),
                                 last_seen=at(30)))
        assert [(r["site"], r["verdict"]) for r in store.match_totals(["site", "verdict"], work="W")] == [
            ("a.com", "excerpt"), ("b.org", "duplicate")]
        store.upsert_match(match("https://a.com/1", "W/1", site="a.com", verdict="part", first_seen=at(0),
                                 last_seen=at(90)))
        assert store.match_totals(["chapter", "verdict"], work="W", site="a.com") == [
            {"chapter": "W/1", "verdict": "part", "matches": 1, "first_seen": at(0), "last_seen": at(90)}]
        assert store.count_matches(work="W", site="a.com") == 1

    def test_active_counts_the_copies_still_up(self, store):
        for i, status in enumerate(MATCH_STATUSES):
            store.upsert_match(match(f"https://a.com/{i}", "W/1", site="a.com"))
            store.set_match_status(f"https://a.com/{i}", "W/1", status, by="ann")
        rows = store.match_totals(["status"], status=list(ACTIVE_STATUSES))
        assert sorted(r["status"] for r in rows) == ["confirmed", "new", "takedown-sent"]
        assert store.count_matches(site="a.com", status=list(ACTIVE_STATUSES)) == 3
        store.set_match_status("https://a.com/0", "W/1", "removed", by="ann")  # the new one taken down
        assert store.match_totals(["site"], status=list(ACTIVE_STATUSES))[0]["matches"] == 2

    def test_totals_stay_exact_under_any_sequence_of_changes(self, store):
        rng = random.Random(5)
        works, sites = ["W", "V", "U"], ["a.com", "b.org", "c.net"]
        for w in works:
            store.upsert_work(Work(id=w, title=w))
            for n in range(1, 5):
                store.upsert_chapter(Chapter(key=f"{w}/{n}", work=w, title=str(n), text=f"{w} 第{n}章"))
        pages: list[str] = []
        for step in range(160):
            op = rng.random()
            if op < 0.45 or not pages:  # a new page copying one or two chapters
                site, w = rng.choice(sites), rng.choice(works)
                key = f"https://{site}/{step}"
                fetched = at(rng.uniform(0, 5 * 24 * 60))
                store.upsert_page(page(key, text=f"第{step}页", site=site, fetched_at=fetched))
                for n in rng.sample(range(1, 5), rng.choice((1, 2))):
                    seen = at(rng.uniform(0, 5 * 24 * 60))
                    store.upsert_match(match(key, f"{w}/{n}", site=site, first_seen=seen, verdict=rng.choice(VERDICTS),
                                             last_seen=seen + timedelta(hours=rng.uniform(0, 30))))
                pages.append(key)
            elif op < 0.65:  # seen again later (last_seen only moves forward) or by an older observation
                m = rng.choice(store.matches(page=rng.choice(pages)) or [None])
                if m is not None:
                    m.last_seen = m.last_seen + timedelta(hours=rng.uniform(-40, 40))
                    if rng.random() < 0.4:  # the page changed: more or less of the chapter copied
                        m.verdict = rng.choice(VERDICTS)
                    store.upsert_match(m)
            elif op < 0.85:  # an admin reviews a match
                m = rng.choice(store.matches(page=rng.choice(pages)) or [None])
                if m is not None:
                    store.set_match_status(m.page, m.chapter, rng.choice(MATCH_STATUSES), by="ann")
            elif op < 0.93:  # a page status changes, or it is deleted
                key = rng.choice(pages)
                if rng.random() < 0.5:
                    store.set_page_status(key, rng.choice(PAGE_STATUSES), "why")
                elif store.delete_page(key):
                    pages.remove(key)
            elif op < 0.97:  # a chapter goes (its matches stay)
                w = rng.choice(works)
                try:
                    store.delete_chapter(f"{w}/{rng.randrange(1, 5)}")
                except NotFound:
                    pass
            else:  # a whole work goes, with its matches
                w = rng.choice(works)
                try:
                    store.delete_work(w)
                except NotFound:
                    pass
            if step % 40 == 39:
                check_everything(store, works, sites)
        check_everything(store, works, sites)
