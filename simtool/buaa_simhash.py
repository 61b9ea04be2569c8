"""The BUAA course mode's Simhash, on whole matrices: token ids, the N features, counts, bits, distances.

* the feature vector is the N most frequent words of the whole article.txt,
  ties broken in dictionary order;
* a page's weight for feature i is how often that word occurs in the page;
* bit j of a fingerprint is 1 iff sum_i (+w_i if table[i][j] == '1' else -w_i) > 0,
  where the table is the first N rows and first M columns of hashvalue.txt.

Everything is computed on whole matrices: a pages x N count matrix, one matrix
product with the +-1 table, and one matrix product for all Hamming distances.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from typing import NamedTuple

import numpy as np

from fingerprint.errors import ParameterError

__all__ = ["TokenIds", "count_matrix", "encode_tokens", "feature_counts", "hamming_matrix", "rank_features",
           "select_features", "simhash_bits", "words_by_id"]


class TokenIds(NamedTuple):
    """Pages' tokens as integers: one flat id array plus the page each token belongs to."""

    ids: np.ndarray  # int64, one per token; -1 for a word not in the vocabulary
    page: np.ndarray  # int64, the page index of each token
    pages: int


def encode_tokens(token_lists: Sequence[Sequence[str]], vocabulary: dict[str, int], *, grow: bool) -> TokenIds:
    """Map every token to its vocabulary id in one pass, so all counting after this is numpy.

    With `grow`, unseen words are added to `vocabulary` (ids in first-seen
    order); without it they become -1.
    """
    flat = list(chain.from_iterable(token_lists))
    if grow:
        for w in dict.fromkeys(flat):  # distinct words, first-seen order
            if w not in vocabulary:
                vocabulary[w] = len(vocabulary)
        ids = list(map(vocabulary.__getitem__, flat))
    else:
        ids = list(map(vocabulary.get, flat, repeat(-1)))
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    return TokenIds(
        np.asarray(ids, dtype=np.int64),
        np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths),
        len(token_lists),
    )


def rank_features(vocabulary: dict[str, int], counts: np.ndarray, n: int, stopwords: Iterable[str] = ()) -> np.ndarray:
    """Ids of the `n` most frequent non-stopwords, ties broken in dictionary order.

    `counts[i]` is the frequency of the word with id i. Words are lower-case
    ASCII, so comparing Python strings is the byte (strcmp) order the course
    means by dictionary order. Only words frequent enough to reach the top `n`
    are sorted by name.
    """
    if n < 1:
        raise ParameterError(f"the number of features must be at least 1, got {n}")
    counts = np.array(counts, dtype=np.int64)  # a copy: stopwords are masked below
    stop = [vocabulary[w] for w in set(stopwords) if w in vocabulary]
    counts[stop] = -1
    eligible = np.flatnonzero(counts > 0)
    if eligible.size > n:
        # Everything tied with the n-th largest count must take part in the tie-break.
        cut = np.partition(counts[eligible], eligible.size - n)[eligible.size - n]
        eligible = eligible[counts[eligible] >= cut]
    words = words_by_id(vocabulary)
    freq = counts.tolist()
    order = sorted(eligible.tolist(), key=lambda i: (-freq[i], words[i]))
    return np.asarray(order[:n], dtype=np.int64)


def words_by_id(vocabulary: dict[str, int]) -> list[str]:
    """The vocabulary's words listed by their ids."""
    words = [""] * (max(vocabulary.values(), default=-1) + 1)
    for w, i in vocabulary.items():
        words[i] = w
    return words


def feature_counts(tokens: TokenIds, feature_ids: np.ndarray) -> np.ndarray:
    """The pages x features count matrix (int32), from one `bincount` over (page, feature) cells."""
    k = len(feature_ids)
    # column[id] = the feature's column, or -1; one spare last slot so that id -1 maps to -1
    size = max(int(tokens.ids.max(initial=-1)), int(np.max(feature_ids, initial=-1))) + 2
    column = np.full(size, -1, np.int64)
    column[feature_ids] = np.arange(k)
    f = column[tokens.ids]
    keep = f >= 0
    cells = tokens.page[keep] * k + f[keep]
    return np.bincount(cells, minlength=tokens.pages * k).astype(np.int32).reshape(tokens.pages, k)


def select_features(token_lists: Sequence[Sequence[str]], n: int, stopwords: Iterable[str] = ()) -> list[str]:
    """The `n` most frequent non-stopwords over all pages, ties broken in dictionary order.

    Returns fewer than `n` words when the pages hold fewer distinct words.

    >>> select_features([["b", "a", "c"], ["c", "b", "the"]], 2, {"the"})
    ['b', 'c']
    """
    vocabulary: dict[str, int] = {}
    tokens = encode_tokens(token_lists, vocabulary, grow=True)
    counts = np.bincount(tokens.ids, minlength=len(vocabulary))
    words = words_by_id(vocabulary)
    return [words[i] for i in rank_features(vocabulary, counts, n, stopwords)]


def count_matrix(token_lists: Sequence[Sequence[str]], features: Sequence[str]) -> np.ndarray:
    """How often each feature word occurs in each page: an int32 array of pages x features.

    >>> count_matrix([["a", "b", "a"], ["c"]], ["a", "c"]).tolist()
    [[2, 0], [0, 1]]
    """
    vocabulary = {w: i for i, w in enumerate(features)}
    if len(vocabulary) != len(features):
        raise ParameterError("the feature list repeats a word; give each feature word once")
    tokens = encode_tokens(token_lists, vocabulary, grow=False)
    return feature_counts(tokens, np.arange(len(features), dtype=np.int64))


def simhash_bits(counts: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Simhash fingerprints: bit j is True iff sum_i counts[i] * table[i, j] > 0.

    `counts` is pages x K (feature weights), `table` is K x M of +1/-1 (the
    hash bit '1' read as +1, '0' as -1). A sum of exactly 0 gives bit 0, as the
    course's Sign(x) = 1 only for x > 0.

    Worked example, two features and three bits:
        weights   (3, 1)
        table row for word 1:  1 0 1  ->  +3 -3 +3
        table row for word 2:  0 0 1  ->  -1 -1 +1
        column sums                   ->  +2 -4 +4
        fingerprint                   ->   1  0  1
    and a page with weights (1, 1) sums to (0, -2, 2), so its first bit is 0.

    >>> simhash_bits(np.array([[3, 1], [1, 1]]), np.array([[1, -1, 1], [-1, -1, 1]])).astype(int).tolist()
    [[1, 0, 1], [0, 0, 1]]
    """
    counts = np.asarray(counts)
    table = np.asarray(table)
    if counts.ndim != 2 or table.ndim != 2 or counts.shape[1] != table.shape[0]:
        raise ParameterError(
            f"weights of shape {counts.shape} do not fit a hash table of shape {table.shape}; "
            "give one table row per feature"
        )
    # float64 matmul goes through BLAS and is exact for integer sums below 2**53.
    sums = counts.astype(np.float64) @ table.astype(np.float64)
    return sums > 0


def hamming_matrix(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Hamming distances between every row of `left` (a x M bools) and of `right` (b x M): a x b int.

    Two bits differ when one is 1 and the other 0, so the distance is
    left @ (1 - right).T + (1 - left) @ right.T: two matrix products and no
    a x b x M intermediate.

    >>> hamming_matrix(np.array([[1, 0, 1, 0, 1]], bool), np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 1]], bool)).tolist()
    [[3, 0]]
    """
    a = np.asarray(left, dtype=np.float32)
    b = np.asarray(right, dtype=np.float32)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ParameterError(
            f"fingerprints of shapes {a.shape} and {b.shape} cannot be compared; "
            "make both with the same number of bits"
        )
    d = a @ (1.0 - b).T + (1.0 - a) @ b.T
    return np.rint(d).astype(np.int32)
