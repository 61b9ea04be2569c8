"""How well a reading matches the text drawn: character error rate and the substitutions.

    cer("他说己经走了", "他说已经走了") -> 1/6
    substitutions("未来", "末来") -> [("未", "末")]
    align("未来", "12:30 末来").missed -> 1 (and .inserted -> 4)

Both texts are normalised first (`comparable`): NFKC (full-width letters and digits to
ASCII), then only letters, digits and CJK characters are kept, so punctuation, spaces
and line breaks, which OCR renders in many equivalent ways, are not counted as errors.

The edit distance is the Levenshtein distance over characters, computed one row at a
time with numpy (the insertion chain of a row as a running minimum). It is quadratic,
which is why it is for measurement on bounded excerpts: inputs longer than MAX_CHARS
are refused rather than left to run.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from fingerprint.errors import ParameterError

MAX_CHARS = 20_000


def comparable(text: str) -> str:
    """`text` with NFKC applied and only letters, digits and CJK characters kept, lower-cased."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if ch.isalnum()).lower()


def _check(ref: str, hyp: str) -> None:
    if len(ref) > MAX_CHARS or len(hyp) > MAX_CHARS:
        raise ParameterError(f"texts of {len(ref)} and {len(hyp)} characters: the edit distance is quadratic, "
                             f"so score excerpts of at most {MAX_CHARS} characters (split longer ones)")


def _table(ref: str, hyp: str) -> np.ndarray:
    """The full Levenshtein table, (len(ref)+1) x (len(hyp)+1)."""
    a = np.frombuffer(ref.encode("utf-32-le"), dtype=np.uint32)
    b = np.frombuffer(hyp.encode("utf-32-le"), dtype=np.uint32)
    n, m = len(a), len(b)
    d = np.empty((n + 1, m + 1), dtype=np.int32)
    d[0] = np.arange(m + 1)
    j = np.arange(m + 1, dtype=np.int32)
    for i in range(1, n + 1):
        prev = d[i - 1]
        row = np.empty(m + 1, dtype=np.int32)
        row[0] = i
        row[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (b != a[i - 1]))
        # insertions: row[k] = min over l <= k of row[l] + (k - l)
        d[i] = np.minimum.accumulate(row - j) + j
    return d


def distance(ref: str, hyp: str) -> int:
    """Levenshtein distance between `ref` and `hyp` (characters, unit costs)."""
    _check(ref, hyp)
    return int(_table(ref, hyp)[-1, -1])


def cer(reference: str, reading: str) -> float:
    """Character error rate of `reading` against `reference`, both normalised by `comparable`:
    edits / reference length (0 is perfect; above 1 when the reading adds much)."""
    ref, hyp = comparable(reference), comparable(reading)
    if not ref:
        raise ParameterError("the reference text has no letters, digits or CJK characters to score against")
    return distance(ref, hyp) / len(ref)


@dataclass(frozen=True)
class Alignment:
    """One optimal alignment of a reading to its reference, after `comparable`.

    `missed` (substituted or deleted reference characters) over `reference_chars` is the
    share of the drawn text the reading lost; `inserted` counts characters the reading
    added (a status bar, a watermark, a reply box), which cost a matcher little.
    """

    reference_chars: int
    substituted: list[tuple[str, str]]  # (drawn, read), in order
    deleted: int
    inserted: int

    @property
    def edits(self) -> int:
        return len(self.substituted) + self.deleted + self.inserted

    @property
    def missed(self) -> int:
        return len(self.substituted) + self.deleted


def substitutions(reference: str, reading: str) -> list[tuple[str, str]]:
    """The (drawn, read) character pairs one optimal alignment substitutes, in order."""
    return align(reference, reading).substituted


def align(reference: str, reading: str) -> Alignment:
    """An optimal alignment of `reading` to `reference` and what it substitutes, deletes, inserts."""
    ref, hyp = comparable(reference), comparable(reading)
    _check(ref, hyp)
    d = _table(ref, hyp)
    i, k = len(ref), len(hyp)
    pairs = []
    deleted = inserted = 0
    while i > 0 and k > 0:
        here = d[i, k]
        if ref[i - 1] == hyp[k - 1] and here == d[i - 1, k - 1]:
            i, k = i - 1, k - 1
        elif here == d[i - 1, k - 1] + 1:
            pairs.append((ref[i - 1], hyp[k - 1]))
            i, k = i - 1, k - 1
        elif here == d[i - 1, k] + 1:
            i -= 1
            deleted += 1
        else:
            k -= 1
            inserted += 1
    pairs.reverse()
    return Alignment(len(ref), pairs, deleted + i, inserted + k)
