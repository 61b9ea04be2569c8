"""The running system's parts, opened once from Settings: store, index, engine.

Commands, Celery tasks and the admin each build one Context and call the
pipeline functions with it; nothing else holds connections.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, MutableMapping
from functools import cached_property

from fingerprint.engine import Prepared, prepare
from fingerprint.index import CandidateIndex, MemoryIndex
from fingerprint.track import Tracker

from .fingerprints import params_hash, unpack_keys
from .settings import Settings
from .store import NotFound, Store
from .store.open import open_store


class StoreOriginals(MutableMapping):
    """doc number -> prepared original, loaded from the store on first use and kept
    in a bounded LRU (a chapter prepares in ~3 ms; 4,096 of them take ~1 GB)."""

    def __init__(self, store: Store, config, size: int = 4096):
        self.store, self.config, self.size = store, config, size
        self._cache: OrderedDict[int, Prepared] = OrderedDict()

    def __getitem__(self, doc: int) -> Prepared:
        p = self._cache.get(doc)
        if p is None:
            try:
                ch = self.store.chapter_by_doc(doc)
            except NotFound:
                raise KeyError(doc) from None
            p = prepare(ch.key, ch.text, self.config, {"work": ch.work, "title": ch.title})
            self._cache[doc] = p
            if len(self._cache) > self.size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(doc)
        return p

    def __setitem__(self, doc: int, p: Prepared) -> None:
        self._cache[doc] = p
        self._cache.move_to_end(doc)
        if len(self._cache) > self.size:
            self._cache.popitem(last=False)

    def __delitem__(self, doc: int) -> None:
        self._cache.pop(doc, None)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._cache))

    def __len__(self) -> int:
        return len(self._cache)


class Context:
    def __init__(self, settings: Settings | None = None, *, store: Store | None = None,
                 index: CandidateIndex | None = None):
        self.settings = settings or Settings.load()
        self.config = self.settings.engine_config()
        self.params = self.settings.index_params()
        self.params_hash = params_hash(self.config, self.params)
        self._store = store
        self._index = index
        self._image_index = None
        self._image_count = 0
        self._seen = None
        self._index_in_process = False
        self._loaded_catalog: tuple[int, str] | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            s = self.settings
            self._store = open_store(s)
        return self._store

    @property
    def index(self) -> CandidateIndex:
        if self._index is None:
            s = self.settings
            if s.redis_url:
                from .redisindex import RedisIndex, connect

                # The capacity sizes the buckets when the index is first written (later, its
                # layout is read back from Redis): room for twice the chapters stored now.
                capacity = max(100_000, 2 * self.store.count_chapters())
                self._index = RedisIndex(connect(s.redis_url), self.config, self.params, prefix=s.redis_prefix,
                                         capacity=capacity)
            else:
                # The in-process index lives as long as the process: fill it from the stored fingerprints.
                self._index = MemoryIndex(self.config, self.params)
                self._index_in_process = True
                self.load_index(self._index)
        return self._index

    def load_index(self, index: CandidateIndex) -> int:
        """Add every stored fingerprint made with the current parameters; returns how many."""
        self._loaded_catalog = self.store.catalog_stamp()  # read first: a chapter added meanwhile is newer
        docs = {ch.key: ch.doc for ch in self.store.chapters()}
        items = [(docs[r.chapter], unpack_keys(r.data)) for r in self.store.fingerprints(self.params_hash)
                 if r.chapter in docs]
        index.add_many(items)
        compact = getattr(index, "compact", None)
        if compact is not None and items:
            compact()  # the Redis index stores its buckets at their exact size after a bulk load
        return len(items)

    def catalog_judged(self) -> tuple[int, str]:
        """The registered chapters a page judged now is judged against (the store's catalog_stamp).
        The in-process index is loaded again first when the store's chapters changed since it was
        loaded (this process or another registered, changed or removed some), so that what a page
        is judged against is what the stamp says; Redis holds one index, written as chapters are
        registered."""
        index = self.index  # loads the in-process index on first use
        now = self.store.catalog_stamp()
        if self._index_in_process and self._loaded_catalog != now:
            index.clear()
            self.load_index(index)
            if "tracker" in self.__dict__:
                self.tracker.originals.clear()  # prepared texts of chapters that may have changed
            now = self._loaded_catalog
        return now

    @property
    def seen(self):
        """The gate of page processing (tracker.seen.SeenTexts), opened on first use; None with
        FPT_SEEN_TEXTS=0 (every page judged in full)."""
        if self._seen is None and self.settings.seen_texts:
            from .seen import open_gate

            self._seen = open_gate(self)
        return self._seen

    @property
    def image_index(self):
        """The registered images' fingerprints (fingerprint.image_index.ImageIndex), loaded from the
        store on first use; each process holds its own (they are small: 16 bytes of hashes an image)."""
        if self._image_index is None:
            from .media.images import load_image_index

            self._image_count = self.store.count_work_images()  # counted first: a later one only adds
            self._image_index = load_image_index(self)
        return self._image_index

    def refresh_image_index(self) -> None:
        """Load the registered images again on next use when their number in the store has changed
        since they were loaded (another process registered or removed some)."""
        if self._image_index is not None and self.store.count_work_images() != self._image_count:
            self._image_index = None

    @cached_property
    def tracker(self) -> Tracker:
        return Tracker(self.config, index=self.index, originals=StoreOriginals(self.store, self.config))

    def close(self) -> None:
        if self._seen is not None:
            self._seen.close()  # saves an in-process filter's new keys
            self._seen = None
        if self._store is not None:
            self._store.close()
