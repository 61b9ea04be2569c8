"""The BUAA course mode's input files: pages, words and stopwords, and the 0/1 hash table.

What the assignment fixes about reading them:

* pages are separated by form feeds, and a page's first non-empty line is its id;
* a word is a maximal run of ASCII letters, lower-cased;
* stopwords are white-space separated (one per line in stopwords.txt);
* hashvalue.txt holds rows of 0 and 1 characters, one row per feature.

`load_hash_table` / `parse_hash_table` are kept general (any rows x columns
table of 0/1 characters) because the Simhash channel can use such a file as a
pluggable hash. Errors name the file, the line and what to do.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from fingerprint.errors import InputError, ParameterError

__all__ = ["ARTICLE_FILE", "HASH_FILE", "INPUT_FILES", "RESULT_FILE", "SAMPLE_FILE", "STOPWORDS_FILE", "Page",
           "find_course_files", "load_hash_table", "parse_hash_table", "parse_stopwords", "read_text",
           "split_pages", "tokenize_words"]

STOPWORDS_FILE = "stopwords.txt"
HASH_FILE = "hashvalue.txt"
ARTICLE_FILE = "article.txt"
SAMPLE_FILE = "sample.txt"
RESULT_FILE = "result.txt"
INPUT_FILES = (STOPWORDS_FILE, HASH_FILE, ARTICLE_FILE, SAMPLE_FILE)

# The course files are ASCII; other bytes are carried through unchanged
# (ids are written back exactly as read) instead of failing on decoding.
ENCODING = "utf-8"
ERRORS = "surrogateescape"
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
    return text.encode(ENCODING, "surrogatepass").translate(_LETTERS_ONLY).decode("ascii").split()


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
        data = data.encode(ENCODING, ERRORS)
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
            ch = row[col : col + 1].decode(ENCODING, "backslashreplace")
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
    return parse_hash_table(read_bytes(path), n, m, source=str(path.name))


# ----------------------------------------------------------------------------- the folder


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


def read_bytes(path: Path) -> bytes:
    """The bytes of a course file; a missing or unreadable file is an InputError that says what to do."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path.name} not found in {str(path.parent.resolve())!r}; put the file there") from None
    except OSError as e:
        raise InputError(f"cannot read {str(path)!r}: {e.strerror or e}; check that it is a readable file") from e


def read_text(path: Path) -> str:
    """A course file as text, undecodable bytes kept (surrogateescape) so ids are written back as read."""
    return read_bytes(path).decode(ENCODING, ERRORS)
