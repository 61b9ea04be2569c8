"""MongoDB: watched sites with their rules, and what each crawl of them did."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, ReturnDocument

from ..records import CrawlRun, NotFound, Site
from ..values import check_window, clean_counts, utc
from .connection import NO_ID, MongoBase, _guarded, _query, aware, storable

INDEXES = {
    "sites": [([("name", ASCENDING)], True)],
    "crawl_runs": [
        ([("id", ASCENDING)], True),
        ([("site", ASCENDING), ("started_at", DESCENDING)], False),
        ([("started_at", DESCENDING)], False),
    ],
}


def _site(d: dict[str, Any]) -> Site:
    # hour, every and last_scheduled came with schedules: a site stored before has none of them.
    return Site(name=d["name"], start_urls=list(d["start_urls"]), rules=aware(d.get("rules") or {}),
                recrawl=bool(d["recrawl"]), created_at=aware(d["created_at"]), updated_at=aware(d["updated_at"]),
                hour=d.get("hour"), every=int(d.get("every") or 1), last_scheduled=aware(d.get("last_scheduled")))


def _crawl_run(d: dict[str, Any]) -> CrawlRun:
    return CrawlRun(site=d["site"], job=d["job"], started_at=aware(d["started_at"]),
                    finished_at=aware(d["finished_at"]), outcome=d["outcome"], counts=_unkeyed(d.get("counts")),
                    skipped=_unkeyed(d.get("skipped")), failed=_unkeyed(d.get("failed")), id=int(d["id"]))


def _keyed(counts: dict[str, int]) -> list[dict[str, Any]]:
    # Reasons are free text (dots, "$"): kept as a list of pairs, since MongoDB field names cannot hold them.
    return [{"k": k, "n": n} for k, n in clean_counts(counts).items()]


def _unkeyed(pairs: list[dict[str, Any]] | None) -> dict[str, int]:
    return {p["k"]: int(p["n"]) for p in pairs or []}


class SitesMongo(MongoBase):
    """Sites and crawl runs in MongoDB."""

    # ---- sites and crawls -----------------------------------------------------------

    @_guarded
    def upsert_site(self, site: Site) -> Site:
        return _site(self._upsert(self._sites, {"name": site.name},
                                  {"$set": {"start_urls": list(site.start_urls), "rules": storable(site.rules),
                                            "recrawl": bool(site.recrawl), "updated_at": utc(site.updated_at),
                                            "hour": site.hour, "every": int(site.every)},
                                   "$setOnInsert": {"created_at": utc(site.created_at)}}, "site"))

    @_guarded
    def claim_site_slot(self, name: str, slot: datetime) -> bool:
        at = utc(slot)
        return self._sites.update_one(
            {"name": name, "$or": [{"last_scheduled": None}, {"last_scheduled": {"$lt": at}}]},
            {"$set": {"last_scheduled": at}}).modified_count == 1

    @_guarded
    def get_site(self, name: str) -> Site:
        d = self._sites.find_one({"name": name}, NO_ID)
        if d is None:
            raise NotFound(f"no site {name!r}")
        return _site(d)

    @_guarded
    def sites(self) -> list[Site]:
        return [_site(d) for d in self._sites.find({}, NO_ID).sort("name", ASCENDING)]

    @_guarded
    def delete_site(self, name: str) -> None:
        if self._sites.delete_one({"name": name}).deleted_count == 0:
            raise NotFound(f"no site {name!r}")

    @_guarded
    def add_crawl_run(self, run: CrawlRun) -> CrawlRun:
        r = self._counters.find_one_and_update({"_id": "crawl_run"}, {"$inc": {"value": 1}}, upsert=True,
                                               return_document=ReturnDocument.AFTER)
        doc = {"id": int(r["value"]), "site": run.site, "job": run.job, "started_at": utc(run.started_at),
               "finished_at": utc(run.finished_at), "outcome": run.outcome, "counts": _keyed(run.counts),
               "skipped": _keyed(run.skipped), "failed": _keyed(run.failed)}
        self._crawl_runs.insert_one(dict(doc))
        return _crawl_run(doc)

    @_guarded
    def crawl_runs(self, *, site: str | None = None, limit: int | None = 50) -> list[CrawlRun]:
        check_window(limit)
        if limit == 0:
            return []
        cursor = self._crawl_runs.find(_query((("site", site),)), NO_ID).sort(
            [("started_at", DESCENDING), ("id", DESCENDING)])
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_crawl_run(d) for d in cursor]
