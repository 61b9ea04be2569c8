"""The store interface for what is tracked: works with their chapters and fingerprints
(`OriginalsStore`), crawled and ingested pages (`PagesStore`), the matches of pages with
chapters (`MatchesStore`), and registered and found images with their matches (`ImagesStore`).
Part of `tracker.store.base.Store`."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from .records import (
    Chapter,
    FingerprintRecord,
    ImageMatch,
    MatchRecord,
    NotFound,
    Page,
    PageImage,
    PageScope,
    Work,
    WorkImage,
)


class OriginalsStore(ABC):
    """Works, their chapters, and the chapters' fingerprints."""

    # works
    @abstractmethod
    def upsert_work(self, work: Work) -> Work:
        """Insert or update (title, author) a work; keeps created_at."""

    @abstractmethod
    def get_work(self, work_id: str) -> Work:
        """Raises NotFound."""

    @abstractmethod
    def works(self) -> list[Work]:
        """All works, by id."""

    # chapters
    @abstractmethod
    def upsert_chapter(self, chapter: Chapter) -> tuple[Chapter, bool]:
        """Insert or update a chapter; returns it (with its `doc` number and
        content_hash set) and whether its text is new or changed."""

    @abstractmethod
    def get_chapter(self, key: str) -> Chapter:
        """Raises NotFound."""

    @abstractmethod
    def chapter_by_doc(self, doc: int) -> Chapter:
        """Raises NotFound."""

    @abstractmethod
    def chapters(self, work: str | None = None) -> Iterator[Chapter]:
        """Chapters (of one work), by work then number then key."""

    @abstractmethod
    def chapter_headers(self, work: str | None = None) -> list[Chapter]:
        """Chapters (of one work) without their texts (text is ""), in the order of `chapters`."""

    @abstractmethod
    def count_chapters(self, work: str | None = None) -> int:
        """How many chapters (of one work) are registered."""

    @abstractmethod
    def catalog_stamp(self) -> tuple[int, str]:
        """(the number of chapters, the latest updated_at as ISO text, "" for none): it changes
        whenever a chapter is added, changed or removed, so a process holding a copy of the
        index in memory knows when to load it again."""

    @abstractmethod
    def delete_chapter(self, key: str) -> None:
        """Remove a chapter and its fingerprints (its matches stay, for the record)."""

    @abstractmethod
    def delete_work(self, work_id: str) -> list[int]:
        """Remove a work with its chapters, their fingerprints and matches, and its registered
        images with their matches; returns the removed chapters' doc numbers (to take them out
        of the index). Raises NotFound when there is no such work."""

    # fingerprints
    @abstractmethod
    def put_fingerprint(self, record: FingerprintRecord) -> None:
        """Insert or replace the fingerprint of (chapter, params_hash)."""

    @abstractmethod
    def fingerprints(self, params_hash: str) -> Iterator[FingerprintRecord]:
        """All fingerprints made with these parameters."""


class PagesStore(ABC):
    """Crawled and ingested pages."""

    # pages
    @abstractmethod
    def upsert_page(self, page: Page) -> tuple[Page, bool]:
        """Insert or update a page; returns it and whether its text is new or changed.
        A changed page goes back to status "queued"; an unchanged one keeps its status.
        The validators (etag, last_modified) are replaced either way."""

    @abstractmethod
    def get_page(self, key: str) -> Page:
        """Raises NotFound."""

    @abstractmethod
    def pages(self, *, status: str | None = None, site: str | None = None, limit: int | None = None) -> Iterator[Page]:
        """Pages, oldest update first."""

    def page_validators(self, key: str, made_by: str | None = None) -> tuple[str, str]:
        """(etag, last_modified) of a stored page; ("", "") when it has none, is not stored, or, with
        `made_by`, its meta["made_by"] differs (its text was made another way: it must be fetched again)."""
        try:
            page = self.get_page(key)
        except NotFound:
            return "", ""
        if made_by is not None and page.meta.get("made_by") != made_by:
            return "", ""
        return page.etag, page.last_modified

    @abstractmethod
    def delete_page(self, key: str) -> bool:
        """Remove a page that another stands for (a lone part of a chapter later stored joined),
        with its matches, unless someone reviewed one of them (any status but "new"): then the
        page and its matches stay, for the record. True when it was removed."""

    @abstractmethod
    def set_page_status(self, key: str, status: str, reason: str = "") -> None:
        """Record the outcome of processing (counts an attempt). Raises NotFound, ValueError for a bad status."""

    @abstractmethod
    def find_pages(self, *, status: str | None = None, site: str | None = None, url_contains: str | None = None,
                   limit: int | None = 50, offset: int = 0, seen_by: PageScope | None = None) -> list[Page]:
        """Pages for listing and search, most recently fetched first (then by key). With `seen_by`
        (sites, works): only the pages of those sites and the pages a match ties to those works."""

    @abstractmethod
    def count_pages(self, *, status: str | None = None, site: str | None = None,
                    url_contains: str | None = None, seen_by: PageScope | None = None) -> int:
        """How many pages find_pages would list without a limit."""

    @abstractmethod
    def page_summary(self, by: Sequence[str], *, seen_by: PageScope | None = None) -> list[dict[str, Any]]:
        """Pages grouped by some of PAGE_GROUPS: one dict per group with those fields and
        "pages", "last_fetched"; most pages first, then by the group fields. `seen_by` as in
        find_pages."""


class MatchesStore(ABC):
    """Matches of pages with chapters, and their review."""

    # matches
    @abstractmethod
    def upsert_match(self, match: MatchRecord) -> MatchRecord:
        """Insert, or update the scores, spans and last_seen of, the match (page, chapter);
        keeps first_seen, status and history."""

    @abstractmethod
    def get_match(self, page: str, chapter: str) -> MatchRecord:
        """Raises NotFound."""

    # In the match queries below, `status` is one status or a sequence of them (any of).

    @abstractmethod
    def matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                status: str | Sequence[str] | None = None, chapter: str | None = None, limit: int | None = None,
                offset: int = 0, sort: str = "-containment") -> list[MatchRecord]:
        """Matches, ordered by `sort` (one of MATCH_SORTS, "-" for descending), then by page and chapter."""

    @abstractmethod
    def count_matches(self, *, work: str | None = None, page: str | None = None, site: str | None = None,
                      status: str | Sequence[str] | None = None, chapter: str | None = None) -> int:
        """How many matches `matches` would return without a limit."""

    @abstractmethod
    def match_summary(self, by: Sequence[str], *, work: str | None = None, site: str | None = None,
                      status: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Matches grouped by some of MATCH_GROUPS: one dict per group with those fields and
        "matches", "pages" (distinct), "chapters" (distinct), "first_seen" (earliest),
        "last_seen" (latest); most matches first, then by the group fields."""

    @abstractmethod
    def match_totals(self, by: Sequence[str], *, work: str | Sequence[str] | None = None, site: str | None = None,
                     status: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Like match_summary without the distinct counts: one dict per group with its fields and
        "matches", "first_seen", "last_seen", in the same order. What the reports ask on every
        view, so a backend answers it from totals it keeps up to date rather than by a scan."""

    @abstractmethod
    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        """Change a match's status and append {"status", "by", "at"} to its history.
        Raises NotFound, ValueError for a bad status."""


class ImagesStore(ABC):
    """Registered images of works (covers, illustrations), images found on crawled pages, and
    the matches between them. The bytes of an image are read only when asked for: listings
    leave them out (`data` is b"")."""

    @abstractmethod
    def upsert_work_image(self, image: WorkImage) -> tuple[WorkImage, bool]:
        """Insert or replace a registered image (keeps created_at); returns it, with its sha256,
        and whether its bytes are new or changed."""

    @abstractmethod
    def get_work_image(self, key: str) -> WorkImage:
        """With its bytes. Raises NotFound."""

    @abstractmethod
    def work_images(self, work: str | None = None, *, with_data: bool = False) -> list[WorkImage]:
        """Registered images (of one work), by key; their bytes only `with_data`."""

    @abstractmethod
    def count_work_images(self, work: str | None = None) -> int:
        """How many images (of one work) are registered."""

    @abstractmethod
    def delete_work_image(self, key: str) -> None:
        """Forget a registered image (its matches stay, for the record). Raises NotFound."""

    @abstractmethod
    def upsert_page_image(self, image: PageImage) -> tuple[PageImage, bool]:
        """Insert or update an image found on a page; returns it and whether its bytes are new or
        changed. New or changed bytes: status "queued", no fingerprint, reading, reason or attempts,
        the given updated_at. Same bytes: url, site, found_on, position, fetched_at and the
        validators are updated; status, fingerprint, reading and attempts are kept."""

    @abstractmethod
    def get_page_image(self, key: str) -> PageImage:
        """With its bytes. Raises NotFound."""

    @abstractmethod
    def page_images(self, *, status: str | None = None, site: str | None = None, found_on: str | None = None,
                    reading: str | None = None, limit: int | None = None) -> list[PageImage]:
        """Images found on pages (on the page `found_on`; whose reading has the status `reading`),
        without their bytes, oldest update first."""

    @abstractmethod
    def set_page_image_reading(self, key: str, reading: dict[str, Any]) -> None:
        """Record what OCR made of a page image (tracker.media.pictures); its status is left alone.
        Raises NotFound."""

    @abstractmethod
    def set_page_image_status(self, key: str, status: str, reason: str = "", *,
                              fingerprint: dict[str, Any] | None = None) -> None:
        """Record the outcome of processing (counts an attempt), and the fingerprint when given.
        Raises NotFound, ValueError for a bad status."""

    def page_image_validators(self, key: str) -> tuple[str, str]:
        """(etag, last_modified) of a stored page image; ("", "") when it has none or is not stored."""
        try:
            image = self.get_page_image(key)
        except NotFound:
            return "", ""
        return image.etag, image.last_modified

    @abstractmethod
    def upsert_image_match(self, match: ImageMatch) -> ImageMatch:
        """Insert, or update the distance, agreement and last_seen (forward only) of, the match
        (image, work_image); keeps first_seen, status and history."""

    @abstractmethod
    def get_image_match(self, image: str, work_image: str) -> ImageMatch:
        """Raises NotFound."""

    @abstractmethod
    def image_matches(self, *, work: str | None = None, site: str | None = None,
                      status: str | Sequence[str] | None = None, image: str | None = None,
                      limit: int | None = None, offset: int = 0, sort: str = "distance") -> list[ImageMatch]:
        """Image matches, ordered by `sort` (one of IMAGE_MATCH_SORTS, "-" for descending), then by
        image and registered image."""

    @abstractmethod
    def count_image_matches(self, *, work: str | None = None, site: str | None = None,
                            status: str | Sequence[str] | None = None, image: str | None = None) -> int:
        """How many image matches `image_matches` would return without a limit."""

    @abstractmethod
    def set_image_match_status(self, image: str, work_image: str, status: str, by: str = "") -> ImageMatch:
        """Change an image match's status and append {"status", "by", "at"} to its history (nothing
        when it has that status already). Raises NotFound, ValueError for a bad status."""
