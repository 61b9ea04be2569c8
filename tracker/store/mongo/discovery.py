"""MongoDB: discovery runs, their queries, and the URLs searches returned."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pymongo import ASCENDING, DESCENDING, ReturnDocument
from pymongo.errors import DuplicateKeyError

from ..discovery import DiscoveredUrl, DiscoveryQuery, DiscoveryRun, check_query, check_run
from ..records import NotFound
from ..values import check_window, clean_counts, utc
from .connection import NO_ID, MongoBase, _guarded, _query, aware

INDEXES = {
    "discovery_runs": [([("id", ASCENDING)], True), ([("started_at", DESCENDING), ("id", DESCENDING)], False)],
    "discovery_queries": [([("run", ASCENDING), ("n", ASCENDING)], True)],
    "discovered_urls": [([("url", ASCENDING)], True)],
}
BATCH = 500  # URLs per $in query


def _run(d: dict[str, Any]) -> DiscoveryRun:
    # Counts are kept as a list of pairs: their names are free text, and MongoDB field names cannot hold "." or "$".
    return DiscoveryRun(id=int(d["id"]), started_at=aware(d["started_at"]), finished_at=aware(d["finished_at"]),
                        provider=d["provider"], outcome=d["outcome"], work=d["work"],
                        counts={p["k"]: int(p["n"]) for p in d.get("counts") or []},
                        sites_added=list(d.get("sites_added") or []))


def _query_record(d: dict[str, Any]) -> DiscoveryQuery:
    return DiscoveryQuery(run=int(d["run"]), n=int(d["n"]), work=d["work"], kind=d["kind"], text=d["text"],
                          returned=int(d["returned"]), new=int(d["new"]), stored=int(d["stored"]),
                          matches=int(d["matches"]), sites=list(d.get("sites") or []), error=d.get("error", ""))


def _changing(run: DiscoveryRun) -> dict[str, Any]:
    return {"finished_at": utc(run.finished_at), "outcome": run.outcome,
            "counts": [{"k": k, "n": n} for k, n in clean_counts(run.counts).items()],
            "sites_added": list(run.sites_added)}


class DiscoveryMongo(MongoBase):
    """Discovery records in MongoDB."""

    @_guarded
    def add_discovery_run(self, run: DiscoveryRun) -> DiscoveryRun:
        check_run(run)
        r = self._counters.find_one_and_update({"_id": "discovery_run"}, {"$inc": {"value": 1}}, upsert=True,
                                               return_document=ReturnDocument.AFTER)
        doc = {"id": int(r["value"]), "started_at": utc(run.started_at), "provider": run.provider, "work": run.work,
               **_changing(run)}
        self._discovery_runs.insert_one(dict(doc))
        return _run(doc)

    @_guarded
    def update_discovery_run(self, run: DiscoveryRun) -> DiscoveryRun:
        check_run(run)
        d = self._discovery_runs.find_one_and_update({"id": run.id}, {"$set": _changing(run)}, projection=NO_ID,
                                                     return_document=ReturnDocument.AFTER)
        if d is None:
            raise NotFound(f"no discovery run {run.id}")
        return _run(d)

    @_guarded
    def get_discovery_run(self, run_id: int) -> DiscoveryRun:
        d = self._discovery_runs.find_one({"id": run_id}, NO_ID)
        if d is None:
            raise NotFound(f"no discovery run {run_id}")
        return _run(d)

    @_guarded
    def discovery_runs(self, *, work: str | None = None, limit: int | None = 50) -> list[DiscoveryRun]:
        check_window(limit)
        if limit == 0:
            return []
        cursor = self._discovery_runs.find(_query((("work", work),)), NO_ID).sort(
            [("started_at", DESCENDING), ("id", DESCENDING)])
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_run(d) for d in cursor]

    @_guarded
    def put_discovery_query(self, query: DiscoveryQuery) -> DiscoveryQuery:
        check_query(query)
        values = {"work": query.work, "kind": query.kind, "text": query.text, "returned": int(query.returned),
                  "new": int(query.new), "stored": int(query.stored), "matches": int(query.matches),
                  "sites": list(query.sites), "error": query.error}
        return _query_record(self._upsert(self._discovery_queries, {"run": query.run, "n": query.n},
                                          {"$set": values}, "discovery query"))

    @_guarded
    def discovery_queries(self, run_id: int) -> list[DiscoveryQuery]:
        return [_query_record(d) for d in self._discovery_queries.find({"run": run_id}, NO_ID).sort("n", ASCENDING)]

    @_guarded
    def add_discovered_urls(self, urls: Sequence[DiscoveredUrl]) -> list[str]:
        new = []
        for u in urls:
            try:
                r = self._discovered_urls.update_one(
                    {"url": u.url}, {"$setOnInsert": {"site": u.site, "work": u.work, "run": u.run, "query": u.query,
                                                      "first_seen": utc(u.first_seen)}}, upsert=True)
            except DuplicateKeyError:  # another run inserted it at the same moment: seen
                continue
            if r.upserted_id is not None:
                new.append(u.url)
        return new

    @_guarded
    def seen_urls(self, urls: Sequence[str]) -> set[str]:
        urls = list(dict.fromkeys(urls))
        found: set[str] = set()
        for i in range(0, len(urls), BATCH):
            found.update(d["url"] for d in self._discovered_urls.find({"url": {"$in": urls[i:i + BATCH]}},
                                                                      {"_id": False, "url": True}))
        return found
