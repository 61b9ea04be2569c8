"""Turn the bytes of a reposted page or a downloaded novel into text: `decode`, total.

Chinese novel files arrive in UTF-8, GBK/GB18030, Big5 or Big5-HKSCS, often
without any label, and web pages frequently carry a wrong label. A wrong guess
does not fail loudly: it yields plausible-looking but different characters,
and every fingerprint computed from them is useless. So each guess is checked:
strict decoding first, and where several codecs decode the same bytes, the one
whose result reads most like real Chinese (share of common hanzi) wins.

This module holds the order in which the guesses are tried, and refuses binary
data; the guesses themselves are pagetext.encoding_detectors, and the charset
labels pagetext.charsets. Everything works on bytes already in memory and is
fast on 10 MB inputs: full decodes use the C codecs, and scoring and
charset-normalizer only look at samples.
"""
from __future__ import annotations

import codecs
from typing import NamedTuple

from fingerprint.errors import InputError
from pagetext.charsets import charset_codec, declared_charsets
from pagetext.encoding_detectors import (
    GOOD_SCORE,
    MAX_CONTROL_SHARE,
    MAX_REPLACED_SHARE,
    best_cjk,
    charset_normalizer_guess,
    cjk_score,
    mostly_cjk,
    mostly_utf8,
    replaced_count,
    try_declared,
    western,
    wide_unicode,
)

# declared_charsets, cjk_score and charset_codec live in pagetext.charsets and .encoding_detectors;
# callers import them from here as well.
__all__ = ["Decoded", "decode", "decode_bytes", "declared_charsets", "cjk_score", "charset_codec"]

# Bytes that never appear in text files; a few are tolerated (form feeds, ESC in
# terminal logs, DOS end-of-file) so only the clearly binary ones are counted.
_CONTROL_BYTES = bytes([*range(9), *range(14, 26), *range(28, 32), 127])
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)

_BOMS = (  # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Signatures of common binary formats, so the error can say what the file is.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or .docx/.epub)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"BZh", None),  # too short to trust alone; only with other binary signs
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\x7fELF", "an executable"),
    (b"MZ", None),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document"),
    (b"ID3", None),
)


class Decoded(NamedTuple):
    """Text decoded from bytes, the codec that did it, and how many bad bytes became U+FFFD."""

    text: str
    encoding: str
    replaced: int = 0


def decode_bytes(data: bytes, *, declared: str | None = None) -> tuple[str, str]:
    """Decode bytes to text; return (text, encoding name). Raises InputError for binary data.

    The name is a Python codec name ("utf-8", "gb18030", "big5hkscs", ...), or
    "<codec> (lossy)" when a few invalid bytes in otherwise good data were
    replaced with U+FFFD (`decode` also says how many). `declared` is an outside
    label (an HTTP header, a JSON field); labels inside the data (<meta charset>,
    <?xml encoding?>) are also read. Labels are trusted only when the bytes agree with them.
    """
    text, encoding, _ = decode(data, declared=declared)
    return text, encoding


def decode(data: bytes, *, declared: str | None = None) -> Decoded:
    """decode_bytes, with the count of bad bytes replaced by U+FFFD (0 for a strict decode)."""
    if not data:
        return Decoded("", "utf-8")
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data[len(bom):].decode("utf-8" if name == "utf-8-sig" else name), name)
            except UnicodeDecodeError:
                break  # a BOM followed by garbage: judge the bytes on their own
    wide = wide_unicode(data, declared)
    if wide:
        return Decoded(*wide)
    _reject_binary(data)
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass

    scored: dict[str, tuple[float, str]] = {}  # codec -> (score, text), so nothing is decoded twice
    for label in declared_charsets(data, declared):
        found = try_declared(data, label, scored)
        if found:
            return Decoded(*found)

    lossy = mostly_utf8(data)
    if lossy is not None:
        return Decoded(lossy, "utf-8 (lossy)", replaced_count(lossy, data, "utf-8"))

    best = best_cjk(data, scored)
    if best and best[0] >= GOOD_SCORE:
        return Decoded(best[2], best[1])
    damaged = mostly_cjk(data)
    if damaged is not None:
        return Decoded(*damaged)

    latin = western(data)
    if latin is not None:
        return Decoded(latin, "cp1252")
    guessed = charset_normalizer_guess(data)
    if guessed:
        return Decoded(*guessed)
    if best and best[0] >= 0.5:  # weak, but better than replacement characters
        return Decoded(best[2], best[1])

    text = data.decode("utf-8", errors="replace")
    bad = replaced_count(text, data, "utf-8")
    if bad <= MAX_REPLACED_SHARE * max(len(text), 1):
        return Decoded(text, "utf-8 (lossy)", bad)
    raise InputError(
        f"unknown encoding: {bad * 100 / len(text):.0f}% of the data is not valid UTF-8, GB18030 or Big5 "
        "(or it is binary); convert it to UTF-8 with iconv -f <its encoding> -t UTF-8"
    )


def _reject_binary(data: bytes) -> None:
    """Raise InputError when the bytes are a known binary format, contain NULs, or many control bytes."""
    what = None
    for magic, name in _MAGIC:
        if name and data.startswith(magic):
            what = name
            break
    if what is None:
        if b"\x00" in data:
            what = "binary data (it contains NUL bytes)"
        else:
            controls = len(data.translate(None, _NOT_CONTROL))  # delete all but control bytes
            if controls > max(MAX_CONTROL_SHARE * len(data), 3):  # one stray byte is not binary
                what = f"binary data ({controls * 100 / len(data):.1f}% control bytes)"
    if what:
        raise InputError(
            f"binary: the data looks like {what}, not text; give a text, HTML or JSON Lines file "
            "(convert documents to UTF-8 text first, e.g. with pdftotext or iconv -f <encoding> -t UTF-8)"
        )
