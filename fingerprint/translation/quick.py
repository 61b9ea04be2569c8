"""What the translation channel reads from a whole text: no sentences, no segmentation.

Every page asks the index whether it translates something registered, and every original
posts its keys, so this must cost little next to the same-language channels. Keys and the
ranking of candidates need only a text's concepts and names with their counts, not its
sentences (those are built later, and only for the few originals worth aligning: bags.py).
Chinese: every dictionary word of one or two
characters at every position (looked up as arrays, numpy's searchsorted over packed code
point pairs), which is a superset of what segmentation keeps; English: the distinct
tokens, each read once per process (bags._token).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from fingerprint.normalize import tables
from fingerprint.pinyin import tables as pinyin_tables
from fingerprint.translation.bags import _EN_TOKEN, _TOKENS, NAME_BASE, _name_keys, _token, coarse_ids
from fingerprint.translation.lexicon import lexicon
from fingerprint.translation.weights import word_weights

SENSES = 3


@lru_cache(maxsize=1)
def _zh_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Words of one and two characters as packed code points (sorted), with their first
    SENSES concept ids in CSR form."""
    lex = lexicon()
    singles, pairs = [], []
    for w, cids in lex.words.items():
        if len(w) == 1:
            singles.append((ord(w), cids[:SENSES]))
        elif len(w) == 2:
            pairs.append(((ord(w[0]) << 21) | ord(w[1]), cids[:SENSES]))

    def csr(items):
        items.sort(key=lambda x: x[0])
        keys = np.asarray([k for k, _ in items], dtype=np.int64)
        offsets = np.cumsum([0] + [len(c) for _, c in items]).astype(np.int64)
        flat = np.concatenate([c for _, c in items]).astype(np.int64) if items else np.empty(0, np.int64)
        return keys, offsets, flat

    return (*csr(singles), *csr(pairs))


def _lookup(keys: np.ndarray, offsets: np.ndarray, flat: np.ndarray, q: np.ndarray):
    """For the packed words `q` (with repeats): (concept ids, how often, once per occurrence of a
    word carrying it) and, per distinct word found, its concept ids' segment boundaries."""
    q, counts = np.unique(q, return_counts=True)
    pos = np.searchsorted(keys, q)
    inside = pos < keys.shape[0]
    pos, q, counts = pos[inside], q[inside], counts[inside]
    found = keys[pos] == q
    hit, counts = pos[found], counts[found]
    if not hit.shape[0]:
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    starts, lens = offsets[hit], offsets[hit + 1] - offsets[hit]
    seg = np.concatenate(([0], np.cumsum(lens)[:-1]))
    idx = np.repeat(starts - seg, lens) + np.arange(int(lens.sum()))
    return flat[idx], np.repeat(counts, lens), seg


@dataclass
class Reading:
    """What the translation channel reads from a whole text: its concepts and names with how
    often each occurs, and (for ranking) the most a text could share, word by word."""

    language: str
    concepts: dict[int, int] = field(default_factory=dict)  # concept id -> occurrences
    names: dict[int, int] = field(default_factory=dict)  # name key -> occurrences
    word_weight: float = 0.0  # zh: each distinct word's best sense weight above weights.FLOOR, summed


def _zh_reading(text: str) -> Reading:
    canon = tables().canon
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
    cps = cps[cps < canon.shape[0]]
    c = canon[cps].astype(np.int64)
    cjk = ((c >= 0x4E00) & (c <= 0x9FFF)) | ((c >= 0x3400) & (c <= 0x4DBF)) | ((c >= 0x20000) & (c <= 0x3134F))
    sk, so, sf, pk, po, pf = _zh_tables()
    adjacent = cjk[:-1] & cjk[1:]
    weights = word_weights()
    concepts: dict[int, int] = {}
    total = 0.0
    for ids, counts, seg in (_lookup(sk, so, sf, c[cjk]), _lookup(pk, po, pf, ((c[:-1] << 21) | c[1:])[adjacent])):
        if not ids.shape[0]:
            continue
        u, inv = np.unique(ids, return_inverse=True)
        n = np.bincount(inv, weights=counts)
        for cid, k in zip(u.tolist(), n.tolist()):
            concepts[cid] = concepts.get(cid, 0) + int(k)
        total += float(np.maximum.reduceat(weights[ids], seg).sum())
    syl = pinyin_tables().syllable
    per, _ = coarse_ids()
    co = per[syl[np.minimum(c, syl.shape[0] - 1)].astype(np.int64)] * cjk
    ok = adjacent & (co[:-1] > 0) & (co[1:] > 0)
    vals, counts = np.unique(NAME_BASE + co[:-1][ok] * 1024 + co[1:][ok], return_counts=True)
    return Reading("zh", concepts, dict(zip(vals.tolist(), counts.tolist())), total)


def _en_reading(text: str) -> Reading:
    _, cid = coarse_ids()
    toks = _EN_TOKEN.findall(text)
    concepts: dict[int, int] = {}
    for tok, k in Counter(toks).items():
        for c in (_TOKENS.get(tok) or _token(tok))[0]:
            concepts[c] = concepts.get(c, 0) + k
    names: dict[int, int] = {}
    run: list[list[str]] = []
    lone_word = False

    def close() -> None:
        keys: set[int] = set()
        _name_keys(run, lone_word, cid, keys)
        for key in keys:
            names[key] = names.get(key, 0) + 1

    for tok in toks:
        if not tok[0].isupper():  # only capitalised tokens start or continue a name
            if run:
                close()
                run = []
            continue
        _, reading, lone, _, _ = _TOKENS.get(tok) or _token(tok)
        if reading is not None:
            if not run:
                lone_word = lone
            run.append(reading)
        elif run:
            close()
            run = []
    if run:
        close()
    return Reading("en", concepts, names)


def from_sentences(bags) -> Reading:
    """The reading of a text already cut into sentences (bags.TextBags): its segmented words'
    first senses and its names, counted. An original posts its keys from this, so chance
    pairs of characters across word boundaries never become its keys."""
    concepts: Counter[int] = Counter()
    if bags.language == "zh":
        for sent in bags.units:
            for u in sent:
                concepts.update(u.tolist()[:SENSES])
    else:
        for s in bags.concepts:
            concepts.update(s)
    names: Counter[int] = Counter()
    for s in bags.names:
        names.update(s)
    return Reading(bags.language, dict(concepts), dict(names))


def read(text: str, language: str) -> Reading:
    """The whole-text reading of a text in "zh" or "en" (another language reads as nothing)."""
    if language == "zh":
        return _zh_reading(text)
    if language == "en":
        return _en_reading(text)
    return Reading(language)


__all__ = ["Reading", "from_sentences", "read"]
