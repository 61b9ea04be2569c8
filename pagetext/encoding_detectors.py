"""The detectors behind pagetext.encoding.decode, and the score that judges their decodes.

Each detector tries one kind of text (UTF-16/32 without a BOM, a declared
charset, UTF-8 or GB18030/Big5 with a few damaged bytes, a Western cp1252 text,
charset-normalizer's guess) and returns its decode only when the result holds
up; `cjk_score` says how much a decode reads like real Chinese. Scoring and
charset-normalizer only look at samples, so a 10 MB input costs a fixed amount.
"""
from __future__ import annotations

import logging
import re
from functools import lru_cache

from pagetext.charsets import BIG5_FAMILY, GB_FAMILY, charset_codec, is_multibyte_cjk

__all__ = ["GOOD_SCORE", "MAX_CONTROL_SHARE", "MAX_REPLACED_SHARE", "best_cjk", "charset_normalizer_guess",
           "cjk_score", "mostly_cjk", "mostly_utf8", "replaced_count", "try_declared", "western", "wide_unicode"]

MAX_CONTROL_SHARE = 0.01  # above this share of control bytes the data is binary
MAX_REPLACED_SHARE = 0.005  # lossy UTF-8 is accepted only below this share of bad bytes
GOOD_SCORE = 0.8  # a CJK decode scoring below this is treated as a wrong guess
_SAMPLE = 64 * 1024  # bytes looked at by charset-normalizer and by scoring


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


def try_declared(data: bytes, label: str, scored: dict[str, tuple[float, str]]) -> tuple[str, str] | None:
    """Decode with a declared charset, but only if the bytes agree with the declaration.

    GBK and GB2312 labels are read as GB18030 (a superset: pages labelled GBK
    often use characters only GB18030 has) and Big5 as Big5-HKSCS. Single-byte
    labels such as ISO-8859-1 decode any bytes, so they lose to a Chinese codec
    whose result reads like Chinese.
    """
    name = charset_codec(label)
    if not name or name.startswith(("utf-16", "utf-32")):
        return None  # handled before the binary check; here the data is byte-oriented
    if name in ("utf-8", "utf-8-sig"):
        return None  # strict UTF-8 already failed, so the label is wrong
    if name in GB_FAMILY:
        tries = ["gb18030"]
    elif name in BIG5_FAMILY:
        tries = list(dict.fromkeys([name, "big5hkscs", "cp950"]))
    else:
        tries = [name]
    for codec in tries:
        got = _decode_scored(data, codec, scored)
        if got is None:
            continue
        score, text = got
        if score >= GOOD_SCORE:
            return text, codec
        best = best_cjk(data, scored)
        if best and best[0] >= GOOD_SCORE and best[0] > score:
            return best[2], best[1]  # the page lied: another codec reads as Chinese
        if not is_multibyte_cjk(codec) and _control_share(text[:_SAMPLE]) <= MAX_CONTROL_SHARE:
            return text, codec  # e.g. a real cp1252 or Shift-JIS page; low CJK score is expected
    return None


def best_cjk(data: bytes, scored: dict[str, tuple[float, str]]) -> tuple[float, str, str] | None:
    """The better of a strict GB18030 and a strict Big5-HKSCS decode, by cjk_score (GB18030 on ties)."""
    best = None
    for codec in ("gb18030", "big5hkscs"):
        got = _decode_scored(data, codec, scored)
        if got and (best is None or got[0] > best[0]):
            best = (got[0], codec, got[1])
    return best


def mostly_utf8(data: bytes) -> str | None:
    """UTF-8 with a few damaged bytes (a truncated download, one bad sector) is still UTF-8.

    Accepted when the invalid sequences are rare and clearly outnumbered by
    valid multi-byte characters; GBK or Big5 read as UTF-8 is nearly all invalid.
    """
    head = data[:_SAMPLE].decode("utf-8", errors="replace")
    if head.count("\ufffd") > 2 + MAX_REPLACED_SHARE * len(head):
        return None  # cheap early exit: GBK or Big5 bytes fail here within the first 64 KB
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    if bad > MAX_REPLACED_SHARE * len(text):
        return None
    non_ascii = len(text) - len(text.encode("ascii", errors="ignore")) - bad
    return text if non_ascii >= 10 * bad else None


def mostly_cjk(data: bytes) -> tuple[str, str, int] | None:
    """GB18030 or Big5 with a few damaged bytes (a cut download, a stray byte) is still that codec.

    Accepted when the bad bytes are rare and the rest reads like Chinese; the better of
    the two by cjk_score wins, as for strict decodes.
    """
    best = None
    for codec in ("gb18030", "big5hkscs"):
        head = data[:_SAMPLE].decode(codec, errors="replace")
        if head.count("\ufffd") > 2 + MAX_REPLACED_SHARE * len(head):
            continue  # cheap early exit, as in mostly_utf8
        text = data.decode(codec, errors="replace")
        bad = replaced_count(text, data, codec)
        if bad > MAX_REPLACED_SHARE * len(text):
            continue
        score = _score_sample(text)
        if score >= GOOD_SCORE and (best is None or score > best[0]):
            best = (score, (text, f"{codec} (lossy)", bad))
    return best[1] if best else None


# U+FFFD as each codec writes it: what a lossy decode finds without any damage.
_FFFD_BYTES = {"utf-8": "\ufffd".encode("utf-8"), "gb18030": "\ufffd".encode("gb18030")}


def replaced_count(text: str, data: bytes, codec: str) -> int:
    """How many U+FFFD a lossy decode of `data` added (those encoded in the data were there before)."""
    found = text.count("\ufffd")
    if not found:
        return 0
    genuine = _FFFD_BYTES.get(codec)
    return found - (data.count(genuine) if genuine else 0)


def western(data: bytes) -> str | None:
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
log = logging.getLogger("pagetext.encoding")  # the name of the decoding as a whole (decode lives there)


def charset_normalizer_guess(data: bytes) -> tuple[str, str] | None:
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
        codec = charset_codec(guess)
        if not codec or codec.startswith(("utf-16", "utf-32")):
            continue
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        if _control_share(text[:_SAMPLE]) <= MAX_CONTROL_SHARE:
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


def wide_unicode(data: bytes, declared: str | None) -> tuple[str, str] | None:
    """UTF-16/32 without a BOM: labelled so from outside, or visibly so (NULs in every other byte)."""
    candidates: list[tuple[str, bool]] = []  # (codec, found by sniffing rather than by a label)
    name = charset_codec(declared) if declared else ""
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
        if "\x00" in sample or _control_share(sample) > MAX_CONTROL_SHARE:
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


def _control_share(text: str) -> float:
    if not text:
        return 0.0
    n = sum(1 for ch in text if (ch < " " and ch not in "\t\n\r\f\v\x1b\x1a") or "\x7f" <= ch <= "\x9f")
    return n / len(text)
