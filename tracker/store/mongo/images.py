"""MongoDB: registered images of works, images found on crawled pages, and their matches.

Image bytes live in the documents (BSON binary): a registered or crawled image is
size-limited well under MongoDB's 16 MB per document (tracker.media.images.MAX_IMAGE_BYTES)."""
from __future__ import annotations

import hashlib
from typing import Any

from bson import Binary
from pymongo import ASCENDING, DESCENDING

from ..records import IMAGE_MATCH_SORTS, MATCH_STATUSES, PAGE_STATUSES, ImageMatch, NotFound, PageImage, WorkImage, now
from ..values import check_status, check_window, parse_sort, statuses, utc
from .connection import NO_ID, MongoBase, _guarded, _query, aware, storable

INDEXES = {
    "work_images": [
        ([("key", ASCENDING)], True),
        ([("work", ASCENDING), ("key", ASCENDING)], False),
    ],
    "page_images": [
        ([("key", ASCENDING)], True),
        ([("status", ASCENDING), ("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("site", ASCENDING), ("updated_at", ASCENDING), ("key", ASCENDING)], False),
        ([("found_on", ASCENDING), ("key", ASCENDING)], False),
        ([("reading.status", ASCENDING), ("updated_at", ASCENDING)], False),
    ],
    "image_matches": [
        ([("image", ASCENDING), ("work_image", ASCENDING)], True),
        ([("work", ASCENDING), ("distance", ASCENDING), ("image", ASCENDING), ("work_image", ASCENDING)], False),
        ([("site", ASCENDING), ("distance", ASCENDING), ("image", ASCENDING), ("work_image", ASCENDING)], False),
        ([("status", ASCENDING), ("distance", ASCENDING), ("image", ASCENDING), ("work_image", ASCENDING)], False),
    ],
}
NO_DATA = {"_id": False, "data": False}


def _work_image(d: dict[str, Any]) -> WorkImage:
    return WorkImage(key=d["key"], work=d["work"], name=d["name"], data=bytes(d.get("data") or b""),
                     fingerprint=dict(d.get("fingerprint") or {}), media_type=d.get("media_type", ""),
                     sha256=d["sha256"], created_at=aware(d["created_at"]))


def _page_image(d: dict[str, Any]) -> PageImage:
    return PageImage(key=d["key"], url=d["url"], site=d["site"], found_on=d["found_on"],
                     data=bytes(d.get("data") or b""), media_type=d.get("media_type", ""), sha256=d["sha256"],
                     fingerprint=dict(d.get("fingerprint") or {}), status=d["status"], reason=d["reason"],
                     attempts=int(d["attempts"]), fetched_at=aware(d["fetched_at"]), updated_at=aware(d["updated_at"]),
                     etag=d.get("etag") or "", last_modified=d.get("last_modified") or "",
                     position=int(d.get("position") or 0), reading=dict(d.get("reading") or {}))


def _image_match(d: dict[str, Any]) -> ImageMatch:
    return ImageMatch(image=d["image"], work_image=d["work_image"], work=d["work"], site=d["site"],
                      found_on=d["found_on"], distance=int(d["distance"]),
                      colour_agreement=float(d["colour_agreement"]), status=d["status"],
                      first_seen=aware(d["first_seen"]), last_seen=aware(d["last_seen"]),
                      history=aware(d.get("history") or []))


class ImagesMongo(MongoBase):
    """Images in MongoDB."""

    # ---- registered images -----------------------------------------------------------

    @_guarded
    def upsert_work_image(self, image: WorkImage) -> tuple[WorkImage, bool]:
        h = hashlib.sha256(image.data).hexdigest()
        fields = {"work": image.work, "name": image.name, "data": Binary(bytes(image.data)),
                  "fingerprint": storable(image.fingerprint), "media_type": image.media_type, "sha256": h}
        old = self._upsert(self._work_images, {"key": image.key},
                           {"$set": fields, "$setOnInsert": {"created_at": utc(image.created_at)}},
                           "registered image", before=True)
        return self.get_work_image(image.key), old is None or old.get("sha256") != h

    @_guarded
    def get_work_image(self, key: str) -> WorkImage:
        d = self._work_images.find_one({"key": key}, NO_ID)
        if d is None:
            raise NotFound(f"no registered image {key!r}")
        return _work_image(d)

    @_guarded
    def work_images(self, work: str | None = None, *, with_data: bool = False) -> list[WorkImage]:
        cursor = self._work_images.find(_query((("work", work),)), NO_ID if with_data else NO_DATA)
        return [_work_image(d) for d in cursor.sort([("key", ASCENDING)])]

    @_guarded
    def count_work_images(self, work: str | None = None) -> int:
        return self._work_images.count_documents(_query((("work", work),)))

    @_guarded
    def delete_work_image(self, key: str) -> None:
        if self._work_images.delete_one({"key": key}).deleted_count == 0:
            raise NotFound(f"no registered image {key!r}")

    # ---- images found on pages ---------------------------------------------------------

    @_guarded
    def upsert_page_image(self, image: PageImage) -> tuple[PageImage, bool]:
        h = hashlib.sha256(image.data).hexdigest()
        light = {"url": image.url, "site": image.site, "found_on": image.found_on,
                 "fetched_at": utc(image.fetched_at), "etag": image.etag, "last_modified": image.last_modified,
                 "position": image.position}
        full = {**light, "data": Binary(bytes(image.data)), "media_type": image.media_type, "sha256": h,
                "fingerprint": {}, "reading": {}, "status": "queued", "reason": "", "attempts": 0,
                "updated_at": utc(image.updated_at)}
        changed = self._upsert_changed(self._page_images, {"key": image.key}, "sha256", h, full, light, "page image")
        return self.get_page_image(image.key), changed

    @_guarded
    def get_page_image(self, key: str) -> PageImage:
        d = self._page_images.find_one({"key": key}, NO_ID)
        if d is None:
            raise NotFound(f"no page image {key!r}")
        return _page_image(d)

    @_guarded
    def page_images(self, *, status: str | None = None, site: str | None = None, found_on: str | None = None,
                    reading: str | None = None, limit: int | None = None) -> list[PageImage]:
        if status is not None:
            check_status(status, PAGE_STATUSES, "image status")
        check_window(limit)
        if limit == 0:  # MongoDB reads limit 0 as "no limit"
            return []
        cursor = self._page_images.find(_query((("status", status), ("site", site), ("found_on", found_on),
                                                    ("reading.status", reading))), NO_DATA).sort(
            [("updated_at", ASCENDING), ("key", ASCENDING)])
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_page_image(d) for d in cursor]

    @_guarded
    def set_page_image_status(self, key: str, status: str, reason: str = "", *,
                              fingerprint: dict[str, Any] | None = None) -> None:
        check_status(status, PAGE_STATUSES, "image status")
        changes: dict[str, Any] = {"status": status, "reason": reason, "updated_at": now()}
        if fingerprint is not None:
            changes["fingerprint"] = storable(fingerprint)
        if self._page_images.update_one({"key": key}, {"$set": changes, "$inc": {"attempts": 1}}).matched_count == 0:
            raise NotFound(f"no page image {key!r}")

    @_guarded
    def set_page_image_reading(self, key: str, reading: dict[str, Any]) -> None:
        if self._page_images.update_one({"key": key}, {"$set": {"reading": storable(reading)}}).matched_count == 0:
            raise NotFound(f"no page image {key!r}")

    # ---- matches ------------------------------------------------------------------------

    @_guarded
    def upsert_image_match(self, match: ImageMatch) -> ImageMatch:
        check_status(match.status, MATCH_STATUSES, "match status")
        update = {
            "$set": {"work": match.work, "site": match.site, "found_on": match.found_on,
                     "distance": int(match.distance), "colour_agreement": float(match.colour_agreement)},
            "$max": {"last_seen": utc(match.last_seen)},
            "$setOnInsert": {"first_seen": utc(match.first_seen), "status": match.status,
                             "history": storable(match.history)},
        }
        return _image_match(self._upsert(self._image_matches, {"image": match.image, "work_image": match.work_image},
                                         update, "image match"))

    @_guarded
    def get_image_match(self, image: str, work_image: str) -> ImageMatch:
        d = self._image_matches.find_one({"image": image, "work_image": work_image}, NO_ID)
        if d is None:
            raise NotFound(f"no match of image {image!r} with {work_image!r}")
        return _image_match(d)

    @staticmethod
    def _image_match_query(work, site, status, image) -> dict[str, Any]:
        return _query((("work", work), ("site", site), ("status", statuses(status, MATCH_STATUSES)),
                       ("image", image)))

    @_guarded
    def image_matches(self, *, work: str | None = None, site: str | None = None, status: Any = None,
                      image: str | None = None, limit: int | None = None, offset: int = 0,
                      sort: str = "distance") -> list[ImageMatch]:
        query = self._image_match_query(work, site, status, image)
        check_window(limit, offset)
        name, descending = parse_sort(sort, IMAGE_MATCH_SORTS)
        if limit == 0:
            return []
        order = [(name, DESCENDING if descending else ASCENDING), ("image", ASCENDING), ("work_image", ASCENDING)]
        cursor = self._image_matches.find(query, NO_ID).sort(order).skip(offset)
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_image_match(d) for d in cursor]

    @_guarded
    def count_image_matches(self, *, work: str | None = None, site: str | None = None, status: Any = None,
                            image: str | None = None) -> int:
        return self._image_matches.count_documents(self._image_match_query(work, site, status, image))

    @_guarded
    def set_image_match_status(self, image: str, work_image: str, status: str, by: str = "") -> ImageMatch:
        check_status(status, MATCH_STATUSES, "match status")
        d = self._set_status(self._image_matches, {"image": image, "work_image": work_image}, status, by)
        if d is None:
            raise NotFound(f"no match of image {image!r} with {work_image!r}")
        return _image_match(d)
