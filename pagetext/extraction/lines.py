"""Lines of a chapter's text that a site wrote, told by their shape, not by a list of phrases or domains.

- calls to action: a short line that asks the reader to act on the site ("亲,给个好评呗",
  "Please review!") and tells no story (no dialogue marks, no third person); in CJK, a line
  up to a banner's length when its plea names two acts ("亲,点击进去,给个好评呗,分数越高更新越快");
- load banners: "content failed to load, refresh", "please enable JavaScript";
- translator lines: "TL note: ...", "T/N: ...", "译者注：...";
- site addresses on any top-level domain, written with spaces or full-width dots ("ｂｉｑｕｇｅ。ｘｙｚ",
  "w w w . x x . c l u b"), which the known-domain pattern misses;
- lines that recur three times or more in one page (a site's slogan between paragraphs), in
  English only when they ask for an act or name an address (a story repeats its refrains).

Every pattern bounds its repeats and every test reads a line a constant number of times.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter

__all__ = ["is_banner", "is_site_line", "has_site_address", "narrates", "recurring", "footnote_marks"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
# Acting on the site: clicking, voting, reviewing, subscribing, bookmarking, sharing, downloading.
_ACTION = re.compile(
    r"点击|点进|收藏|推荐票|月票|好评|打赏|订阅|投票|书签|分享|下载|关注|公众号|评论|留言|客户端|\bapp\b|"
    r"\b(?:click|tap|subscribe|vote|votes|rate|review|reviews|comment|comments|feedback|patreon|discord|"
    r"donate|donation|bookmark|share|download|follow|ko-?fi|support)\b",
    re.I,
)
# Addressing the reader: a plea or a second person (an exclamation alone is the story's: "投票的意义上！").
# ("大家", "你们" also narrate: "这成了大家关注的焦点。")
_ADDRESS = re.compile(r"亲|請|请|求|各位|读者|讀者|书友|書友|呗|唄")
# In English "you" narrates and converses too: only a plea says the site is asking.
_PLEA = re.compile(r"\b(?:please|pls|plz|kindly)\b", re.I)
# An English sentence that opens with a verb of acting on the site is an imperative ("Leave me feedback!").
_IMPERATIVE = re.compile(
    r"(?:^|[.!?]\s+)(?:leave|give|drop|check out|join|support|vote|rate|review|comment|subscribe|follow|share|"
    r"click|tap|remember to|don't forget)\b", re.I)
# Telling a story: dialogue marks, a third person, a verb of saying.
_NARRATIVE = re.compile(
    r"[“”「」\"]|他|她|它|\b(?:he|she|his|her|him|they|them|their|said|asked)\b", re.I
)
# A failure to load, said as sites say it: the words next to each other ("failed to load",
# "加载失败"), so "couldn't raise the heavy load" in a story is no banner.
_LOAD_FAILED = re.compile(
    r"(?:加载|加載|载入|載入)\s*(?:失败|失敗|错误|錯誤|异常|異常|出错|出錯)|请刷新|請刷新|刷新重试|刷新重試|"
    r"\b(?:failed|fails|unable|couldn't|could not|can't|cannot|error)\s+(?:to\s+)?(?:load|loading|refresh)\b|"
    r"\b(?:load|loading)\s+(?:failed|error)\b",
    re.I,
)
# A page that says it needs another browser, device or script setting to show the text.
_SCRIPTING = re.compile(r"javascript|\bjs\b|浏览器|瀏覽器|\bbrowser\b|ad-?block|手机版|手機版|电脑端|電腦端|客户端|客戶端", re.I)
_ENABLE = re.compile(r"开启|開啟|启用|啟用|打开|打開|不支持|不支援|升级|升級|更换|更換|关闭|關閉|请使用|請使用|切换|切換|"
    r"\b(?:enable|enabled|allow|turn on|update|upgrade|disable|whitelist)\b", re.I)
_NOTE_LINE = re.compile(
    r"\s*[(\[（【]?\s*(?:T\s*/\s*N|TL\s*/?\s*N(?:ote)?s?|TL|TN|Translator'?s?(?:\s+notes?)?|Editor'?s?(?:\s+notes?)?|"
    r"Proofreader'?s?|Translated\s+by|Edited\s+by|ED\s*/?\s*N|PR\s*/?\s*N|译者注|译注|注释|翻译|校对)\s*[:：]",
    re.I,
)
_SHORT_CJK = 40  # visible characters: a CJK call to action is a phrase, not a paragraph
_SHORT_LATIN = 120
_BANNER = 100
# After squeezing: labels, a dot, a top-level domain of 2 to 24 letters; repeats bounded, so linear.
_ANY_DOMAIN = re.compile(
    r"(?<![a-z0-9])(?:https?://)?(?:www\.)?[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9-]{1,63}){0,6}\.[a-z]{2,24}(?![a-z0-9])"
)
_DIGIT = re.compile(r"\d")
_WEB_START = re.compile(r"(?:https?://|www\.)")
_DOTS = str.maketrans({"。": ".", "．": ".", "｡": ".", "点": ".", "點": "."})
_ADDRESS_LINE_MAX = 80  # squeezed characters: a watermark sentence, not a paragraph that names a site
_RESIDUE_MAX = 20  # letters of its own next to an address: fewer, and the sentence is the watermark


def is_banner(text: str) -> bool:
    """True when `text` says the content failed to load, or asks for another browser or setting."""
    return bool(_LOAD_FAILED.search(text) or _SCRIPTING.search(text) and _ENABLE.search(text))


def narrates(text: str) -> bool:
    """True when `text` tells a story: dialogue marks, a third person, a verb of saying."""
    return bool(_NARRATIVE.search(text))


def _visible(line: str) -> int:
    return len("".join(line.split()))


def _short(line: str) -> bool:
    n = _visible(line)
    return n <= (_SHORT_CJK if _CJK.search(line) else _SHORT_LATIN)


def is_site_line(line: str) -> bool:
    """True for a short call to action, a load or script banner, or a translator's note line."""
    if _NOTE_LINE.match(line):
        return True
    if _visible(line) > _BANNER and not _short(line):
        return False
    if _NARRATIVE.search(line):
        return False
    if _LOAD_FAILED.search(line):
        return True
    if _SCRIPTING.search(line) and _ENABLE.search(line):
        return True
    if _CJK.search(line) and _ADDRESS.search(line) and len(set(_ACTION.findall(line))) >= 2:
        return True  # a longer plea that names two acts ("亲,点击进去,给个好评呗,分数越高更新越快…")
    if not _short(line) or len(line.split()) < 2 and not _CJK.search(line):
        return False  # a one-word line ("Click!") is a sound in the story
    if not _ACTION.search(line):
        return False
    # An imperative only counts in an exclaimed line: "Leave me feedback!", not "Support the cause? If..."
    exclaimed = line.rstrip().endswith(("!", "！"))
    if _CJK.search(line):
        return bool(_ADDRESS.search(line))
    return bool(_PLEA.search(line) or (exclaimed and _IMPERATIVE.search(line)))


def _squeeze(text: str) -> str:
    """`text` as a site address reads: NFKC, lower case, full-width and written dots as '.', and,
    in CJK text, no spaces (English text keeps its spaces: they separate words, not letters)."""
    s = unicodedata.normalize("NFKC", text).lower()
    if not _CJK.search(s):
        return " ".join(s.split())
    return "".join(s.translate(_DOTS).split())


def has_site_address(sentence: str) -> bool:
    """True when `sentence` is a watermark built around a site address of any top-level domain.

    In a CJK sentence any labels-dot-letters run is an address (Chinese prose writes no
    Latin words with dots); in other text only one that starts like a web address
    (www., http) or stands nearly alone, since "end.Then" is a typo in English prose."""
    squeezed = _squeeze(sentence)
    if len(squeezed) > _ADDRESS_LINE_MAX:
        return False
    m = _ANY_DOMAIN.search(squeezed)
    if not m:
        return False
    rest = squeezed[: m.start()] + squeezed[m.end():]
    own = len(_CJK.findall(rest)) + len(_LATIN.findall(rest))
    if own >= _RESIDUE_MAX:
        return False
    return bool(_CJK.search(squeezed) or _WEB_START.match(squeezed, m.start()) or _DIGIT.search(m.group()))


# A line the story repeats is a sentence ("百里奚，五羊皮！", "湘云忙联道：" in a poem contest); a
# slogan a site repeats is a phrase, without the closing mark of a sentence.
_SENTENCE_END = re.compile(r"[。！？：；…」”』!?:;.]\s*$")


# "From: Scott", "张三：你在吗": a label and its value head a message or a letter in the story.
_LABEL = re.compile(r"[^:：\s]{1,20}\s*[:：]\s*\S")


def recurring(lines: list[str], times: int = 3) -> set[str]:
    """Short lines of words (not dialogue, not ornaments) that a page repeats `times` or more.

    English stories repeat short lines of their own (a refrain, "Speak your mind"; the
    headers of a chat, "From: Scott"): a Latin line counts only when it asks for an act on
    the site or names an address, and no line of a label and its value counts."""
    counts = Counter(line for line in lines if 6 <= _visible(line) <= 60 and not _NARRATIVE.search(line)
                     and not _SENTENCE_END.search(line) and not _LABEL.match(line))
    out = set()
    for line, n in counts.items():
        if n < times:
            continue
        letters = _CJK.findall(line) + _LATIN.findall(line)
        # Words, not an ornament: "oooooooooooo" and "*~*~*" separate scenes in the story.
        if len(letters) * 2 < _visible(line) or len(set(letters)) < 4:
            continue
        if _CJK.search(line) or _ACTION.search(line) or has_site_address(line):
            out.add(line)
    return out


# "[1] a video game in his previous world.": a note line starts with its mark.
_NOTE_START = re.compile(r"\s*([\[【（(]\s*\d{1,3}\s*[\]】）)])\s*\S")
_MARK = re.compile(r"\s?[\[【（(]\s*\d{1,3}\s*[\]】）)]")


def footnote_marks(lines: list[str]) -> tuple[set[int], set[str]]:
    """(indexes of note lines, their marks) for notes written as plain text.

    A line that starts with "[n]" is a note when an earlier line carries the same "[n]" as a
    reference: both the note and the marks in the prose are the translator's, not the story's;
    so is an unmarked one in the same run of note lines."""
    starts: dict[str, int] = {}
    for i, line in enumerate(lines):
        m = _NOTE_START.match(line)
        if m:
            starts.setdefault("".join(m.group(1).split()), i)
    if not starts:
        return set(), set()
    referenced: set[str] = set()
    for i, line in enumerate(lines):
        for m in _MARK.finditer(line):
            mark = "".join(m.group().split())
            first = starts.get(mark)
            if first is not None and i < first:
                referenced.add(mark)
    notes = {i for i, line in enumerate(lines)
             if (m := _NOTE_START.match(line)) and "".join(m.group(1).split()) in referenced
             and i >= min(starts[k] for k in referenced)}
    if notes:
        # A note the prose forgot to mark sits in the run of marked ones ("[1] …", "[2] …", "[3] …"):
        # the run, blank lines aside, is the translator's list.
        filled = [i for i, line in enumerate(lines) if line.strip()]
        for a, b in zip(filled, filled[1:]):
            if a in notes and b not in notes and _NOTE_START.match(lines[b]):
                notes.add(b)
        for a, b in zip(reversed(filled[1:]), reversed(filled[:-1])):
            if a in notes and b not in notes and _NOTE_START.match(lines[b]):
                notes.add(b)
    return notes, referenced


def without_marks(line: str, marks: set[str]) -> str:
    """`line` without its reference marks that are among `marks`."""
    return _MARK.sub(lambda m: "" if "".join(m.group().split()) in marks else m.group(), line)
