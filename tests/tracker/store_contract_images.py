"""The images part of the store contract (tracker.store.base.ImagesStore), for every backend:
registered images, images found on pages, and their matches."""
from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from tracker.store import MATCH_STATUSES, ImageMatch, NotFound, PageImage, WorkImage

from .store_contract import T0, at

PRINT = {"phash": "0f0f0f0f0f0f0f0f", "centre": "00ff00ff00ff00ff", "colours": "a" * 64, "width": 600,
         "height": 800, "grid": 8}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def work_image(key: str = "山城旧事/cover.png", data: bytes = PNG, **kw) -> WorkImage:
    kw.setdefault("work", key.split("/", 1)[0])
    kw.setdefault("name", key.split("/", 1)[1])
    kw.setdefault("fingerprint", dict(PRINT))
    kw.setdefault("media_type", "image/png")
    return WorkImage(key=key, data=data, **kw)


def page_image(key: str = "https://img.example.com/c/1.png", data: bytes = PNG, **kw) -> PageImage:
    kw.setdefault("url", key)
    kw.setdefault("site", "example.com")
    kw.setdefault("found_on", "https://example.com/book/1/")
    kw.setdefault("media_type", "image/png")
    kw.setdefault("fetched_at", T0)
    return PageImage(key=key, data=data, **kw)


def image_match(image: str = "https://img.example.com/c/1.png", work_image_key: str = "山城旧事/cover.png",
                **kw) -> ImageMatch:
    values = dict(work=work_image_key.split("/", 1)[0], site="example.com", found_on="https://example.com/book/1/",
                  distance=4, colour_agreement=0.9)
    values.update(kw)
    return ImageMatch(image=image, work_image=work_image_key, **values)


class ImagesContract:
    # ---- registered images -------------------------------------------------------------

    def test_a_registered_image_comes_back_byte_for_byte(self, store):
        stored, changed = store.upsert_work_image(work_image(created_at=T0))
        assert changed and stored.data == PNG and stored.sha256 == hashlib.sha256(PNG).hexdigest()
        got = store.get_work_image("山城旧事/cover.png")
        assert got == stored and got.fingerprint == PRINT and got.created_at == T0

    def test_registering_the_same_bytes_again_changes_nothing_new_bytes_do(self, store):
        store.upsert_work_image(work_image(created_at=T0))
        _, changed = store.upsert_work_image(work_image(created_at=at(5)))
        assert not changed
        again, changed = store.upsert_work_image(work_image(data=PNG + b"x", created_at=at(9)))
        assert changed and again.data == PNG + b"x" and again.created_at == T0

    def test_listings_leave_the_bytes_out_unless_asked(self, store):
        store.upsert_work_image(work_image("W/b.png"))
        store.upsert_work_image(work_image("W/a.png"))
        store.upsert_work_image(work_image("V/a.png"))
        assert [i.key for i in store.work_images()] == ["V/a.png", "W/a.png", "W/b.png"]
        assert [i.key for i in store.work_images("W")] == ["W/a.png", "W/b.png"]
        assert all(i.data == b"" and i.fingerprint == PRINT for i in store.work_images())
        assert all(i.data == PNG for i in store.work_images(with_data=True))
        assert store.count_work_images() == 3 and store.count_work_images("W") == 2

    def test_deleting_a_registered_image(self, store):
        store.upsert_work_image(work_image())
        store.delete_work_image("山城旧事/cover.png")
        with pytest.raises(NotFound):
            store.get_work_image("山城旧事/cover.png")
        with pytest.raises(NotFound):
            store.delete_work_image("山城旧事/cover.png")

    # ---- images found on pages ---------------------------------------------------------

    def test_a_found_image_is_queued_until_processed(self, store):
        img, changed = store.upsert_page_image(page_image(etag='"v1"'))
        assert changed and img.status == "queued" and img.fingerprint == {} and img.attempts == 0
        store.set_page_image_status(img.key, "done", fingerprint=PRINT)
        got = store.get_page_image(img.key)
        assert got.status == "done" and got.fingerprint == PRINT and got.attempts == 1 and got.data == PNG
        assert store.page_image_validators(img.key) == ('"v1"', "")
        assert store.page_image_validators("https://nowhere/x.png") == ("", "")

    def test_the_same_bytes_keep_their_status_new_bytes_are_queued_again(self, store):
        store.upsert_page_image(page_image())
        store.set_page_image_status("https://img.example.com/c/1.png", "done", fingerprint=PRINT)
        same, changed = store.upsert_page_image(page_image(found_on="https://example.com/book/2/", etag='"v2"'))
        assert not changed and same.status == "done" and same.fingerprint == PRINT
        assert same.found_on == "https://example.com/book/2/" and same.etag == '"v2"'
        new, changed = store.upsert_page_image(page_image(data=PNG + b"!"))
        assert changed and new.status == "queued" and new.fingerprint == {} and new.attempts == 0

    def test_a_reading_and_position_are_kept_for_the_same_bytes_cleared_for_new_ones(self, store):
        store.upsert_page_image(page_image(position=2))
        reading = {"status": "read", "engine": "rapidocr", "text": "第一行\n第二行",
                   "lines": [{"text": "第一行", "box": [10, 20, 300, 60], "confidence": 0.98}]}
        store.set_page_image_reading("https://img.example.com/c/1.png", reading)
        got = store.get_page_image("https://img.example.com/c/1.png")
        assert got.reading == reading and got.position == 2 and got.status == "queued"
        store.upsert_page_image(page_image(position=3))  # the same bytes: the reading stays, the place moves
        got = store.get_page_image("https://img.example.com/c/1.png")
        assert got.reading == reading and got.position == 3
        store.upsert_page_image(page_image(data=PNG + b"x", position=3))  # new bytes are read again
        assert store.get_page_image("https://img.example.com/c/1.png").reading == {}
        with pytest.raises(NotFound):
            store.set_page_image_reading("https://img.example.com/none.png", reading)

    def test_found_images_of_one_page(self, store):
        store.upsert_page_image(page_image("https://img.example.com/a.png", found_on="https://example.com/c/1"))
        store.upsert_page_image(page_image("https://img.example.com/b.png", data=PNG + b"b",
                                           found_on="https://example.com/c/2"))
        assert [i.key for i in store.page_images(found_on="https://example.com/c/1")] == [
            "https://img.example.com/a.png"]
        assert store.page_images(found_on="https://example.com/c/3") == []
        store.set_page_image_reading("https://img.example.com/b.png", {"status": "to read", "rows": 12})
        assert [i.key for i in store.page_images(reading="to read")] == ["https://img.example.com/b.png"]
        assert store.page_images(reading="read") == []

    def test_found_images_by_status_and_site_without_bytes(self, store):
        for i, site in enumerate(["a.com", "b.org", "a.com"]):
            store.upsert_page_image(page_image(f"https://{site}/{i}.png", site=site, updated_at=at(i)))
        store.set_page_image_status("https://a.com/0.png", "failed", "not an image")
        queued = store.page_images(status="queued")
        assert [i.key for i in queued] == ["https://b.org/1.png", "https://a.com/2.png"]
        assert all(i.data == b"" for i in queued)
        assert [i.key for i in store.page_images(site="a.com", limit=1)] == ["https://a.com/2.png"]
        assert store.get_page_image("https://a.com/0.png").reason == "not an image"
        with pytest.raises(ValueError):
            store.page_images(status="lost")
        with pytest.raises(NotFound):
            store.set_page_image_status("https://nowhere/x.png", "done")

    # ---- matches ------------------------------------------------------------------------

    def test_an_image_match_is_idempotent_and_keeps_its_review(self, store):
        first = store.upsert_image_match(image_match(first_seen=T0, last_seen=T0))
        assert first.status == "new" and first.first_seen == T0
        store.set_image_match_status(first.image, first.work_image, "confirmed", by="ann")
        store.set_image_match_status(first.image, first.work_image, "confirmed", by="ann")
        again = store.upsert_image_match(image_match(distance=2, first_seen=at(60), last_seen=at(60)))
        assert again.status == "confirmed" and again.distance == 2
        assert again.first_seen == T0 and again.last_seen == at(60)
        assert [h["status"] for h in again.history] == ["confirmed"] and again.history[0]["by"] == "ann"
        older = store.upsert_image_match(image_match(first_seen=at(-60), last_seen=at(-60)))
        assert older.last_seen == at(60)  # a late, older observation does not take last_seen back
        assert store.count_image_matches() == 1

    def test_image_matches_filter_and_sort(self, store):
        rows = [("https://a.com/1.png", "W/cover.png", "a.com", 6), ("https://a.com/2.png", "W/map.png", "a.com", 1),
                ("https://b.org/1.png", "V/cover.png", "b.org", 3)]
        for img, wi, site, d in rows:
            store.upsert_image_match(image_match(img, wi, site=site, distance=d, first_seen=T0 + timedelta(hours=d)))
        store.set_image_match_status("https://a.com/1.png", "W/cover.png", "dismissed")
        assert [m.distance for m in store.image_matches()] == [1, 3, 6]
        assert [m.distance for m in store.image_matches(sort="-first_seen")] == [6, 3, 1]
        assert [m.image for m in store.image_matches(work="W")] == ["https://a.com/2.png", "https://a.com/1.png"]
        assert [m.image for m in store.image_matches(site="b.org")] == ["https://b.org/1.png"]
        active = [s for s in MATCH_STATUSES if s != "dismissed"]
        assert store.count_image_matches(status=active) == 2 and store.count_image_matches(status="dismissed") == 1
        assert [m.distance for m in store.image_matches(limit=1, offset=1)] == [3]
        assert store.image_matches(image="https://b.org/1.png")[0].work_image == "V/cover.png"
        with pytest.raises(ValueError):
            store.image_matches(sort="colour")
        with pytest.raises(ValueError):
            store.set_image_match_status("https://b.org/1.png", "V/cover.png", "gone")
        with pytest.raises(NotFound):
            store.get_image_match("https://b.org/1.png", "W/cover.png")

    def test_counts_include_images(self, store):
        store.upsert_work_image(work_image())
        store.upsert_page_image(page_image("https://x.com/1.png"))
        store.upsert_page_image(page_image("https://x.com/2.png"))
        store.set_page_image_status("https://x.com/1.png", "done")
        store.upsert_image_match(image_match("https://x.com/1.png"))
        images = store.counts()["images"]
        assert images["registered"] == 1 and images["found"] == {"queued": 1, "done": 1, "failed": 0}
        assert images["matches"]["new"] == 1
