"""Align a Chinese text with an English one, sentence by sentence, and say how much of each the other covers.

1. **Weights.** A shared concept counts by how rare it is in the dictionary (lexicon.idf)
   and in this English text: a stem found in most of its sentences ("say" in a novel)
   counts little. A shared name key counts NAME_WEIGHT, a shared number NUMBER_WEIGHT.
2. **Sentence similarity.** For Chinese sentence i and English sentence j: each Chinese
   word counts its best sense found in j; names and numbers are added; the sum is divided
   by the mean of what either sentence could have matched (a Dice coefficient).
3. **Anchors.** Each Chinese sentence's best English sentences with similarity of at least
   ANCHOR_MIN are anchors: lexical evidence that they say the same thing.
4. **Chain.** A translation keeps the order of its original, so its anchors lie along a
   path: the best chain takes anchors in increasing order on both sides, each within
   MAX_STEP sentences of the last, paying for steps that stray from the texts' sentence
   ratio. Chance anchors between unrelated texts are scattered and build no long chain.
5. **Chance.** The same anchors, with the English side read backwards, are chained
   again: that is what chance alone builds from them. A translated copy's chain scores
   at least MIN_SCORE and NULL_RATIO times that; an unrelated pair's scores about the same
   either way.
6. **Coverage.** Sentences between two linked anchors are aligned with each other (a
   translator merges and splits sentences); their sizes over each text's size give the
   containment (of the original) and the page share, as the same-language channels do.

Everything is linear in the texts' sizes: a concept posted by more than MAX_POSTING
English sentences is left out of the anchors, and the chain looks MAX_STEP sentences back.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from fingerprint.translation.bags import NUMBER_BASE, TextBags
from fingerprint.translation.lexicon import lexicon

NAME_WEIGHT = 10.0
NUMBER_WEIGHT = 8.0
ANCHOR_MIN = 0.14  # Dice similarity of an anchor pair
ANCHORS_PER_SENTENCE = 3
MAX_STEP = 6  # sentences either side may advance between two chained anchors
STEP_COST = 0.03  # per sentence skipped beyond the expected ratio
MIN_ANCHORS = 5  # a translated copy has at least this many chained anchors
MIN_DENSITY = 0.2  # anchors per aligned original sentence, at least
MAX_POSTING = 24  # a concept in more English sentences than this tells none apart: not used for anchors
MIN_SCORE = 1.5  # the chain's similarity, summed
NULL_RATIO = 2.0  # and this many times what the same anchors chain in reversed order


@dataclass
class Alignment:
    """The evidence of a translation: aligned sentence ranges and what they cover."""

    pairs: list[tuple[int, int, int, int]]  # (original start, end, page start, end) sentence ranges
    anchors: list[tuple[int, int, float]]  # (original sentence, page sentence, similarity)
    original_aligned: int  # original sentences inside the aligned stretch
    original_sentences: int
    page_aligned: int
    page_sentences: int
    containment: float  # aligned share of the original (by characters or words)
    page_share: float  # aligned share of the page
    score: float  # the chain's total similarity
    is_copy: bool
    details: dict[str, float] = field(default_factory=dict)


def _weights(en: TextBags) -> tuple[dict[int, float], float]:
    """Per concept and key: its weight in this pair (see the module docstring), from the English side."""
    df: dict[int, int] = defaultdict(int)
    for s in en.concepts:
        for c in s:
            df[c] += 1
    for s in en.names:
        for c in s:
            df[c] += 1
    n = max(1, len(en))
    norm = math.log(1 + n)
    return {c: math.log(1 + n / d) / norm for c, d in df.items()}, norm


def _english_side(en: TextBags):
    """Postings, weights and potentials of an English text, computed once per text (a page is
    aligned with several candidates)."""
    cached = getattr(en, "_side", None)
    if cached is not None:
        return cached
    idf = lexicon().idf
    factor, _ = _weights(en)
    post: dict[int, list[int]] = defaultdict(list)
    for j, s in enumerate(en.concepts):
        for c in s:
            post[c].append(j)
    npost: dict[int, list[int]] = defaultdict(list)
    for j, (a, b) in enumerate(zip(en.names, en.numbers)):
        for c in a | b:
            npost[c].append(j)
    # Bounded postings keep the work linear in the texts' sizes, whatever a page repeats.
    post = {c: js for c, js in post.items() if len(js) <= MAX_POSTING}
    npost = {c: js for c, js in npost.items() if len(js) <= MAX_POSTING}
    wt = {c: float(idf[c]) * factor.get(c, 1.0) for c in post}
    en_pot = []
    for j in range(len(en)):
        p = sum(float(idf[c]) * factor.get(c, 1.0) for c in en.concepts[j])
        p += sum(NAME_WEIGHT * factor.get(k, 1.0) for k in en.names[j])
        p += NUMBER_WEIGHT * len(en.numbers[j])
        en_pot.append(p)
    en._side = (post, npost, wt, en_pot, factor)
    return en._side


def similarities(zh: TextBags, en: TextBags) -> list[dict[int, float]]:
    """For each Chinese sentence, the English sentences it shares anything with and the Dice similarity."""
    post, npost, wt, en_pot, factor = _english_side(en)
    lists, pots = zh.unit_lists()
    out: list[dict[int, float]] = []
    for i in range(len(zh)):
        acc: dict[int, float] = defaultdict(float)
        for u in lists[i]:
            # a word counts once per English sentence, by its rarest sense found there
            seen: set[int] = set()
            for c in u:
                js = post.get(c)
                if js is None:
                    continue
                wc = wt[c]
                for j in js:
                    if j not in seen:
                        seen.add(j)
                        acc[j] += wc
        pot = pots[i]
        for k in zh.names[i] | zh.numbers[i]:
            for j in npost.get(k, ()):
                acc[j] += (NAME_WEIGHT * factor.get(k, 1.0)) if k < NUMBER_BASE else NUMBER_WEIGHT
        # names and numbers the Chinese side could have matched: only those the English side spells
        sims = {}
        for j, v in acc.items():
            denom = (pot + en_pot[j]) / 2
            if denom > 0:
                sims[j] = min(1.0, v / denom)
        out.append(sims)
    return out


def _chain(anchors: list[tuple[int, int, float]], ratio: float) -> tuple[list[int], float]:
    """The best chain through the anchors (indices into `anchors`, in order) and its score."""
    n = len(anchors)
    best = [0.0] * n
    prev = [-1] * n
    by_i: dict[int, list[int]] = defaultdict(list)
    for k, (i, _, _) in enumerate(anchors):
        by_i[i].append(k)
    for k, (i, j, s) in enumerate(anchors):
        best[k] = s
        for di in range(1, MAX_STEP + 1):
            for b in by_i.get(i - di, ()):
                jb = anchors[b][1]
                dj = j - jb
                if not 0 < dj <= MAX_STEP:
                    continue
                cost = STEP_COST * abs(dj - ratio * di) + STEP_COST * 0.5 * (di - 1)
                v = best[b] + s - cost
                if v > best[k]:
                    best[k], prev[k] = v, b
    if not n:
        return [], 0.0
    end = max(range(n), key=best.__getitem__)
    path = []
    k = end
    while k >= 0:
        path.append(k)
        k = prev[k]
    return path[::-1], best[end]


def align_texts(original: TextBags, page: TextBags) -> Alignment:
    """Align a page with an original written in the other language (one "zh", the other "en")."""
    if {original.language, page.language} != {"zh", "en"}:
        raise ValueError(f"align_texts needs one Chinese and one English text, got {original.language!r} "
                         f"and {page.language!r}")
    zh, en = (original, page) if original.language == "zh" else (page, original)
    sims = similarities(zh, en)
    raw: list[tuple[int, int, float]] = []  # (zh sentence, en sentence, similarity)
    for i, row in enumerate(sims):
        top = sorted(((s, j) for j, s in row.items() if s >= ANCHOR_MIN), reverse=True)[:ANCHORS_PER_SENTENCE]
        raw.extend((i, j, s) for s, j in top)
    ratio = (len(en) / len(zh)) if len(zh) else 1.0
    raw.sort()
    r = max(0.2, min(5.0, ratio))
    path, score = _chain(raw, r)
    chain = [raw[k] for k in path]
    # The same anchors with the English side read backwards: what chance alone chains
    # from them. A translation keeps its order, so its chain is far above this.
    n_en = len(en)
    _, null = _chain(sorted((i, n_en - 1 - j, s) for i, j, s in raw), r)
    # back to the original's and the page's sides
    if original.language == "zh":
        anchors = [(i, j, s) for i, j, s in chain]
    else:
        anchors = [(j, i, s) for i, j, s in chain]
    return _measure(original, page, anchors, score, null)


def _measure(original: TextBags, page: TextBags, anchors: list[tuple[int, int, float]], score: float,
             null: float) -> Alignment:
    o_cov = np.zeros(len(original), dtype=bool)
    p_cov = np.zeros(len(page), dtype=bool)
    pairs: list[tuple[int, int, int, int]] = []
    n_o, n_p = len(original), len(page)
    if anchors and anchors[0][0] <= MAX_STEP and anchors[0][1] <= MAX_STEP:
        # the chain starts near both texts' starts: what comes before its first anchor is the
        # same opening, translated (as between two anchors)
        i0, j0 = anchors[0][0], anchors[0][1]
        o_cov[:i0] = p_cov[:j0] = True
        if i0 and j0:
            pairs.append((0, i0, 0, j0))
    last = None
    for i, j, _ in anchors:
        if last is not None:
            li, lj = last
            if i - li > 1 and j - lj > 1:  # the sentences between two anchors translate each other
                pairs.append((li + 1, i, lj + 1, j))
            o_cov[li:i + 1] = True
            p_cov[lj:j + 1] = True
        o_cov[i] = p_cov[j] = True
        pairs.append((i, i + 1, j, j + 1))
        last = (i, j)
    if last is not None and n_o - 1 - last[0] <= MAX_STEP and n_p - 1 - last[1] <= MAX_STEP:
        li, lj = last  # and the same at the end
        o_cov[li:] = p_cov[lj:] = True
        if li + 1 < n_o and lj + 1 < n_p:
            pairs.append((li + 1, n_o, lj + 1, n_p))
    o_tot, p_tot = max(1, original.total), max(1, page.total)
    containment = float(original.sizes[o_cov].sum()) / o_tot if len(original) else 0.0
    page_share = float(page.sizes[p_cov].sum()) / p_tot if len(page) else 0.0
    o_n = int(o_cov.sum())
    density = len(anchors) / o_n if o_n else 0.0
    is_copy = (len(anchors) >= MIN_ANCHORS and density >= MIN_DENSITY and score >= MIN_SCORE
               and score >= NULL_RATIO * null)
    return Alignment(pairs=pairs, anchors=anchors, original_aligned=o_n, original_sentences=len(original),
                     page_aligned=int(p_cov.sum()), page_sentences=len(page), containment=containment,
                     page_share=page_share, score=score, is_copy=is_copy,
                     details={"anchors": len(anchors), "density": round(density, 3), "null": round(null, 3)})
