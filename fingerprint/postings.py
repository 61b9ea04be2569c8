"""An in-memory inverted index from 64-bit hashes to document numbers.

Postings are kept as two parallel numpy arrays sorted by hash, so a batch of
query hashes is answered with two `searchsorted` calls and a `bincount`, never
a scan of the documents. Additions are buffered and merged on the next query.
"""
from __future__ import annotations

import numpy as np

from fingerprint.hashing import distinct


class Postings:
    """hash -> documents that contain it (each document counted once per hash)."""

    def __init__(self) -> None:
        self._hashes = np.empty(0, dtype=np.uint64)
        self._docs = np.empty(0, dtype=np.int64)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, doc: int, hashes: np.ndarray) -> None:
        """Post the distinct `hashes` under document number `doc`."""
        h = distinct(np.asarray(hashes, dtype=np.uint64))
        if h.shape[0]:
            self._pending.append((h, np.full(h.shape[0], doc, dtype=np.int64)))

    def remove(self, doc: int) -> None:
        """Forget a document now (so adding it again afterwards keeps the new postings)."""
        self._merge()
        keep = self._docs != doc
        self._hashes, self._docs = self._hashes[keep], self._docs[keep]

    def _merge(self) -> None:
        if not self._pending:
            return
        hashes = np.concatenate([self._hashes] + [p[0] for p in self._pending])
        docs = np.concatenate([self._docs] + [p[1] for p in self._pending])
        order = np.argsort(hashes, kind="stable")
        self._hashes, self._docs = hashes[order], docs[order]
        self._pending.clear()

    def __len__(self) -> int:
        self._merge()
        return int(self._hashes.shape[0])

    def document_frequency(self, hashes: np.ndarray) -> np.ndarray:
        """How many documents post each hash."""
        self._merge()
        h = np.asarray(hashes, dtype=np.uint64)
        return np.searchsorted(self._hashes, h, side="right") - np.searchsorted(self._hashes, h, side="left")

    def hits(self, hashes: np.ndarray, *, max_df: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(documents, shared hash counts) for the distinct query hashes, best first.

        Hashes posted by more than `max_df` documents (boilerplate shared by many
        chapters) are ignored.
        """
        self._merge()
        h = distinct(np.asarray(hashes, dtype=np.uint64))
        lo = np.searchsorted(self._hashes, h, side="left")
        hi = np.searchsorted(self._hashes, h, side="right")
        n = hi - lo
        if max_df is not None:
            n = np.where(n > max_df, 0, n)
        total = int(n.sum())
        if total == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        # Expand each [lo, hi) range into positions without a Python loop.
        starts = np.repeat(lo - np.cumsum(n) + n, n)
        pos = starts + np.arange(total)
        docs, counts = np.unique(self._docs[pos], return_counts=True)
        order = np.argsort(-counts, kind="stable")
        return docs[order], counts[order]
