"""SQLite: registered images of works, images found on crawled pages, and their matches."""
from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

from ..records import IMAGE_MATCH_SORTS, MATCH_STATUSES, PAGE_STATUSES, ImageMatch, NotFound, PageImage, WorkImage, now
from ..values import check_status, check_window, parse_sort, statuses, to_text
from .connection import SQLiteBase, _guarded, _where, dumps, from_text, loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS work_images (
    key TEXT PRIMARY KEY,
    work TEXT NOT NULL,
    name TEXT NOT NULL,
    data BLOB NOT NULL,
    fingerprint TEXT NOT NULL,
    media_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS work_images_work ON work_images (work, key);
CREATE TABLE IF NOT EXISTS page_images (
    key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    site TEXT NOT NULL,
    found_on TEXT NOT NULL,
    data BLOB NOT NULL,
    media_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    fetched_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    etag TEXT NOT NULL,
    last_modified TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS page_images_status ON page_images (status, updated_at, key);
CREATE INDEX IF NOT EXISTS page_images_site ON page_images (site, updated_at, key);
CREATE INDEX IF NOT EXISTS page_images_found_on ON page_images (found_on, key);
CREATE TABLE IF NOT EXISTS image_matches (
    image TEXT NOT NULL,
    work_image TEXT NOT NULL,
    work TEXT NOT NULL,
    site TEXT NOT NULL,
    found_on TEXT NOT NULL,
    distance INTEGER NOT NULL,
    colour_agreement REAL NOT NULL,
    status TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    history TEXT NOT NULL,
    PRIMARY KEY (image, work_image)
);
CREATE INDEX IF NOT EXISTS image_matches_work ON image_matches (work, distance, image, work_image);
CREATE INDEX IF NOT EXISTS image_matches_site ON image_matches (site, distance, image, work_image);
CREATE INDEX IF NOT EXISTS image_matches_status ON image_matches (status, distance, image, work_image);
"""
# Columns added since the table's first release (tracker.store.sqlite.connection adds them to an older store).
ADDED_COLUMNS = {"page_images": (("position", "INTEGER NOT NULL DEFAULT 0"), ("reading", "TEXT NOT NULL DEFAULT '{}'"))}
_HEADER = "key, work, name, X'' AS data, fingerprint, media_type, sha256, created_at"
_PAGE_HEADER = ("key, url, site, found_on, X'' AS data, media_type, sha256, fingerprint, status, reason, attempts, "
                "fetched_at, updated_at, etag, last_modified, position, reading")


def _work_image(r: sqlite3.Row) -> WorkImage:
    return WorkImage(key=r["key"], work=r["work"], name=r["name"], data=bytes(r["data"]),
                     fingerprint=loads(r["fingerprint"]), media_type=r["media_type"], sha256=r["sha256"],
                     created_at=from_text(r["created_at"]))


def _page_image(r: sqlite3.Row) -> PageImage:
    return PageImage(key=r["key"], url=r["url"], site=r["site"], found_on=r["found_on"], data=bytes(r["data"]),
                     media_type=r["media_type"], sha256=r["sha256"], fingerprint=loads(r["fingerprint"]),
                     status=r["status"], reason=r["reason"], attempts=r["attempts"],
                     fetched_at=from_text(r["fetched_at"]), updated_at=from_text(r["updated_at"]), etag=r["etag"],
                     last_modified=r["last_modified"], position=r["position"], reading=loads(r["reading"]))


def _image_match(r: sqlite3.Row) -> ImageMatch:
    return ImageMatch(image=r["image"], work_image=r["work_image"], work=r["work"], site=r["site"],
                      found_on=r["found_on"], distance=r["distance"], colour_agreement=r["colour_agreement"],
                      status=r["status"], first_seen=from_text(r["first_seen"]), last_seen=from_text(r["last_seen"]),
                      history=loads(r["history"]))


class ImagesSQL(SQLiteBase):
    """Images in SQLite."""

    # ---- registered images -----------------------------------------------------------

    @_guarded
    def upsert_work_image(self, image: WorkImage) -> tuple[WorkImage, bool]:
        h = hashlib.sha256(image.data).hexdigest()
        with self._write() as c:
            old = c.execute("SELECT sha256 FROM work_images WHERE key = ?", (image.key,)).fetchone()
            changed = old is None or old["sha256"] != h
            c.execute("INSERT INTO work_images (key, work, name, data, fingerprint, media_type, sha256, created_at) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET work = excluded.work, "
                      "name = excluded.name, data = excluded.data, fingerprint = excluded.fingerprint, "
                      "media_type = excluded.media_type, sha256 = excluded.sha256",
                      (image.key, image.work, image.name, bytes(image.data), dumps(image.fingerprint),
                       image.media_type, h, to_text(image.created_at)))
            row = c.execute("SELECT * FROM work_images WHERE key = ?", (image.key,)).fetchone()
        return _work_image(row), changed

    @_guarded
    def get_work_image(self, key: str) -> WorkImage:
        return _work_image(self._one("SELECT * FROM work_images WHERE key = ?", (key,), f"no registered image {key!r}"))

    @_guarded
    def work_images(self, work: str | None = None, *, with_data: bool = False) -> list[WorkImage]:
        cond, args = _where((("work", work),))
        columns = "*" if with_data else _HEADER
        return [_work_image(r) for r in self._read(f"SELECT {columns} FROM work_images {cond} ORDER BY key", args)]

    @_guarded
    def count_work_images(self, work: str | None = None) -> int:
        cond, args = _where((("work", work),))
        return self._read(f"SELECT COUNT(*) FROM work_images {cond}", args)[0][0]

    @_guarded
    def delete_work_image(self, key: str) -> None:
        with self._write() as c:
            if c.execute("DELETE FROM work_images WHERE key = ?", (key,)).rowcount == 0:
                raise NotFound(f"no registered image {key!r}")

    # ---- images found on pages ---------------------------------------------------------

    @_guarded
    def upsert_page_image(self, image: PageImage) -> tuple[PageImage, bool]:
        h = hashlib.sha256(image.data).hexdigest()
        with self._write() as c:
            old = c.execute("SELECT sha256 FROM page_images WHERE key = ?", (image.key,)).fetchone()
            changed = old is None or old["sha256"] != h
            if changed:
                c.execute("INSERT INTO page_images (key, url, site, found_on, data, media_type, sha256, fingerprint, "
                          "status, reason, attempts, fetched_at, updated_at, etag, last_modified, position, reading) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, '{}', 'queued', '', 0, ?, ?, ?, ?, ?, '{}') "
                          "ON CONFLICT (key) DO UPDATE SET url = excluded.url, site = excluded.site, "
                          "found_on = excluded.found_on, data = excluded.data, media_type = excluded.media_type, "
                          "sha256 = excluded.sha256, fingerprint = '{}', status = 'queued', reason = '', "
                          "attempts = 0, fetched_at = excluded.fetched_at, updated_at = excluded.updated_at, "
                          "etag = excluded.etag, last_modified = excluded.last_modified, "
                          "position = excluded.position, reading = '{}'",
                          (image.key, image.url, image.site, image.found_on, bytes(image.data), image.media_type, h,
                           to_text(image.fetched_at), to_text(image.updated_at), image.etag, image.last_modified,
                           image.position))
            else:
                c.execute("UPDATE page_images SET url = ?, site = ?, found_on = ?, fetched_at = ?, etag = ?, "
                          "last_modified = ?, position = ? WHERE key = ?",
                          (image.url, image.site, image.found_on, to_text(image.fetched_at), image.etag,
                           image.last_modified, image.position, image.key))
            row = c.execute("SELECT * FROM page_images WHERE key = ?", (image.key,)).fetchone()
        return _page_image(row), changed

    @_guarded
    def get_page_image(self, key: str) -> PageImage:
        return _page_image(self._one("SELECT * FROM page_images WHERE key = ?", (key,), f"no page image {key!r}"))

    @_guarded
    def page_images(self, *, status: str | None = None, site: str | None = None, found_on: str | None = None,
                    reading: str | None = None, limit: int | None = None) -> list[PageImage]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "image status")
        check_window(limit)
        cond, args = _where((("status", status), ("site", site), ("found_on", found_on),
                             ("json_extract(reading, '$.status')", reading)))
        rows = self._read(f"SELECT {_PAGE_HEADER} FROM page_images {cond} ORDER BY updated_at, key LIMIT ?",
                          [*args, -1 if limit is None else limit])
        return [_page_image(r) for r in rows]

    @_guarded
    def set_page_image_status(self, key: str, status: str, reason: str = "", *,
                              fingerprint: dict[str, Any] | None = None) -> None:
        check_status(status, PAGE_STATUSES, "image status")
        with self._write() as c:
            cur = c.execute("UPDATE page_images SET status = ?, reason = ?, attempts = attempts + 1, updated_at = ?, "
                            "fingerprint = COALESCE(?, fingerprint) WHERE key = ?",
                            (status, reason, to_text(now()), None if fingerprint is None else dumps(fingerprint),
                             key))
            if cur.rowcount == 0:
                raise NotFound(f"no page image {key!r}")

    @_guarded
    def set_page_image_reading(self, key: str, reading: dict[str, Any]) -> None:
        with self._write() as c:
            if c.execute("UPDATE page_images SET reading = ? WHERE key = ?", (dumps(reading), key)).rowcount == 0:
                raise NotFound(f"no page image {key!r}")

    # ---- matches ------------------------------------------------------------------------

    @_guarded
    def upsert_image_match(self, match: ImageMatch) -> ImageMatch:
        check_status(match.status, MATCH_STATUSES, "match status")
        with self._write() as c:
            c.execute("INSERT INTO image_matches (image, work_image, work, site, found_on, distance, colour_agreement, "
                      "status, first_seen, last_seen, history) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                      "ON CONFLICT (image, work_image) DO UPDATE SET work = excluded.work, site = excluded.site, "
                      "found_on = excluded.found_on, distance = excluded.distance, "
                      "colour_agreement = excluded.colour_agreement, last_seen = MAX(last_seen, excluded.last_seen)",
                      (match.image, match.work_image, match.work, match.site, match.found_on, int(match.distance),
                       float(match.colour_agreement), match.status, to_text(match.first_seen),
                       to_text(match.last_seen), dumps(match.history)))
            row = c.execute("SELECT * FROM image_matches WHERE image = ? AND work_image = ?",
                            (match.image, match.work_image)).fetchone()
        return _image_match(row)

    @_guarded
    def get_image_match(self, image: str, work_image: str) -> ImageMatch:
        return _image_match(self._one("SELECT * FROM image_matches WHERE image = ? AND work_image = ?",
                                      (image, work_image), f"no match of image {image!r} with {work_image!r}"))

    @staticmethod
    def _image_match_filter(work, site, status, image) -> tuple[str, list[Any]]:
        return _where((("work", work), ("site", site), ("status", statuses(status, MATCH_STATUSES)),
                       ("image", image)))

    @_guarded
    def image_matches(self, *, work: str | None = None, site: str | None = None, status: Any = None,
                      image: str | None = None, limit: int | None = None, offset: int = 0,
                      sort: str = "distance") -> list[ImageMatch]:
        check_window(limit, offset)
        name, descending = parse_sort(sort, IMAGE_MATCH_SORTS)
        cond, args = self._image_match_filter(work, site, status, image)
        rows = self._read(f"SELECT * FROM image_matches {cond} ORDER BY {name} {'DESC' if descending else 'ASC'}, "
                          "image, work_image LIMIT ? OFFSET ?", [*args, -1 if limit is None else limit, offset])
        return [_image_match(r) for r in rows]

    @_guarded
    def count_image_matches(self, *, work: str | None = None, site: str | None = None, status: Any = None,
                            image: str | None = None) -> int:
        cond, args = self._image_match_filter(work, site, status, image)
        return self._read(f"SELECT COUNT(*) FROM image_matches {cond}", args)[0][0]

    @_guarded
    def set_image_match_status(self, image: str, work_image: str, status: str, by: str = "") -> ImageMatch:
        check_status(status, MATCH_STATUSES, "match status")
        row = self._set_status("image_matches", {"image": image, "work_image": work_image}, status, by)
        if row is None:
            raise NotFound(f"no match of image {image!r} with {work_image!r}")
        return _image_match(row)
