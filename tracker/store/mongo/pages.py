"""MongoDB: crawled and ingested pages, with their status and HTTP validators."""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from pymongo import ASCENDING, DESCENDING

from ..records import PAGE_GROUPS, PAGE_STATUSES, NotFound, Page, PageScope, content_hash, now
from ..values import check_groups, check_status, check_window, utc
from .connection import NO_ID, _guarded, _query, aware, storable
from .totals import TotalsMongo

INDEXES = {
    "pages": [
        ([("key", ASCENDING)], True),
        ([("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("status", ASCENDING), ("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("site", ASCENDING), ("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("fetched_at", DESCENDING), ("key", ASCENDING)], False),
        ([("site", ASCENDING), ("status", ASCENDING), ("fetched_at", DESCENDING)], False),
    ],
}


def _page(d: dict[str, Any]) -> Page:
    return Page(key=d["key"], text=d["text"], url=d["url"], site=d["site"], fetched_at=aware(d["fetched_at"]),
                content_hash=d["content_hash"], status=d["status"], reason=d["reason"], attempts=int(d["attempts"]),
                updated_at=aware(d["updated_at"]), meta=aware(d.get("meta") or {}), etag=d.get("etag") or "",
                last_modified=d.get("last_modified") or "")  # pages stored before validators were kept have none


class PagesMongo(TotalsMongo):
    """Pages in MongoDB."""

    # ---- pages -------------------------------------------------------------------

    @_guarded
    def upsert_page(self, page: Page) -> tuple[Page, bool]:
        """New or changed text: stored with status "queued", no reason, 0 attempts and the given
        `updated_at`. Same text: url, site, fetched_at and meta are updated; status, reason,
        attempts and updated_at are kept."""
        h = content_hash(page.text)
        light = {"url": page.url, "site": page.site, "fetched_at": utc(page.fetched_at), "meta": storable(page.meta),
                 "etag": page.etag, "last_modified": page.last_modified}
        full = {**light, "text": page.text, "content_hash": h, "status": "queued", "reason": "", "attempts": 0,
                "updated_at": utc(page.updated_at)}
        changed = self._upsert_changed(self._pages, {"key": page.key}, "content_hash", h, full, light, "page")
        d = self._pages.find_one({"key": page.key}, NO_ID)
        if d is None:
            raise self._lost("page", page.key)
        return _page(d), changed

    @_guarded
    def get_page(self, key: str) -> Page:
        d = self._pages.find_one({"key": key}, NO_ID)
        if d is None:
            raise NotFound(f"no page {key!r}")
        return _page(d)

    @_guarded
    def page_validators(self, key: str, made_by: str | None = None) -> tuple[str, str]:
        d = self._pages.find_one({"key": key}, {"_id": False, "etag": True, "last_modified": True,
                                                "meta.made_by": True})
        if not d or (made_by is not None and (d.get("meta") or {}).get("made_by") != made_by):
            return "", ""
        return d.get("etag") or "", d.get("last_modified") or ""

    def pages(self, *, status: str | None = None, site: str | None = None,
              limit: int | None = None) -> Iterator[Page]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "page status")
        check_window(limit)
        if limit == 0:
            return iter(())
        query = {k: v for k, v in (("status", status), ("site", site)) if v is not None}

        def cursor() -> Any:
            c = self._pages.find(query, NO_ID).sort([("updated_at", ASCENDING), ("key", ASCENDING)])
            return c if limit is None else c.limit(limit)
        return self._iter(cursor, _page)

    @_guarded
    def delete_page(self, key: str) -> bool:
        if self._matches.find_one({"page": key, "status": {"$ne": "new"}}, {"_id": 1}) is not None:
            return False
        gone = list(self._matches.find({"page": key}, NO_ID))
        self._matches.delete_many({"page": key})
        for m in gone:
            self._count_out(m)
        return self._pages.delete_one({"key": key}).deleted_count > 0

    @_guarded
    def set_page_status(self, key: str, status: str, reason: str = "") -> None:
        check_status(status, PAGE_STATUSES, "page status")
        r = self._pages.update_one({"key": key}, {"$set": {"status": status, "reason": reason, "updated_at": now()},
                                                  "$inc": {"attempts": 1}})
        if r.matched_count == 0:
            raise NotFound(f"no page {key!r}")

    def _page_query(self, status: str | None, site: str | None, url_contains: str | None,
                    seen_by: PageScope | None = None) -> dict[str, Any]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "page status")
        query = _query((("status", status), ("site", site)))
        if url_contains:
            query["url"] = {"$regex": re.escape(url_contains)}
        if seen_by is not None:
            query = {"$and": [query, self._seen(seen_by, site)]}
        return query

    def _seen(self, seen_by: PageScope, site: Any = None) -> dict[str, Any]:
        """find_pages' `seen_by`: a page of these sites, or one a match ties to these works (the
        keys of those pages, read from the matches of the sites asked for)."""
        sites, works = list(seen_by[0]), list(seen_by[1])
        either: list[dict[str, Any]] = [{"site": {"$in": sites}}] if sites else []
        if works:
            where = {"work": {"$in": works}, **_query((("site", site),))}
            either.append({"key": {"$in": self._matches.distinct("page", where)}})
        return {"$or": either} if either else {"key": {"$in": []}}

    @_guarded
    def find_pages(self, *, status: str | None = None, site: str | None = None, url_contains: str | None = None,
                   limit: int | None = 50, offset: int = 0, seen_by: PageScope | None = None) -> list[Page]:
        check_window(limit, offset)
        query = self._page_query(status, site, url_contains, seen_by)
        if limit == 0:
            return []
        cursor = self._pages.find(query, NO_ID).sort([("fetched_at", DESCENDING), ("key", ASCENDING)]).skip(offset)
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_page(d) for d in cursor]

    @_guarded
    def count_pages(self, *, status: str | None = None, site: str | None = None,
                    url_contains: str | None = None, seen_by: PageScope | None = None) -> int:
        return self._pages.count_documents(self._page_query(status, site, url_contains, seen_by))

    @_guarded
    def page_summary(self, by: Sequence[str], *, seen_by: PageScope | None = None) -> list[dict[str, Any]]:
        by = check_groups(by, PAGE_GROUPS)
        match = [] if seen_by is None else [{"$match": self._seen(seen_by)}]
        rows = self._pages.aggregate([*match, {"$group": {"_id": {f: f"${f}" for f in by}, "pages": {"$sum": 1},
                                                  "last": {"$max": "$fetched_at"}}}])
        out = [{**{f: r["_id"][f] for f in by}, "pages": int(r["pages"]), "last_fetched": aware(r["last"])}
               for r in rows]
        out.sort(key=lambda r: (-r["pages"], *(r[f] for f in by)))
        return out
