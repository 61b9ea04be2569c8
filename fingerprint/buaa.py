"""The BUAA data-structures course mode: `simtool N M` (Simhash web-page similarity).

The course assignment fixes every detail, and its expected output is compared
byte for byte, so this module follows it literally rather than reusing the
engine's Chinese-text channels:

* a word is a maximal run of ASCII letters, lower-cased; stopwords are dropped;
* the feature vector is the N most frequent words of the whole article.txt,
  ties broken in dictionary order;
* a page's weight for feature i is how often that word occurs in the page;
* bit j of a fingerprint is 1 iff sum_i (+w_i if table[i][j] == '1' else -w_i) > 0,
  where the table is the first N rows and first M columns of hashvalue.txt;
* pages are separated by form feeds, and a page's first non-empty line is its id;
* for each sample, the article pages at Hamming distance 0..3 are listed.

Everything is computed on whole matrices: a pages x N count matrix, one matrix
product with the +-1 table, and one matrix product for all Hamming distances.

`load_hash_table` / `parse_hash_table` are kept general (any rows x columns
table of 0/1 characters) because the Simhash channel can use such a file as a
pluggable hash.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .errors import InputError, ParameterError

#: The course data fix these limits: hashvalue.txt holds 10000 rows of 128 columns.
MAX_N = 10000
MAX_M = 128
#: Pages whose fingerprints differ in at most this many bits count as similar.
MAX_DISTANCE = 3

STOPWORDS_FILE = "stopwords.txt"
HASH_FILE = "hashvalue.txt"
ARTICLE_FILE = "article.txt"
SAMPLE_FILE = "sample.txt"
RESULT_FILE = "result.txt"
INPUT_FILES = (STOPWORDS_FILE, HASH_FILE, ARTICLE_FILE, SAMPLE_FILE)

# The course files are ASCII; other bytes are carried through unchanged
# (ids are written back exactly as read) instead of failing on decoding.
_ENCODING = "utf-8"
_ERRORS = "surrogateescape"
# Byte table: A-Z -> a-z, a-z kept, every other byte (UTF-8 lead/continuation bytes too) -> space.
_LETTERS_ONLY = bytes(c | 0x20 if 65 <= c <= 90 or 97 <= c <= 122 else 32 for c in range(256))


class Page(NamedTuple):
    """One page of article.txt or sample.txt: its id line and the text after it."""

    id: str
    body: str


# ----------------------------------------------------------------------------- text


def tokenize_words(text: str) -> list[str]:
    """The words of `text`: maximal runs of ASCII letters, lower-cased.

    Digits, punctuation and non-ASCII letters all end a word, as the course's
    definition ("a string made only of letters") requires. Only ASCII letters
    are ever lower-cased, so a non-ASCII letter whose lower case is ASCII (the
    Kelvin sign, dotted capital I) can never turn into a word.

    Done as one byte translation (letters to lower case, every other byte to a
    space) and a split, about three times faster than a regular expression.
    Any surrogate code point (e.g. from a file decoded with surrogateescape)
    becomes non-ASCII bytes and so just ends a word.

    >>> tokenize_words("Don't PANIC: 42 towels, café")
    ['don', 't', 'panic', 'towels', 'caf']
    """
    return text.encode(_ENCODING, "surrogatepass").translate(_LETTERS_ONLY).decode("ascii").split()


def split_pages(text: str) -> list[Page]:
    """Split a course data file into pages: form-feed separated, id on the first non-empty line.

    Pages with no non-empty line are dropped: sample.txt as the course ships it
    ends with a form feed, which would otherwise make an empty last page. The id
    is stripped of surrounding white space (a CR from a Windows copy included);
    the body is everything after the id line and is not re-indented.

    >>> split_pages("\\n1-1\\nHello world\\n\\f1-2\\nBye\\n\\f")
    [Page(id='1-1', body='Hello world\\n'), Page(id='1-2', body='Bye\\n')]
    """
    pages = []
    for chunk in text.split("\f"):
        start = 0
        while True:
            end = chunk.find("\n", start)
            line = chunk[start:] if end < 0 else chunk[start:end]
            if line.strip():
                body = "" if end < 0 else chunk[end + 1 :]
                pages.append(Page(line.strip(), body))
                break
            if end < 0:
                break
            start = end + 1
    return pages


def parse_stopwords(text: str) -> frozenset[str]:
    """Stopwords from white-space separated text (one per line in the course file), lower-cased."""
    return frozenset(w.lower() for w in text.split())


# ----------------------------------------------------------------------------- features


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
    words = _words_by_id(vocabulary)
    freq = counts.tolist()
    order = sorted(eligible.tolist(), key=lambda i: (-freq[i], words[i]))
    return np.asarray(order[:n], dtype=np.int64)


def _words_by_id(vocabulary: dict[str, int]) -> list[str]:
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
    words = _words_by_id(vocabulary)
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


# ----------------------------------------------------------------------------- the 0/1 table


def parse_hash_table(data: bytes | str, n: int | None = None, m: int | None = None, *, source: str = HASH_FILE) -> np.ndarray:
    """Parse a table of '0'/'1' rows into an int8 array of +1/-1 ('1' -> +1, '0' -> -1), n x m.

    Uses the first `n` rows (all rows if None) and the first `m` columns of each
    (the first row's width if None). Trailing white space and a CR at line ends
    are ignored. Every used row must be made only of 0 and 1, over its whole
    length, and be at least `m` long; errors name `source` and the line number.

    Example: the rows "1011" and "0110" with n=2, m=3 give
        [[ 1, -1,  1],
         [-1,  1,  1]]
    >>> parse_hash_table(b"1011\\n0110\\n", 2, 3).tolist()
    [[1, -1, 1], [-1, 1, 1]]
    """
    if isinstance(data, str):
        data = data.encode(_ENCODING, _ERRORS)
    if n is not None and n < 1:
        raise ParameterError(f"the number of hash table rows must be at least 1, got {n}")
    if m is not None and m < 1:
        raise ParameterError(f"the number of hash table columns must be at least 1, got {m}")
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()  # the piece after the final newline
    if n is None:
        n = len(lines)
        if n == 0:
            raise InputError(f"{source} is empty; it must hold rows of 0 and 1, one per line")
    if len(lines) < n:
        raise InputError(
            f"{source} has only {len(lines)} rows but {n} are needed (one per feature); "
            f"use at most {len(lines)} features or a larger table"
        )
    rows = [line.rstrip() for line in lines[:n]]
    if m is None:
        m = len(rows[0])
        if m == 0:
            raise InputError(f"{source} line 1 is empty; every row must hold 0 and 1 characters")
    for i, row in enumerate(rows):
        bad = row.translate(None, b"01")
        if bad:
            col = next(c for c, ch in enumerate(row) if ch not in b"01")
            ch = row[col : col + 1].decode(_ENCODING, "backslashreplace")
            raise InputError(
                f"{source} line {i + 1}, column {col + 1}: found {ch!r}; "
                "every row must contain only the characters 0 and 1"
            )
        if len(row) < m:
            what = "is empty" if not row else f"has only {len(row)} columns"
            raise InputError(
                f"{source} line {i + 1} {what} but {m} are needed (the fingerprint length); "
                "fix that line or use fewer bits"
            )
    flat = np.frombuffer(b"".join(row[:m] for row in rows), dtype=np.uint8).reshape(n, m)
    # '1' (49) -> +1, '0' (48) -> -1
    return (flat.astype(np.int8) - 48) * 2 - 1


def load_hash_table(path: str | Path, n: int | None = None, m: int | None = None) -> np.ndarray:
    """Read a 0/1 table file such as hashvalue.txt into an n x m int8 array of +1/-1.

    See `parse_hash_table` for the format and the checks made.
    """
    path = Path(path)
    return parse_hash_table(_read_bytes(path), n, m, source=str(path.name))


# ----------------------------------------------------------------------------- the course run


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
    words = _words_by_id(vocabulary)
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
        return self.text.encode(_ENCODING, _ERRORS)


def course_result(fps: CourseFingerprints, max_distance: int = MAX_DISTANCE) -> CourseResult:
    """Compare every sample with every article page and lay out the report."""
    dist = hamming_matrix(fps.sample_bits, fps.article_bits)
    blocks = [format_block(sid, fps.article_ids, dist[k], max_distance) for k, sid in enumerate(fps.sample_ids)]
    return CourseResult(text="".join(blocks), first_block=blocks[0] if blocks else "", blocks=blocks, fingerprints=fps)


def find_course_files(directory: str | Path) -> dict[str, Path]:
    """The four input files in `directory`; one error naming every missing file and the folder searched."""
    d = Path(directory)
    if not d.is_dir():
        raise InputError(
            f"the data folder {str(d)!r} does not exist or is not a folder; "
            f"run simtool in the folder holding {', '.join(INPUT_FILES)} or pass --dir PATH"
        )
    found = {name: d / name for name in INPUT_FILES}
    missing = [name for name, p in found.items() if not p.is_file()]
    if len(missing) == len(INPUT_FILES):
        raise InputError(
            f"none of the course files ({', '.join(INPUT_FILES)}) found in {str(d.resolve())!r}; "
            "run simtool in the folder that holds them, or pass --dir PATH"
        )
    if missing:
        raise InputError(
            f"{' and '.join(missing)} not found in {str(d.resolve())!r}; put "
            f"{'it' if len(missing) == 1 else 'them'} there next to the other course files, "
            "or pass --dir PATH to the folder that holds all four"
        )
    return found


def run_course(directory: str | Path, n: int, m: int, *, max_distance: int = MAX_DISTANCE) -> CourseResult:
    """`simtool N M` as a function: read the four course files in `directory`, return the report.

    Nothing is written; `write_result` saves `CourseResult.data`.
    """
    check_course_params(n, m)
    files = find_course_files(directory)
    article_text = _read_text(files[ARTICLE_FILE])
    articles = split_pages(article_text)
    if not articles:
        raise InputError(
            f"{ARTICLE_FILE} is empty: it must hold the existing pages, separated by form feeds (\\f), "
            "each starting with an id line such as 1-1"
        )
    samples = split_pages(_read_text(files[SAMPLE_FILE]))
    if not samples:
        raise InputError(
            f"{SAMPLE_FILE} holds no pages: it must hold the pages to check, separated by form feeds (\\f), "
            "each starting with an id line such as Sample-1"
        )
    stopwords = parse_stopwords(_read_text(files[STOPWORDS_FILE]))
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


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path.name} not found in {str(path.parent.resolve())!r}; put the file there") from None
    except OSError as e:
        raise InputError(f"cannot read {str(path)!r}: {e.strerror or e}; check that it is a readable file") from e


def _read_text(path: Path) -> str:
    return _read_bytes(path).decode(_ENCODING, _ERRORS)
