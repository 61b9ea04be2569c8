"""A Hamming index of registered images: which of them an image found on a page copies.

Each registered image has two 64-bit perceptual hashes (the whole image and its
centre, see fingerprint.image). They live in two contiguous uint64 arrays; a query
XORs its own two hashes against both arrays and counts the differing bits with a
vectorised popcount, keeping the smallest of the four distances per image:

    registered 0b1011..., query 0b0010... -> 0b1001... -> 2 bits differ (of 64)

Candidates within MAX_DISTANCE are then judged by fingerprint.image.images_match
(a tight distance alone, or a looser one with agreeing colour maps), nearest first.

A scan, not buckets: pigeonhole buckets (as the Simhash index uses for k = 3) would
need 13 blocks of 5 bits for k = 12, each bucket holding a 32nd of the images, so
the probes would cost more than the scan they avoid. The scan reads 16 bytes per
registered image: about 1 ms per query at 100,000 images and 14 ms at a million
on one core (bench/images.py measures it), and a rights holder registers covers
by the thousand, not the million.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from fingerprint.image import MAX_DISTANCE, ImageFingerprint, colour_agreement, images_match

__all__ = ["ImageHit", "ImageIndex", "match_images"]


@dataclass(frozen=True)
class ImageHit:
    key: str  # the registered image
    distance: int  # smallest Hamming distance between the two images' hashes, of 64 bits
    colour_agreement: float  # share of the colour-map blocks that agree


class ImageIndex:
    """Registered image fingerprints by key; `query` finds the ones an image copies."""

    def __init__(self, items: Iterable[tuple[str, ImageFingerprint]] = ()):
        self._prints: dict[str, ImageFingerprint] = {}
        self._keys: list[str] = []
        self._full = self._centre = np.zeros(0, dtype=np.uint64)
        self._stale = False
        for key, fp in items:
            self.add(key, fp)

    def add(self, key: str, fp: ImageFingerprint) -> None:
        """Register (or replace) an image."""
        self._prints[key] = fp
        self._stale = True

    def remove(self, key: str) -> None:
        if self._prints.pop(key, None) is not None:
            self._stale = True

    def clear(self) -> None:
        self._prints.clear()
        self._stale = True

    def __len__(self) -> int:
        return len(self._prints)

    def __contains__(self, key: object) -> bool:
        return key in self._prints

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._stale:  # rebuilt once after a batch of changes, not per change
            self._keys = list(self._prints)
            self._full = np.fromiter((fp.phash for fp in self._prints.values()), dtype=np.uint64,
                                     count=len(self._keys))
            self._centre = np.fromiter((fp.centre for fp in self._prints.values()), dtype=np.uint64,
                                       count=len(self._keys))
            self._stale = False
        return self._full, self._centre

    def distances(self, fp: ImageFingerprint) -> np.ndarray:
        """The smallest Hamming distance from `fp` to every registered image, in registration order."""
        full, centre = self._arrays()
        if not len(full):
            return np.zeros(0, dtype=np.uint8)
        q = (np.uint64(fp.phash), np.uint64(fp.centre))
        return np.minimum.reduce([np.bitwise_count(h ^ v) for h in (full, centre) for v in q])

    def query(self, fp: ImageFingerprint) -> list[ImageHit]:
        """The registered images that `fp` copies (images_match), nearest first, then by key."""
        d = self.distances(fp)
        near = np.flatnonzero(d <= MAX_DISTANCE)
        hits = []
        for i in near.tolist():
            key = self._keys[i]
            original = self._prints[key]
            if images_match(fp, original):
                hits.append(ImageHit(key, int(d[i]), round(colour_agreement(fp, original), 4)))
        hits.sort(key=lambda h: (h.distance, h.key))
        return hits

    def match(self, pages: Iterable[tuple[str, ImageFingerprint]]) -> Iterator[tuple[str, ImageHit]]:
        """(page image key, hit) for every registered image each page image copies."""
        for key, fp in pages:
            for hit in self.query(fp):
                yield key, hit


def match_images(originals: list[tuple[str, ImageFingerprint]], pages: list[tuple[str, ImageFingerprint]]):
    """(page key, original key, distance, colour agreement) for every page image that matches an
    original, nearest first per page."""
    if not originals or not pages:
        return
    for key, hit in ImageIndex(originals).match(pages):
        yield key, hit.key, hit.distance, hit.colour_agreement
