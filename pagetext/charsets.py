"""Charset labels: the ones a page or a header declares, and the Python codec each one names.

Labels are only read here; whether the bytes agree with them is judged by the
decoding (pagetext.encoding and its detectors in pagetext.encoding_detectors).
"""
from __future__ import annotations

import codecs
import re

__all__ = ["BIG5_FAMILY", "GB_FAMILY", "charset_codec", "declared_charsets", "is_multibyte_cjk"]

_DECLARATION_WINDOW = 8192  # bytes searched for <meta charset> / <?xml encoding?>

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
GB_FAMILY = {"gb2312", "gbk", "gb18030"}
BIG5_FAMILY = {"big5", "big5hkscs", "cp950"}


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


def charset_codec(label: str | None) -> str:
    """Python's canonical codec for a charset label ("GBK" -> "gbk"), or "" when unknown or not a
    charset (base64)."""
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


def is_multibyte_cjk(codec: str) -> bool:
    """Whether `codec` is one of the GB or Big5 double-byte codecs."""
    return codec in GB_FAMILY or codec in BIG5_FAMILY
