"""Letters and lengths the extractor's modules share: CJK and Latin letters, chapter
headings, visible length."""
from __future__ import annotations

import re

__all__ = ["CJK", "LATIN", "CHAPTER_HEADING", "visible"]

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN = re.compile(r"[A-Za-z]")
_NUMERAL = "0-9０-９零〇○一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟"
CHAPTER_HEADING = re.compile(
    rf"第\s*[{_NUMERAL}]+\s*[章回节節卷]|^\s*chapter\s+(?:\d+|[ivxlcdm]+)\b", re.I
)


def visible(text: str) -> int:
    return len("".join(text.split()))
