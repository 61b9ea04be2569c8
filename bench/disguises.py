"""Disguised copies whose true coverage is known, for the truth benchmark (bench/truth.py).

Each disguise takes a chapter body (and a random generator, and unrelated text where it
needs some) and returns a `Disguised`: the page as served (text, or HTML for the CSS case)
and the truth: the share of the chapter's Chinese characters the page carries
(`containment`; a disguised character still counts as carried) and the share of the page's
visible Chinese characters that come from the chapter (`page_share`).

    renamed       every person name (jieba's nr tags) replaced by another of the same length
    reworded      common words replaced by synonyms (a table of everyday pairs)
    variants      15% of the characters as traditional or variant forms, digits full-width
    emoji         an emoji or symbol after 20% of the characters, zero-width spaces too
    taiwan        traditional script with Taiwan phrasing (OpenCC s2twp)
    sentences     every sentence of the chapter in random order
    paragraphs    the paragraphs in random order
    merged        the chapter, then an unrelated chapter of the same size, on one page
    interleaved   the chapter's paragraphs alternating with unrelated paragraphs
    css_hidden    HTML: junk characters between the characters, hidden by the page's CSS
    combined      renamed + reworded + sentences + emoji
    excerpt_P     a contiguous P share of the chapter inside unrelated text
"""
from __future__ import annotations

import html
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_SENTENCE = re.compile(r"[^。！？!?]*[。！？!?]+[”」』]?|[^。！？!?]+$")

# Everyday words and a synonym each (either way round): what a rewording site swaps.
SYNONYMS = {
    "看见": "瞧见", "知道": "晓得", "非常": "十分", "立刻": "马上", "于是": "随即", "忽然": "突然",
    "已经": "业已", "什么": "甚么", "这样": "如此", "那里": "那边", "这里": "此处", "如何": "怎样",
    "欢喜": "高兴", "害怕": "惧怕", "明白": "清楚", "告诉": "告知", "回来": "归来", "出去": "离去",
    "起来": "起身", "不要": "莫要", "不曾": "未曾", "只见": "但见", "一齐": "一同", "便是": "就是",
    "怎么": "如何", "东西": "物件", "地方": "所在", "时候": "时分", "身上": "身边", "眼前": "面前",
    "说道": "言道", "问道": "询道", "笑道": "笑言", "叫道": "喊道", "大喜": "欢喜", "大怒": "震怒",
    "兄弟": "弟兄", "军士": "兵士", "将军": "将帅", "城中": "城里", "山中": "山里", "门外": "门前",
}
SYNONYMS.update({v: k for k, v in list(SYNONYMS.items()) if v not in SYNONYMS})
_FAKE_SURNAMES = "林周沈陆韩苏叶顾程袁岳卢廖邵"
_FAKE_GIVEN = "墨岚青云川辰舟雪寒霜星河明远安宁逸尘清风"
_EMOJI = ["😀", "🔥", "✨", "★", "☆", "♪", "※", "👍", "🌙", "\u200b", "\u200d", "◆"]
_JUNK = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz0123456789"


@dataclass
class Disguised:
    text: str  # the page (HTML when html is True)
    containment: float  # true share of the chapter's CJK characters the page carries
    page_share: float  # true share of the page's visible CJK characters that come from the chapter
    html: bool = False


def cjk(text: str) -> int:
    return len(_CJK.findall(text))


def _whole(page: str, carried: str, as_html: bool = False, visible: str | None = None) -> Disguised:
    return Disguised(page, 1.0, min(1.0, cjk(carried) / max(1, cjk(visible if visible is not None else page))),
                     as_html)


def _paragraphs(body: str) -> list[str]:
    return [p for p in body.split("\n") if p.strip()]


def _sentences(body: str) -> list[str]:
    return [s for s in _SENTENCE.findall(body.replace("\n", "")) if s.strip()]


@lru_cache(maxsize=4)
def _opencc(config: str):
    import opencc

    return opencc.OpenCC(config)


def renamed(body: str, rng: random.Random, **_) -> Disguised:
    import jieba.posseg as pseg

    names = sorted({w for w, flag in pseg.cut(body) if flag == "nr" and 2 <= len(w) <= 4})
    mapping = {}
    for name in names:
        fake = rng.choice(_FAKE_SURNAMES) + "".join(rng.choice(_FAKE_GIVEN) for _ in range(len(name) - 1))
        mapping[name] = fake
    if not mapping:
        return _whole(body, body)
    pattern = re.compile("|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True)))
    page = pattern.sub(lambda m: mapping[m.group()], body)
    return _whole(page, page)


def reworded(body: str, rng: random.Random, **_) -> Disguised:
    pattern = re.compile("|".join(re.escape(w) for w in sorted(SYNONYMS, key=len, reverse=True)))
    page = pattern.sub(lambda m: SYNONYMS[m.group()], body)
    return _whole(page, page)


def variants(body: str, rng: random.Random, **_) -> Disguised:
    conv = _opencc("s2t")
    out = []
    for ch in body:
        if _CJK.match(ch) and rng.random() < 0.15:
            ch = conv.convert(ch)
        elif ch.isdigit() and ch.isascii():
            ch = chr(ord(ch) + 0xFEE0)
        out.append(ch)
    page = "".join(out)
    return _whole(page, page)


def emoji(body: str, rng: random.Random, **_) -> Disguised:
    out = []
    for ch in body:
        out.append(ch)
        if not ch.isspace() and rng.random() < 0.2:
            out.append(rng.choice(_EMOJI))
    page = "".join(out)
    return _whole(page, page)


def taiwan(body: str, rng: random.Random, **_) -> Disguised:
    page = _opencc("s2twp").convert(body)
    return _whole(page, page)


def sentences(body: str, rng: random.Random, **_) -> Disguised:
    ss = _sentences(body)
    rng.shuffle(ss)
    lines, line = [], []
    for s in ss:  # new paragraphs every few sentences, as a page would have them
        line.append(s)
        if rng.random() < 0.3:
            lines.append("".join(line))
            line = []
    lines.append("".join(line))
    page = "\n".join(lines)
    return _whole(page, page)


def paragraphs(body: str, rng: random.Random, **_) -> Disguised:
    ps = _paragraphs(body)
    order = list(range(len(ps)))
    rng.shuffle(order)
    page = "\n".join(ps[i] for i in order)
    return _whole(page, page)


def merged(body: str, rng: random.Random, other: str, **_) -> Disguised:
    page = body + "\n\n" + other
    return _whole(page, body)


def interleaved(body: str, rng: random.Random, other: str, **_) -> Disguised:
    ps, qs = _paragraphs(body), _paragraphs(other)
    out = []
    for i, p in enumerate(ps):
        out.append(p)
        if i < len(qs):
            out.append(qs[i])
    out += qs[len(ps):]
    return _whole("\n".join(out), body)


def css_hidden(body: str, rng: random.Random, **_) -> Disguised:
    """Junk between the characters, hidden three ways: a class rule, an id rule, inline style."""
    hidden_class = "".join(rng.choice("abcdefghij") for _ in range(4))
    parts = []
    for _k, p in enumerate(_paragraphs(body)):
        out = []
        for ch in p:
            out.append(html.escape(ch))
            if rng.random() < 0.25:
                junk = "".join(rng.choice(_JUNK) for _ in range(rng.randint(1, 3)))
                how = rng.random()
                if how < 0.5:
                    out.append(f'<span class="{hidden_class}">{junk}</span>')
                elif how < 0.8:
                    out.append(f'<font style="display:none">{junk}</font>')
                else:
                    out.append(f'<i style="font-size:0">{junk}</i>')
        parts.append(f"<p>{''.join(out)}</p>")
    page = (f"<html><head><meta charset='utf-8'><style>.{hidden_class}{{display:none}}</style></head>"
            f"<body><div id='content'>{''.join(parts)}</div></body></html>")
    return _whole(page, body, as_html=True, visible=body)


def combined(body: str, rng: random.Random, **kw) -> Disguised:
    page = emoji(sentences(reworded(renamed(body, rng).text, rng).text, rng).text, rng).text
    return _whole(page, page)


def excerpt(share: float) -> Callable[..., Disguised]:
    def make(body: str, rng: random.Random, other: str, **_) -> Disguised:
        total = cjk(body)
        want = max(1, round(total * share))
        # a contiguous run of whole characters: start anywhere, take characters until `want` CJK
        idx = [m.start() for m in _CJK.finditer(body)]
        first = rng.randrange(0, max(1, len(idx) - want + 1))
        start = idx[first]
        end = idx[min(len(idx) - 1, first + want - 1)] + 1
        piece = body[start:end]
        half = len(other) // 2
        page = other[:half] + "\n" + piece + "\n" + other[half:]
        return Disguised(page, cjk(piece) / max(1, total), cjk(piece) / max(1, cjk(page)))

    make.__name__ = f"excerpt_{round(share * 100):02d}"
    return make


DISGUISES: dict[str, Callable[..., Disguised]] = {
    "renamed": renamed, "reworded": reworded, "variants": variants, "emoji": emoji, "taiwan": taiwan,
    "sentences": sentences, "paragraphs": paragraphs, "merged": merged, "interleaved": interleaved,
    "css_hidden": css_hidden, "combined": combined,
    **{f"excerpt_{round(s * 100):02d}": excerpt(s) for s in (0.02, 0.05, 0.10, 0.15, 0.35, 0.50, 0.70)},
}
