"""Chapter keys, titles and numbers per work, without their texts.

Reports need every chapter of a work (coverage, the matrix rows) but not the
texts; the outline is read once (store.chapter_headers) and kept until the
number of chapters changes, or for OUTLINE_MAX_AGE seconds (a chapter retitled
in place changes no count).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from tracker.store import Store

OUTLINE_MAX_AGE = 60.0


@dataclass(frozen=True)
class ChapterInfo:
    key: str
    work: str
    title: str
    number: int | None


@dataclass(frozen=True)
class Outline:
    by_work: dict[str, list[ChapterInfo]] = field(default_factory=dict)
    by_key: dict[str, ChapterInfo] = field(default_factory=dict)

    def of_work(self, work: str) -> list[ChapterInfo]:
        return self.by_work.get(work, [])

    def count(self, work: str) -> int:
        return len(self.by_work.get(work, ()))

    def title(self, key: str) -> str:
        """The chapter's title; for a chapter no longer registered, the part of its key after the work."""
        info = self.by_key.get(key)
        return info.title if info else key.split("/", 1)[-1]


class ChapterCatalog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = -1
        self._loaded = 0.0
        self._outline = Outline()

    def outline(self, store: Store) -> Outline:
        total = store.count_chapters()
        with self._lock:
            if total == self._total and time.monotonic() - self._loaded < OUTLINE_MAX_AGE:
                return self._outline
        by_work: dict[str, list[ChapterInfo]] = {}
        by_key: dict[str, ChapterInfo] = {}
        for ch in store.chapter_headers():
            info = ChapterInfo(ch.key, ch.work, ch.title, ch.number)
            by_work.setdefault(ch.work, []).append(info)
            by_key[ch.key] = info
        outline = Outline(by_work, by_key)
        with self._lock:
            self._outline, self._total, self._loaded = outline, total, time.monotonic()
        return outline
