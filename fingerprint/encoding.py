"""Turn the bytes of a reposted page or a downloaded novel into text.

Chinese novel files arrive in UTF-8, GBK/GB18030, Big5 or Big5-HKSCS, often
without any label, and web pages frequently carry a wrong label. A wrong guess
does not fail loudly: it yields plausible-looking but different characters,
and every fingerprint computed from them is useless. So each guess is checked:
strict decoding first, and where several codecs decode the same bytes, the one
whose result reads most like real Chinese (share of common hanzi) wins.

Everything here works on bytes already in memory and is fast on 10 MB inputs:
full decodes use the C codecs, and scoring and charset-normalizer only look at
samples.
"""
from __future__ import annotations

import codecs
import logging
import re
from functools import lru_cache
from typing import NamedTuple

from .errors import InputError

__all__ = ["Decoded", "decode", "decode_bytes", "declared_charsets", "cjk_score"]

# Bytes that never appear in text files; a few are tolerated (form feeds, ESC in
# terminal logs, DOS end-of-file) so only the clearly binary ones are counted.
_CONTROL_BYTES = bytes([*range(0, 9), *range(14, 26), *range(28, 32), 127])
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)
_MAX_CONTROL_SHARE = 0.01  # above this share of control bytes the data is binary
_MAX_REPLACED_SHARE = 0.005  # lossy UTF-8 is accepted only below this share of bad bytes
_GOOD_SCORE = 0.8  # a CJK decode scoring below this is treated as a wrong guess
_SAMPLE = 64 * 1024  # bytes looked at by charset-normalizer and by scoring
_DECLARATION_WINDOW = 8192  # bytes searched for <meta charset> / <?xml encoding?>

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

_META_CHARSET = re.compile(rb"""<meta\b[^<>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml\b[^<>]*?\bencoding\s*=\s*["']\s*([A-Za-z0-9_.:\-]+)""", re.I)

# Labels seen on Chinese pages that Python does not know, or knows under another name.
_ALIASES = {
    "x-gbk": "gbk",
    "gb_2312-80": "gb2312",
    "gb_2312": "gb2312",
    "x-gb2312": "gb2312",
    "x-big5": "big5",
    "big5-hkscs": "big5hkscs",
    "x-sjis": "shift_jis",
    "windows-31j": "cp932",
    "unicode": "utf-16",
    "x-user-defined": "",
}
_NOT_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape", "idna", "punycode", "undefined", "utf-7",
                           "charmap"})
_GB_FAMILY = {"gb2312", "gbk", "gb18030"}
_BIG5_FAMILY = {"big5", "big5hkscs", "cp950"}


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
    wide = _wide_unicode(data, declared)
    if wide:
        return Decoded(*wide)
    _reject_binary(data)
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass

    scored: dict[str, tuple[float, str]] = {}  # codec -> (score, text), so nothing is decoded twice
    for label in declared_charsets(data, declared):
        found = _try_declared(data, label, scored)
        if found:
            return Decoded(*found)

    lossy = _mostly_utf8(data)
    if lossy is not None:
        return Decoded(lossy, "utf-8 (lossy)", _replaced(lossy, data, "utf-8"))

    best = _best_cjk(data, scored)
    if best and best[0] >= _GOOD_SCORE:
        return Decoded(best[2], best[1])
    damaged = _mostly_cjk(data)
    if damaged is not None:
        return damaged

    western = _western(data)
    if western is not None:
        return Decoded(western, "cp1252")
    guessed = _charset_normalizer_guess(data)
    if guessed:
        return Decoded(*guessed)
    if best and best[0] >= 0.5:  # weak, but better than replacement characters
        return Decoded(best[2], best[1])

    text = data.decode("utf-8", errors="replace")
    bad = _replaced(text, data, "utf-8")
    if bad <= _MAX_REPLACED_SHARE * max(len(text), 1):
        return Decoded(text, "utf-8 (lossy)", bad)
    raise InputError(
        f"unknown encoding: {bad * 100 / len(text):.0f}% of the data is not valid UTF-8, GB18030 or Big5 "
        "(or it is binary); convert it to UTF-8 with iconv -f <its encoding> -t UTF-8"
    )


def declared_charsets(data: bytes, declared: str | None = None) -> list[str]:
    """Charset labels for `data`: the outside label first, then <?xml encoding?> and <meta charset>.

    Only the first few KB are searched, as browsers do, so a 10 MB file costs nothing.
    """
    labels = [declared] if declared else []
    head = data[:_DECLARATION_WINDOW]
    m = _XML_ENCODING.search(head)
    if m:
        labels.append(m.group(1).decode("ascii"))
    labels += [m.group(1).decode("ascii") for m in _META_CHARSET.finditer(head)]
    out: list[str] = []
    for label in labels:
        label = label.strip().lower()
        if label and label not in out:
            out.append(label)
    return out


def cjk_score(text: str) -> float:
    """How much `text` reads like real Chinese: share of non-ASCII characters that are common.

    Common means one of the 3,755 level-1 GB2312 hanzi or the 5,401 common Big5
    hanzi, or CJK/full-width punctuation. Right decodes of Chinese novels score
    about 0.95-1.0; GBK read as Big5 or Big5 read as GB18030 score far lower
    because they turn into rare characters, kana and private-use code points.
    Text without non-ASCII characters scores 1.0 (nothing to disagree on).
    """
    import numpy as np

    # Vectorised over the code points (a loop over the characters in Python was most of a page's
    # decoding time); surrogatepass: a lone surrogate counts as a non-ASCII character, not common.
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    non_ascii = int(np.count_nonzero(codes > 0x7F))
    if not non_ascii:
        return 1.0
    return int(np.count_nonzero(_good_table()[codes])) / non_ascii


@lru_cache(maxsize=1)
def _good_chars() -> frozenset[str]:
    """The common hanzi and punctuation used by cjk_score, built once from the codecs themselves."""
    chars: set[str] = set()
    for lead in range(0xB0, 0xD8):  # GB2312 level 1: the 3,755 most used simplified hanzi
        for trail in range(0xA1, 0xFF):
            try:
                chars.add(bytes((lead, trail)).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    for lead in range(0xA4, 0xC7):  # Big5 A440-C67E: the 5,401 frequently used traditional hanzi
        for trail in (*range(0x40, 0x7F), *range(0xA1, 0xFF)):
            if (lead << 8 | trail) <= 0xC67E:
                try:
                    chars.add(bytes((lead, trail)).decode("big5"))
                except UnicodeDecodeError:
                    pass
    chars.update(chr(c) for c in range(0x3000, 0x3020))  # CJK punctuation: 、。〈〉《》「」『』【】
    chars.update(chr(c) for c in range(0xFF01, 0xFF5F))  # full-width ！，：；？ and letters
    chars.update("\u2014\u2015\u2018\u2019\u201c\u201d\u2026\u00b7\u2022\u00a0\u25cb\u203b")
    return frozenset(chars)


@lru_cache(maxsize=1)
def _good_table():
    """A boolean per code point: True for the common characters of _good_chars (all non-ASCII)."""
    import numpy as np

    table = np.zeros(0x110000, dtype=bool)
    table[np.fromiter(map(ord, _good_chars()), dtype=np.int64)] = True
    return table


def _score_sample(text: str) -> float:
    """Score the start, middle and end, so a long file costs a fixed amount."""
    n = _SAMPLE // 2
    if len(text) <= 3 * n:
        return cjk_score(text)
    mid = len(text) // 2
    return cjk_score(text[:n] + text[mid:mid + n] + text[-n:])


def _decode_scored(data: bytes, codec: str, scored: dict[str, tuple[float, str]]) -> tuple[float, str] | None:
    if codec not in scored:
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            return None
        scored[codec] = (_score_sample(text), text)
    return scored[codec]


def _try_declared(data: bytes, label: str, scored: dict[str, tuple[float, str]]) -> tuple[str, str] | None:
    """Decode with a declared charset, but only if the bytes agree with the declaration.

    GBK and GB2312 labels are read as GB18030 (a superset: pages labelled GBK
    often use characters only GB18030 has) and Big5 as Big5-HKSCS. Single-byte
    labels such as ISO-8859-1 decode any bytes, so they lose to a Chinese codec
    whose result reads like Chinese.
    """
    name = _codec_name(label)
    if not name or name.startswith(("utf-16", "utf-32")):
        return None  # handled before the binary check; here the data is byte-oriented
    if name in ("utf-8", "utf-8-sig"):
        return None  # strict UTF-8 already failed, so the label is wrong
    if name in _GB_FAMILY:
        tries = ["gb18030"]
    elif name in _BIG5_FAMILY:
        tries = list(dict.fromkeys([name, "big5hkscs", "cp950"]))
    else:
        tries = [name]
    for codec in tries:
        got = _decode_scored(data, codec, scored)
        if got is None:
            continue
        score, text = got
        if score >= _GOOD_SCORE:
            return text, codec
        best = _best_cjk(data, scored)
        if best and best[0] >= _GOOD_SCORE and best[0] > score:
            return best[2], best[1]  # the page lied: another codec reads as Chinese
        if not _is_multibyte_cjk(codec) and _control_share(text[:_SAMPLE]) <= _MAX_CONTROL_SHARE:
            return text, codec  # e.g. a real cp1252 or Shift-JIS page; low CJK score is expected
    return None


def _best_cjk(data: bytes, scored: dict[str, tuple[float, str]]) -> tuple[float, str, str] | None:
    """The better of a strict GB18030 and a strict Big5-HKSCS decode, by cjk_score (GB18030 on ties)."""
    best = None
    for codec in ("gb18030", "big5hkscs"):
        got = _decode_scored(data, codec, scored)
        if got and (best is None or got[0] > best[0]):
            best = (got[0], codec, got[1])
    return best


def _mostly_utf8(data: bytes) -> str | None:
    """UTF-8 with a few damaged bytes (a truncated download, one bad sector) is still UTF-8.

    Accepted when the invalid sequences are rare and clearly outnumbered by
    valid multi-byte characters; GBK or Big5 read as UTF-8 is nearly all invalid.
    """
    head = data[:_SAMPLE].decode("utf-8", errors="replace")
    if head.count("\ufffd") > 2 + _MAX_REPLACED_SHARE * len(head):
        return None  # cheap early exit: GBK or Big5 bytes fail here within the first 64 KB
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    if bad > _MAX_REPLACED_SHARE * len(text):
        return None
    non_ascii = len(text) - len(text.encode("ascii", errors="ignore")) - bad
    return text if non_ascii >= 10 * bad else None


def _mostly_cjk(data: bytes) -> Decoded | None:
    """GB18030 or Big5 with a few damaged bytes (a cut download, a stray byte) is still that codec.

    Accepted when the bad bytes are rare and the rest reads like Chinese; the better of
    the two by cjk_score wins, as for strict decodes.
    """
    best = None
    for codec in ("gb18030", "big5hkscs"):
        head = data[:_SAMPLE].decode(codec, errors="replace")
        if head.count("\ufffd") > 2 + _MAX_REPLACED_SHARE * len(head):
            continue  # cheap early exit, as in _mostly_utf8
        text = data.decode(codec, errors="replace")
        bad = _replaced(text, data, codec)
        if bad > _MAX_REPLACED_SHARE * len(text):
            continue
        score = _score_sample(text)
        if score >= _GOOD_SCORE and (best is None or score > best[0]):
            best = (score, Decoded(text, f"{codec} (lossy)", bad))
    return best[1] if best else None


# U+FFFD as each codec writes it: what a lossy decode finds without any damage.
_FFFD_BYTES = {"utf-8": "\ufffd".encode("utf-8"), "gb18030": "\ufffd".encode("gb18030")}


def _replaced(text: str, data: bytes, codec: str) -> int:
    """How many U+FFFD a lossy decode of `data` added (those encoded in the data were there before)."""
    found = text.count("\ufffd")
    if not found:
        return 0
    genuine = _FFFD_BYTES.get(codec)
    return found - (data.count(genuine) if genuine else 0)


def _western(data: bytes) -> str | None:
    """Mostly-ASCII data that is valid cp1252 is a Western text (an English book, say).

    Statistical detectors split such files between cp1250, cp1257, cp775 and
    Mac codecs because a few accented letters carry little evidence; cp1252 is
    by far the most common of them. Data that is mostly non-ASCII (Cyrillic,
    Greek, Chinese) never passes the 75% ASCII test.
    """
    sample = _non_ascii_sample(data)
    if len(sample.translate(None, _HIGH_BYTES)) < 0.75 * len(sample):
        return None
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return None


_HIGH_BYTES = bytes(range(0x80, 0x100))


_warned_missing: list[bool] = []
log = logging.getLogger(__name__)


def _charset_normalizer_guess(data: bytes) -> tuple[str, str] | None:
    """Ask charset-normalizer about a sample, then insist on a strict decode of everything."""
    try:
        from charset_normalizer import from_bytes
    except ImportError as e:  # a declared dependency: the built-in checks still cover Chinese text
        if not _warned_missing:
            _warned_missing.append(True)
            log.warning("charset-normalizer cannot be imported (%s): texts in non-CJK legacy encodings may be "
                        "refused. Reinstall fptrack's dependencies (scripts/bootstrap, or pip install fptrack).", e)
        return None
    try:
        results = from_bytes(_non_ascii_sample(data))
        best = results.best()
        if best is None:
            return None
        # Equally good guesses (cp1250 and cp1252 for English, say) go to the more common codec.
        ties = [m.encoding for m in results if m.chaos == best.chaos and m.coherence == best.coherence]
    except Exception:  # a third-party heuristic must never turn bad input into a traceback
        return None
    ranked = sorted(ties, key=lambda e: _PREFERRED.index(e) if e in _PREFERRED else len(_PREFERRED))
    for guess in [*ranked, best.encoding]:
        codec = _codec_name(guess)
        if not codec or codec.startswith(("utf-16", "utf-32")):
            continue
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        if _control_share(text[:_SAMPLE]) <= _MAX_CONTROL_SHARE:
            return text, codec
    return None


_PREFERRED = ["utf_8", "cp1252", "gb18030", "big5hkscs", "cp932", "euc_jp", "euc_kr", "cp949", "latin_1"]


def _non_ascii_sample(data: bytes) -> bytes:
    """At most about 64 KB of `data` that includes its non-ASCII bytes.

    An English text with a few accented words would otherwise look like plain
    ASCII in its first 64 KB. Pieces are cut at line breaks so that multi-byte
    characters are not split.
    """
    if len(data) <= _SAMPLE:
        return data
    parts = [data[: _SAMPLE // 4]]
    size, pos = len(parts[0]), _SAMPLE // 4
    for m in _HIGH_BYTE.finditer(data, pos):
        if size >= _SAMPLE:
            break
        if m.start() < pos:
            continue
        start = data.rfind(b"\n", max(pos, m.start() - 512), m.start()) + 1 or max(pos, m.start() - 512)
        end = data.find(b"\n", m.start(), m.start() + 2048)
        end = end + 1 if end >= 0 else min(len(data), m.start() + 2048)
        parts.append(data[start:end])
        size += end - start
        pos = end
    return b"".join(parts)


_HIGH_BYTE = re.compile(rb"[\x80-\xff]")


def _wide_unicode(data: bytes, declared: str | None) -> tuple[str, str] | None:
    """UTF-16/32 without a BOM: labelled so from outside, or visibly so (NULs in every other byte)."""
    candidates: list[tuple[str, bool]] = []  # (codec, found by sniffing rather than by a label)
    name = _codec_name(declared) if declared else ""
    if name.startswith(("utf-16", "utf-32")):
        candidates.append((name if name.endswith(("le", "be")) else name + "-le", False))
    if len(data) >= 4 and len(data) % 2 == 0 and b"\x00" in data[:_SAMPLE]:
        head = data[:_SAMPLE]
        even_nul, odd_nul = head[0::2].count(0), head[1::2].count(0)
        # ASCII characters put a NUL in the high byte, and hanzi such as U+4E00 one in the low
        # byte; real text never holds U+0000, so no aligned pair of NULs, and it must read right.
        no_zero_unit = all(m.start() % 2 for m in _NUL_PAIR.finditer(head))
        if no_zero_unit and odd_nul > even_nul:
            candidates.append(("utf-16-le", True))
        elif no_zero_unit and even_nul > odd_nul:
            candidates.append(("utf-16-be", True))
    for codec, sniffed in candidates:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        sample = text[:_SAMPLE]
        if "\x00" in sample or _control_share(sample) > _MAX_CONTROL_SHARE:
            continue
        if not sniffed or _plausible(sample):
            return text, codec
    return None


_NUL_PAIR = re.compile(rb"(?=\x00\x00)")


def _plausible(text: str) -> bool:
    """Mostly printable ASCII, whitespace, common hanzi and punctuation: what real text is made of."""
    good = _good_chars()
    ok = sum(1 for ch in text if " " <= ch <= "~" or ch in "\n\r\t" or ch in good)
    return ok >= 0.9 * len(text)


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
            if controls > max(_MAX_CONTROL_SHARE * len(data), 3):  # one stray byte is not binary
                what = f"binary data ({controls * 100 / len(data):.1f}% control bytes)"
    if what:
        raise InputError(
            f"binary: the data looks like {what}, not text; give a text, HTML or JSON Lines file "
            "(convert documents to UTF-8 text first, e.g. with pdftotext or iconv -f <encoding> -t UTF-8)"
        )


def _control_share(text: str) -> float:
    if not text:
        return 0.0
    n = sum(1 for ch in text if (ch < " " and ch not in "\t\n\r\f\v\x1b\x1a") or "\x7f" <= ch <= "\x9f")
    return n / len(text)


def charset_codec(label: str | None) -> str:
    """Python's codec for a charset label ("GBK" -> "gbk"), or "" when unknown or not a charset (base64)."""
    return _codec_name(label)


def _codec_name(label: str | None) -> str:
    """Python's canonical codec name for a charset label, or "" when unknown."""
    if not label:
        return ""
    label = label.strip().lower()
    label = _ALIASES.get(label, label)
    if not label:
        return ""
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError, UnicodeError):  # a label with NUL or surrogates, from a hostile header
        return ""
    # Python codecs that are not charsets: a page labelled unicode_escape must not turn its
    # backslashes into code points (lone surrogates among them), nor base64 into bytes.
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return ""
    return info.name


def _is_multibyte_cjk(codec: str) -> bool:
    return codec in _GB_FAMILY or codec in _BIG5_FAMILY
