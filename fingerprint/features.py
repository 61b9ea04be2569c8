"""Features for fingerprints: words, character n-grams, stopwords, synonyms and TF-IDF weights.

Li, Mao and Chen (2013) make a text's features by segmenting it into words,
dropping stopwords and weighting each word by its frequency; the semantic
fingerprint keeps the top-n TF-IDF keywords. These functions work on a
`NormalizedText` (fingerprint.normalize), whose tokens are CJK characters and
whole Latin words or numbers, or on a plain string.
"""
from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from fingerprint.errors import InputError, ParameterError
from fingerprint.normalize import CJK, NormalizedText, normalize

BUILTIN_STOPWORDS = {"zh": "stopwords_zh.txt"}
_EN_WORD = re.compile(r"[A-Za-z]+")
_jieba = None
_jieba_lock = threading.Lock()


def _segmenter():
    """jieba, imported and its dictionary loaded once per process (about a second)."""
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import logging

                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def _as_normalized(text: str | NormalizedText) -> NormalizedText:
    if isinstance(text, NormalizedText):
        return text
    if isinstance(text, str):
        return normalize(text)
    raise InputError(f"expected text (str) or a NormalizedText, got {type(text).__name__}")


def cjk_runs(text: str | NormalizedText) -> list[tuple[bool, str]]:
    """The text's tokens grouped into (is_cjk, string) runs: CJK character runs and single words."""
    nt = _as_normalized(text)
    strings = nt.token_strings()
    starts = _token_unit_kinds(nt)
    runs: list[tuple[bool, str]] = []
    buf: list[str] = []
    for s, k in zip(strings, starts):
        if k == CJK:
            buf.append(s)
            continue
        if buf:
            runs.append((True, "".join(buf)))
            buf = []
        runs.append((False, s))
    if buf:
        runs.append((True, "".join(buf)))
    return runs


def _token_unit_kinds(nt: NormalizedText) -> list[int]:
    """The kind of each token's first unit (a word token's units share one kind)."""
    if len(nt) == 0:
        return []
    first = np.searchsorted(nt.unit_pos, nt.tok_start)
    return nt.kinds[first].tolist()


def words(text: str | NormalizedText, *, hmm: bool = True, synonyms: Mapping[str, str] | None = None) -> list[str]:
    """Words in text order: CJK runs segmented with jieba, Latin words and numbers as they are.

    With `synonyms`, each variant is replaced by its canonical form in the text before
    segmentation (so a phrase the segmenter would split, like 华联商厦, still maps) and
    each word after it.

    >>> words("我爱北京天安门")
    ['我', '爱', '北京', '天安门']
    """
    jieba = None
    sub = _synonym_sub(synonyms)
    out: list[str] = []
    for is_cjk, s in cjk_runs(text):
        if is_cjk:
            jieba = jieba or _segmenter()
            out.extend(jieba.lcut(sub(s) if sub else s, HMM=hmm))
        else:
            out.append(s)
    return apply_synonyms(out, synonyms)


def _synonym_sub(synonyms: Mapping[str, str] | None):
    """A function replacing every multi-character variant in a string, longest first."""
    if not synonyms:
        return None
    long = sorted((w for w in synonyms if len(w) > 1 and w != synonyms[w]), key=len, reverse=True)
    if not long:
        return None
    pattern = re.compile("|".join(map(re.escape, long)))
    return lambda s: pattern.sub(lambda m: synonyms[m.group(0)], s)


def char_ngrams(text: str | NormalizedText, n: int = 2) -> list[str]:
    """Overlapping n-grams of CJK characters, within CJK runs (a run shorter than n gives itself).

    >>> char_ngrams("天地玄黄", 2)
    ['天地', '地玄', '玄黄']
    """
    if n < 1:
        raise ParameterError(f"n-gram length must be at least 1, got {n}")
    out: list[str] = []
    for is_cjk, s in cjk_runs(text):
        if not is_cjk:
            continue
        if len(s) < n:
            out.append(s)
        else:
            out.extend(s[i : i + n] for i in range(len(s) - n + 1))
    return out


def english_words(text: str | NormalizedText) -> list[str]:
    """Runs of ASCII letters, lower-cased, in text order.

    >>> english_words("The Great Gatsby, 1925")
    ['the', 'great', 'gatsby']
    """
    if isinstance(text, NormalizedText):
        return [w for _, w in sorted(text.words.items()) if w.isascii() and w.isalpha()]
    if not isinstance(text, str):
        raise InputError(f"expected text (str) or a NormalizedText, got {type(text).__name__}")
    return [w.lower() for w in _EN_WORD.findall(text)]


def _read_lines(path: Path, what: str) -> list[str]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} file {str(path)!r} not found; check the path") from None
    except OSError as e:
        raise InputError(f"cannot read {what} file {str(path)!r}: {e.strerror}; check its permissions") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(
            f"{what} file {str(path)!r} is not UTF-8 (byte {e.start}); re-save it as UTF-8, one entry per line"
        ) from None
    return text.splitlines()


def load_stopwords(*sources: str | Path) -> frozenset[str]:
    """Stopwords from files (UTF-8, one word per line, # comments) and built-in lists ("zh").

    With no argument, the built-in Chinese list of function words. English words
    are lower-cased so they match `english_words`.
    """
    if not sources:
        sources = ("zh",)
    out: set[str] = set()
    for src in sources:
        if isinstance(src, str) and src in BUILTIN_STOPWORDS:
            text = resources.files("fingerprint.data").joinpath(BUILTIN_STOPWORDS[src]).read_text("utf-8")
            lines = text.splitlines()
        else:
            p = Path(src)
            if not p.is_file() and not p.suffix and isinstance(src, str) and "/" not in src:
                raise InputError(
                    f"no stopword list named {src!r}; pass a file path "
                    f"or a built-in list: {', '.join(sorted(BUILTIN_STOPWORDS))}"
                )
            lines = _read_lines(p, "stopword")
        for line in lines:
            w = line.strip()
            if w and not w.startswith("#"):
                out.add(w.lower())
    return frozenset(out)


def load_synonyms(path: str | Path) -> dict[str, str]:
    """A synonym map {word: canonical} from a two-column file (tab, comma or space separated).

    Each line is `word canonical`; blank lines and # comments are skipped.
    """
    out: dict[str, str] = {}
    for i, line in enumerate(_read_lines(Path(path), "synonym"), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        cols = [c for c in re.split(r"[\t,\s]+", s) if c]
        if len(cols) != 2:
            raise InputError(
                f"synonym file {str(path)!r} line {i} has {len(cols)} columns; write 'word canonical', two per line"
            )
        out[cols[0]] = cols[1]
    return out


def apply_synonyms(tokens: Iterable[str], synonyms: Mapping[str, str] | None) -> list[str]:
    """Replace each word by its canonical synonym, so 北京华联 and 华联商厦 count as one feature."""
    if not synonyms:
        return list(tokens)
    return [synonyms.get(t, t) for t in tokens]


def feature_words(
    text: str | NormalizedText,
    *,
    stopwords: Iterable[str] | None = None,
    synonyms: Mapping[str, str] | None = None,
    min_len: int = 1,
) -> list[str]:
    """Li, Mao and Chen's features: segmented words, synonyms mapped, stopwords and short words dropped.

    `stopwords=None` uses the built-in Chinese list; pass an empty set to keep every word.
    """
    stop = load_stopwords() if stopwords is None else frozenset(stopwords)
    out = words(text, synonyms=synonyms)
    return [w for w in out if len(w) >= min_len and w not in stop]


def term_frequencies(tokens: Iterable[str], *, relative: bool = False) -> dict[str, float]:
    """Counts of each term (TF), or counts divided by the total with `relative=True`."""
    c = Counter(tokens)
    if not relative:
        return dict(c)
    total = sum(c.values())
    return {w: n / total for w, n in c.items()} if total else {}


def top_keywords(weights: Mapping[str, float], n: int = 8) -> list[str]:
    """The n heaviest terms, heaviest first; ties broken by the term, so the result is stable."""
    if n < 1:
        raise ParameterError(f"n (number of keywords) must be at least 1, got {n}")
    return [w for w, _ in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


class TfIdf:
    """Document frequencies of a collection, and TF-IDF weights of a document against them.

    idf(w) = ln((1 + N) / (1 + df(w))) + 1 (smoothed, so unseen words get the largest idf
    and a word in every document keeps a weight of 1).
    """

    def __init__(self) -> None:
        self.n_docs = 0
        self.df: Counter[str] = Counter()

    def fit(self, docs: Iterable[Sequence[str]]) -> TfIdf:
        """Count, for each term, the documents (term lists) it occurs in. Adds to earlier fits."""
        for doc in docs:
            if isinstance(doc, str):
                raise ParameterError("fit() takes documents as lists of terms; split each text with words() first")
            self.df.update(set(doc))
            self.n_docs += 1
        return self

    def idf(self, term: str) -> float:
        return math.log((1 + self.n_docs) / (1 + self.df.get(term, 0))) + 1.0

    def weights(self, doc: Sequence[str]) -> dict[str, float]:
        """TF-IDF of each term of a document: relative term frequency times idf."""
        if isinstance(doc, str):
            raise ParameterError("weights() takes a document as a list of terms; split the text with words() first")
        return {w: tf * self.idf(w) for w, tf in term_frequencies(doc, relative=True).items()}

    def top_keywords(self, doc: Sequence[str], n: int = 8) -> list[str]:
        return top_keywords(self.weights(doc), n)

    def to_dict(self) -> dict:
        return {"n_docs": self.n_docs, "df": dict(self.df)}

    @classmethod
    def from_dict(cls, d: Mapping) -> TfIdf:
        try:
            m = cls()
            m.n_docs = int(d["n_docs"])
            m.df = Counter({str(k): int(v) for k, v in d["df"].items()})
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(f"not a TF-IDF model ({e}); expected n_docs and df as written by to_dict()") from None
        return m
