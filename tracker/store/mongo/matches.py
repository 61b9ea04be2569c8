"""MongoDB: matches of pages with chapters, their scores, evidence spans and review history."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pymongo import ASCENDING, DESCENDING

from ..records import MATCH_GROUPS, MATCH_SORTS, MATCH_STATUSES, MatchRecord, NotFound
from ..totals import totals_for
from ..values import check_groups, check_status, check_window, clean_scores, clean_spans, parse_sort, statuses, utc
from .connection import NO_ID, _guarded, _query, aware, storable
from .totals import TotalsMongo

INDEXES = {
    "matches": [
        ([("page", ASCENDING), ("chapter", ASCENDING)], True),
        ([("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("work", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("site", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("site", ASCENDING), ("status", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING),
          ("chapter", ASCENDING)], False),
        ([("status", ASCENDING), ("containment", DESCENDING), ("page", ASCENDING), ("chapter", ASCENDING)], False),
        ([("chapter", ASCENDING)], False),
        ([("first_seen", ASCENDING)], False),
        ([("last_seen", ASCENDING)], False),
        ([("similarity", ASCENDING)], False),
        ([("page_share", ASCENDING)], False),
    ],
}


def _match(d: dict[str, Any]) -> MatchRecord:
    return MatchRecord(page=d["page"], chapter=d["chapter"], work=d["work"], site=d["site"],
                       similarity=d["similarity"], containment=d["containment"], page_share=d["page_share"],
                       verdict=d["verdict"], scores=clean_scores(d.get("scores") or {}), spans=d.get("spans") or [],
                       status=d["status"], first_seen=aware(d["first_seen"]), last_seen=aware(d["last_seen"]),
                       history=aware(d.get("history") or []))


class MatchesMongo(TotalsMongo):
    """Matches in MongoDB."""

    # ---- matches -------------------------------------------------------------------

    @_guarded
    def upsert_match(self, match: MatchRecord) -> MatchRecord:
        """`last_seen` only moves forward (a late, older observation does not take it back)."""
        check_status(match.status, MATCH_STATUSES, "match status")
        key = {"page": match.page, "chapter": match.chapter}
        update = {
            "$set": {"work": match.work, "site": match.site, "similarity": float(match.similarity),
                     "containment": float(match.containment), "page_share": float(match.page_share),
                     "verdict": match.verdict, "scores": clean_scores(match.scores),
                     "spans": clean_spans(match.spans)},
            "$max": {"last_seen": utc(match.last_seen)},
            "$setOnInsert": {"first_seen": utc(match.first_seen), "status": match.status,
                             "history": storable(match.history)},
        }
        before = self._upsert(self._matches, key, update, "match", before=True)
        after = self._matches.find_one(key, NO_ID)
        self._count_change(before, after)
        return _match(after)

    @_guarded
    def get_match(self, page: str, chapter: str) -> MatchRecord:
        d = self._matches.find_one({"page": page, "chapter": chapter}, NO_ID)
        if d is None:
            raise NotFound(f"no match of page {page!r} with chapter {chapter!r}")
        return _match(d)

    @staticmethod
    def _match_query(work: str | None, page: str | None, site: str | None, status: Any,
                     chapter: str | None) -> dict[str, Any]:
        status = statuses(status, MATCH_STATUSES)
        return _query((("work", work), ("page", page), ("site", site), ("status", status), ("chapter", chapter)))

    @_guarded
    def matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                status: str | None = None, chapter: str | None = None, limit: int | None = None, offset: int = 0,
                sort: str = "-containment") -> list[MatchRecord]:
        query = self._match_query(work, page, site, status, chapter)
        check_window(limit, offset)
        field_name, descending = parse_sort(sort, MATCH_SORTS)
        if limit == 0:  # MongoDB reads limit 0 as "no limit"
            return []
        order = [(field_name, DESCENDING if descending else ASCENDING), ("page", ASCENDING), ("chapter", ASCENDING)]
        cursor = self._matches.find(query, NO_ID).sort(order).skip(offset)
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_match(d) for d in cursor]

    @_guarded
    def count_matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                      status: str | None = None, chapter: str | None = None) -> int:
        query = self._match_query(work, page, site, status, chapter)
        totals = None if page is not None or chapter is not None else totals_for(set(query))
        if totals is None:  # a page's or a chapter's matches are few: counted from their index
            return self._matches.count_documents(query)
        rows = list(self._totals(totals).aggregate([{"$match": query}, {"$group": {"_id": None, "n": {"$sum": "$n"}}}]))
        return int(rows[0]["n"]) if rows else 0

    def _grouped(self, by: Sequence[str], work: Any, site: str | None, status: Any,
                 distinct: bool) -> list[dict[str, Any]]:
        by = check_groups(by, MATCH_GROUPS)
        query = self._match_query(work, None, site, status, None)
        group_id = {f: ({"$dateToString": {"format": "%Y-%m-%d", "date": "$first_seen"}} if f == "day" else f"${f}")
                    for f in by}
        group: dict[str, Any] = {"_id": group_id, "matches": {"$sum": 1}, "first_seen": {"$min": "$first_seen"},
                                 "last_seen": {"$max": "$last_seen"}}
        if distinct:
            group.update(pages={"$addToSet": "$page"}, chapters={"$addToSet": "$chapter"})
        out = []
        for r in self._matches.aggregate([{"$match": query}, {"$group": group}]):
            row = {**{f: r["_id"][f] for f in by}, "matches": int(r["matches"])}
            if distinct:
                row.update(pages=len(r["pages"]), chapters=len(r["chapters"]))
            out.append({**row, "first_seen": aware(r["first_seen"]), "last_seen": aware(r["last_seen"])})
        out.sort(key=lambda r: (-r["matches"], *(r[f] for f in by)))
        return out

    @_guarded
    def match_summary(self, by: Sequence[str], *, work: str | None = None, site: str | None = None,
                      status: str | None = None) -> list[dict[str, Any]]:
        return self._grouped(by, work, site, status, distinct=True)

    @_guarded
    def match_totals(self, by: Sequence[str], *, work: str | None = None, site: str | None = None,
                     status: str | None = None) -> list[dict[str, Any]]:
        by = check_groups(by, MATCH_GROUPS)
        query = self._match_query(work, None, site, status, None)
        totals = totals_for({*by, *query})
        if totals is None:  # the day with a site or a chapter: no running total holds both
            return self._grouped(by, work, site, status, distinct=False)
        rows = self._totals(totals).aggregate([
            {"$match": query},
            {"$group": {"_id": {f: f"${f}" for f in by}, "matches": {"$sum": "$n"},
                        "first_seen": {"$min": "$first_seen"}, "last_seen": {"$max": "$last_seen"}}},
        ])
        out = [{**{f: r["_id"][f] for f in by}, "matches": int(r["matches"]), "first_seen": aware(r["first_seen"]),
                "last_seen": aware(r["last_seen"])} for r in rows]
        out.sort(key=lambda r: (-r["matches"], *(r[f] for f in by)))
        return out

    @_guarded
    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        """Setting the status it already has changes nothing (no second history entry).
        The entry's "at" is ISO-8601 text in UTC, so history stays plain JSON for every reader."""
        check_status(status, MATCH_STATUSES, "match status")
        d = self._set_status(self._matches, {"page": page, "chapter": chapter}, status, by, self._count_change)
        if d is None:
            raise NotFound(f"no match of page {page!r} with chapter {chapter!r}")
        return _match(d)
