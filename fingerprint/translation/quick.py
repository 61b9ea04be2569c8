"""A page's translation-channel query, read straight from its text: no sentences, no segmentation.

Every page asks the index whether it translates something registered, so the query must
cost little next to the same-language channels. A page's keys need only the set of its
concepts and its names, not its sentences (those are built later, and only for the few
originals worth aligning: bags.py). Chinese: every dictionary word of one or two
characters at every position (looked up as arrays, numpy's searchsorted over packed code
point pairs), which is a superset of what segmentation keeps; English: the distinct
tokens, each read once per process (bags._token).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..normalize import tables
from ..pinyin import tables as pinyin_tables
from .bags import NAME_BASE, _EN_TOKEN, _TOKENS, _name_keys, _token, coarse_ids
from .lexicon import lexicon

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


def _lookup(keys: np.ndarray, offsets: np.ndarray, flat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The concept ids of every word of `keys` found among the packed words `q`."""
    q = np.unique(q)
    pos = np.searchsorted(keys, q)
    inside = pos < keys.shape[0]
    pos, q = pos[inside], q[inside]
    hit = pos[keys[pos] == q]
    if not hit.shape[0]:
        return np.empty(0, np.int64)
    starts, lens = offsets[hit], offsets[hit + 1] - offsets[hit]
    idx = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(int(lens.sum()))
    return flat[idx]


def zh_query(text: str) -> tuple[set[int], list[int]]:
    """(concept ids, name keys repeated at least twice) of a Chinese text."""
    canon = tables().canon
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
    cps = cps[cps < canon.shape[0]]
    c = canon[cps].astype(np.int64)
    cjk = ((c >= 0x4E00) & (c <= 0x9FFF)) | ((c >= 0x3400) & (c <= 0x4DBF)) | ((c >= 0x20000) & (c <= 0x3134F))
    sk, so, sf, pk, po, pf = _zh_tables()
    chars = c[cjk]
    adjacent = cjk[:-1] & cjk[1:]
    pairs = ((c[:-1] << 21) | c[1:])[adjacent]
    concepts = set(_lookup(sk, so, sf, chars).tolist()) | set(_lookup(pk, po, pf, pairs).tolist())
    syl = pinyin_tables().syllable
    per, _ = coarse_ids()
    co = per[syl[np.minimum(c, syl.shape[0] - 1)].astype(np.int64)] * cjk
    ok = adjacent & (co[:-1] > 0) & (co[1:] > 0)
    bi = NAME_BASE + co[:-1][ok] * 1024 + co[1:][ok]
    vals, counts = np.unique(bi, return_counts=True)
    return concepts, vals[counts >= 2].tolist()


def en_query(text: str) -> tuple[set[int], list[int]]:
    """(concept ids, name keys) of an English text."""
    _, cid = coarse_ids()
    toks = _EN_TOKEN.findall(text)
    concepts: set[int] = set()
    for tok in set(toks):
        concepts.update((_TOKENS.get(tok) or _token(tok))[0])
    keys: set[int] = set()
    run: list[list[str]] = []
    lone_word = False
    for tok in toks:
        if not tok[0].isupper():  # only capitalised tokens start or continue a name
            if run:
                _name_keys(run, lone_word, cid, keys)
                run = []
            continue
        _, reading, lone, _, _ = _TOKENS.get(tok) or _token(tok)
        if reading is not None:
            if not run:
                lone_word = lone
            run.append(reading)
        elif run:
            _name_keys(run, lone_word, cid, keys)
            run = []
    if run:
        _name_keys(run, lone_word, cid, keys)
    return concepts, sorted(keys)


def query_keys(text: str, language: str) -> tuple[set[int], list[int]]:
    if language == "zh":
        return zh_query(text)
    if language == "en":
        return en_query(text)
    return set(), []


__all__ = ["en_query", "query_keys", "zh_query"]
