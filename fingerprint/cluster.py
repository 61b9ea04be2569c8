"""Single-Pass clustering of a stream of fingerprints (Li, Mao and Chen 2013, section 3.3).

Each new item is compared with the centres of the clusters found so far; it
joins the cluster whose centre is nearest, if that is within the threshold
(Hamming distance <= 3 by default), and otherwise starts a new cluster with
itself as the centre. A cluster's centre is its first item and never moves, so
an item's cluster does not depend on what arrives after it.

The paper keeps the centres in a sorted list; here they live in a
`SimhashIndex`, so finding the nearest centre touches a few buckets instead of
every cluster. Ties go to the earliest cluster.

Worked example, threshold 1, 4-bit values arriving in order:

    a=0b1010 -> no centres: cluster 0 (centre a)
    b=0b1011 -> 0b1011 ^ 0b1010 = 0b0001, 1 bit <= 1: cluster 0
    c=0b0101 -> 0b0101 ^ 0b1010 = 0b1111, 4 bits > 1: cluster 1 (centre c)
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fingerprint.errors import IncompatibleFingerprints, ParameterError
from fingerprint.simhash import Simhash
from fingerprint.simhash_index import SimhashIndex


@dataclass
class Member:
    key: object
    distance: int  # Hamming distance to the cluster's centre


@dataclass
class Cluster:
    """One group of near-duplicates: its centre (the first item) and every member, centre included."""

    id: int
    centre: object  # key of the centre item
    value: int  # the centre's fingerprint
    members: list[Member] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.members)

    @property
    def keys(self) -> list:
        return [m.key for m in self.members]


class SinglePass:
    """Cluster fingerprints as they arrive; `add` returns the cluster id (0, 1, 2... in creation order)."""

    def __init__(self, threshold: int = 3, bits: int = 64, *, tables: int | None = None):
        if not isinstance(threshold, int) or not 0 <= threshold < bits:
            raise ParameterError(f"threshold must be a whole number of bits from 0 to {bits - 1}, got {threshold!r}")
        self.threshold = threshold
        self.bits = bits
        self._centres = SimhashIndex(bits=bits, k=threshold, tables=tables)
        self._clusters: list[Cluster] = []
        self._params: tuple | None = None
        self._items = 0

    def _value(self, fingerprint: Simhash | int) -> int:
        if isinstance(fingerprint, Simhash):
            p = fingerprint.params()
            if fingerprint.bits != self.bits:
                raise IncompatibleFingerprints(
                    "a simhash with this clustering", f"{fingerprint.bits} bits", f"{self.bits} bits"
                )
            if self._params is None:
                self._params = p
            elif p != self._params:
                raise IncompatibleFingerprints("a simhash with this clustering", p, self._params)
            return fingerprint.value
        if not isinstance(fingerprint, int) or fingerprint < 0 or fingerprint >> self.bits:
            raise ParameterError(
                f"{fingerprint!r} is not an unsigned {self.bits}-bit fingerprint; pass a Simhash or an int"
            )
        return fingerprint

    def assign(self, fingerprint: Simhash | int) -> tuple[int | None, int]:
        """The cluster this fingerprint would join and its distance to the centre, without adding it.

        Returns (None, 0) when it would start a new cluster.
        """
        hits = self._centres.query(self._value(fingerprint))
        if not hits:
            return None, 0
        cid, d = hits[0]  # nearest first, then earliest cluster
        return cid, d

    def add(self, key: object, fingerprint: Simhash | int) -> int:
        """Put one item in its cluster (or a new one) and return the cluster id."""
        value = self._value(fingerprint)
        cid, d = self.assign(value)
        self._items += 1
        if cid is None:
            cid = len(self._clusters)
            self._clusters.append(Cluster(cid, key, value, [Member(key, 0)]))
            self._centres.add(cid, value)
        else:
            self._clusters[cid].members.append(Member(key, d))
        return cid

    def add_many(self, items: Iterable[tuple[object, Simhash | int]]) -> list[int]:
        """`add` for each (key, fingerprint), in order; returns the cluster ids."""
        return [self.add(k, f) for k, f in items]

    @property
    def clusters(self) -> list[Cluster]:
        """The clusters in creation order; members in arrival order."""
        return list(self._clusters)

    def __getitem__(self, cluster_id: int) -> Cluster:
        return self._clusters[cluster_id]

    def __iter__(self) -> Iterator[Cluster]:
        return iter(self._clusters)

    def __len__(self) -> int:
        return len(self._clusters)

    @property
    def items(self) -> int:
        """How many items have been added."""
        return self._items
