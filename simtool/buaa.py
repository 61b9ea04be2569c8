"""The BUAA data-structures course mode: `simtool N M` (Simhash web-page similarity).

The course assignment fixes every detail, and its expected output is compared
byte for byte, so this mode follows it literally rather than reusing the
engine's Chinese-text channels:

* a word is a maximal run of ASCII letters, lower-cased; stopwords are dropped;
* the feature vector is the N most frequent words of the whole article.txt,
  ties broken in dictionary order;
* a page's weight for feature i is how often that word occurs in the page;
* bit j of a fingerprint is 1 iff sum_i (+w_i if table[i][j] == '1' else -w_i) > 0,
  where the table is the first N rows and first M columns of hashvalue.txt;
* pages are separated by form feeds, and a page's first non-empty line is its id;
* for each sample, the article pages at Hamming distance 0..3 are listed.

This module holds the run itself: N and M checked, every page fingerprinted,
each sample compared with every article page, and result.txt laid out and
written. Reading the four input files is simtool.buaa_files, and the
Simhash on whole matrices simtool.buaa_simhash; the names of both that
`simtool` and its tests use are importable from here too.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fingerprint.errors import InputError, ParameterError
from simtool.buaa_files import (
    ARTICLE_FILE,
    ENCODING,
    ERRORS,
    HASH_FILE,
    INPUT_FILES,
    RESULT_FILE,
    SAMPLE_FILE,
    STOPWORDS_FILE,
    Page,
    find_course_files,
    load_hash_table,
    parse_hash_table,
    parse_stopwords,
    read_text,
    split_pages,
    tokenize_words,
)
from simtool.buaa_simhash import (
    count_matrix,
    encode_tokens,
    feature_counts,
    hamming_matrix,
    rank_features,
    select_features,
    simhash_bits,
    words_by_id,
)

__all__ = [
    # the course run
    "MAX_DISTANCE", "MAX_M", "MAX_N", "CourseFingerprints", "CourseResult", "check_course_params",
    "course_fingerprints", "course_result", "format_block", "parse_course_int", "run_course", "write_result",
    # from simtool.buaa_files
    "ARTICLE_FILE", "HASH_FILE", "INPUT_FILES", "RESULT_FILE", "SAMPLE_FILE", "STOPWORDS_FILE", "Page",
    "find_course_files", "load_hash_table", "parse_hash_table", "parse_stopwords", "split_pages", "tokenize_words",
    # from simtool.buaa_simhash
    "count_matrix", "hamming_matrix", "select_features", "simhash_bits",
]

#: The course data fix these limits: hashvalue.txt holds 10000 rows of 128 columns.
MAX_N = 10000
MAX_M = 128
#: Pages whose fingerprints differ in at most this many bits count as similar.
MAX_DISTANCE = 3


def check_course_params(n: int, m: int) -> None:
    """Refuse N and M outside what the course's hash table can serve."""
    if not 1 <= n <= MAX_N:
        raise ParameterError(
            f"N (feature vector length) must be between 1 and {MAX_N}, got {n}; e.g. simtool 1000 16"
        )
    if not 1 <= m <= MAX_M:
        raise ParameterError(
            f"M (fingerprint length in bits) must be between 1 and {MAX_M}, got {m}; e.g. simtool 1000 16"
        )


def parse_course_int(value: str, name: str, limit: int, meaning: str) -> int:
    """Read N or M from the command line, with a message that says what is wrong and what to type."""
    try:
        number = int(value.strip())
    except ValueError:
        raise ParameterError(
            f"{name} ({meaning}) must be a whole number between 1 and {limit}, got {value!r}; "
            "e.g. simtool 1000 16"
        ) from None
    return number


@dataclass
class CourseFingerprints:
    """The features chosen and the fingerprints of every article and sample page."""

    features: list[str]
    article_ids: list[str]
    article_bits: np.ndarray  # articles x M, bool
    sample_ids: list[str]
    sample_bits: np.ndarray  # samples x M, bool


def course_fingerprints(
    articles: Sequence[Page], samples: Sequence[Page], stopwords: Iterable[str], table: np.ndarray
) -> CourseFingerprints:
    """Fingerprint article and sample pages the course's way.

    The features are the len(table) most frequent non-stopwords of the
    articles (fewer if the articles hold fewer distinct words, in which case
    only the first table rows are used). Sample pages never affect the choice.
    """
    table = np.asarray(table)
    if table.ndim != 2 or table.shape[0] < 1:
        raise ParameterError(f"the hash table must be a 2-D array with at least one row, got shape {table.shape}")
    vocabulary: dict[str, int] = {}
    article_tokens = encode_tokens([tokenize_words(p.body) for p in articles], vocabulary, grow=True)
    sample_tokens = encode_tokens([tokenize_words(p.body) for p in samples], vocabulary, grow=False)
    counts = np.bincount(article_tokens.ids, minlength=len(vocabulary))
    feature_ids = rank_features(vocabulary, counts, table.shape[0], stopwords)
    words = words_by_id(vocabulary)
    used = table[: len(feature_ids)]
    return CourseFingerprints(
        features=[words[i] for i in feature_ids],
        article_ids=[p.id for p in articles],
        article_bits=simhash_bits(feature_counts(article_tokens, feature_ids), used),
        sample_ids=[p.id for p in samples],
        sample_bits=simhash_bits(feature_counts(sample_tokens, feature_ids), used),
    )


def format_block(sample_id: str, article_ids: Sequence[str], distances: np.ndarray, max_distance: int = MAX_DISTANCE) -> str:
    """One sample's report: its id, then `d:ID ID ... ` for each distance d with any page.

    Ids keep their article order and each is followed by one space; LF line ends.

    >>> format_block("S-1", ["1-1", "1-2", "1-3"], np.array([2, 0, 2]))
    'S-1\\n0:1-2 \\n2:1-1 1-3 \\n'
    """
    distances = np.asarray(distances)
    lines = [sample_id]
    for d in range(max_distance + 1):
        hits = np.flatnonzero(distances == d)
        if hits.size:
            lines.append(f"{d}:" + "".join(article_ids[i] + " " for i in hits))
    return "\n".join(lines) + "\n"


@dataclass
class CourseResult:
    """What `simtool N M` produces: the whole result.txt text and the first sample's block."""

    text: str
    first_block: str
    blocks: list[str]
    fingerprints: CourseFingerprints

    @property
    def data(self) -> bytes:
        """result.txt exactly as it is written (ids' original bytes kept)."""
        return self.text.encode(ENCODING, ERRORS)


def course_result(fps: CourseFingerprints, max_distance: int = MAX_DISTANCE) -> CourseResult:
    """Compare every sample with every article page and lay out the report."""
    dist = hamming_matrix(fps.sample_bits, fps.article_bits)
    blocks = [format_block(sid, fps.article_ids, dist[k], max_distance) for k, sid in enumerate(fps.sample_ids)]
    return CourseResult(text="".join(blocks), first_block=blocks[0] if blocks else "", blocks=blocks, fingerprints=fps)


def run_course(directory: str | Path, n: int, m: int, *, max_distance: int = MAX_DISTANCE) -> CourseResult:
    """`simtool N M` as a function: read the four course files in `directory`, return the report.

    Nothing is written; `write_result` saves `CourseResult.data`.
    """
    check_course_params(n, m)
    files = find_course_files(directory)
    article_text = read_text(files[ARTICLE_FILE])
    articles = split_pages(article_text)
    if not articles:
        raise InputError(
            f"{ARTICLE_FILE} is empty: it must hold the existing pages, separated by form feeds (\\f), "
            "each starting with an id line such as 1-1"
        )
    samples = split_pages(read_text(files[SAMPLE_FILE]))
    if not samples:
        raise InputError(
            f"{SAMPLE_FILE} holds no pages: it must hold the pages to check, separated by form feeds (\\f), "
            "each starting with an id line such as Sample-1"
        )
    stopwords = parse_stopwords(read_text(files[STOPWORDS_FILE]))
    table = load_hash_table(files[HASH_FILE], n, m)
    return course_result(course_fingerprints(articles, samples, stopwords, table), max_distance)


def write_result(path: str | Path, result: CourseResult) -> Path:
    """Write result.txt (LF line ends, bytes exactly as in `result.data`)."""
    path = Path(path)
    try:
        path.write_bytes(result.data)
    except OSError as e:
        raise InputError(f"cannot write {str(path)!r}: {e.strerror or e}; choose another place with --output PATH") from e
    return path
