"""A seeded simulator of pirated copies of novel chapters.

Each transformation is one function that takes the simulator, the chapter(s) to copy and a
page key, and returns the pages together with their ground truth: the keys of the
registered originals each page copies (empty for a page made from unregistered text).

    boilerplate   (a) the chapter wrapped in site header/nav/footer and watermark lines
    split         (b) the chapter spread over 2-3 pages ("本章未完，请点击下一页继续阅读")
    merged        (c) the chapter and the next one on one page (copies both)
    excerpt       (d) about 10% of the chapter inside unrelated text from another novel
    homophones    (e) about 10% of the characters replaced by a homophone (same toneless pinyin)
    traditional   (f) converted to traditional script (OpenCC s2t)
    junk          (g) a junk symbol (one of *^~@#·※) after about 15% of the characters
    pinyin        (h) about 10% of the characters written as toneless pinyin
    html_gbk      (i) an HTML page in GBK (gb18030 bytes) with nav/sidebar/ads/scripts
    reordered     (j) paragraphs shuffled
    combined      (k) (a) + (e) + (g)
    simplified    (l) a traditional original converted to simplified script (OpenCC t2s)

Every page gets its own random generator, derived from the seed and the page key, so a page
does not change when other pages are added or removed.
"""
from __future__ import annotations

import html
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = [
    "Source", "Page", "Simulator", "TRANSFORMS", "homophone_table", "is_common_char",
    "boilerplate", "split", "merged", "excerpt", "homophones", "traditional", "junk",
    "pinyin_words", "html_gbk", "reordered", "combined", "simplified",
]

JUNK_CHARS = "*^~@#·※"
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Source:
    """A chapter pages are made from. `registered` says whether `key` is a known original."""

    key: str
    title: str
    body: str
    registered: bool = True


@dataclass
class Page:
    """A simulated page and its ground truth."""

    key: str
    kind: str  # the transformation's name
    text: str  # the page as text (for "html" pages: the HTML source)
    copies: tuple[str, ...]  # registered originals this page copies
    ext: str = "txt"  # file extension to write it with
    encoding: str = "utf-8"  # encoding to write it with
    derived_from: tuple[str, ...] = ()  # every chapter used, registered or not
    payload: list[str] = field(default_factory=list)  # the copied passages, before disguise

    def to_bytes(self) -> bytes:
        return self.text.encode(self.encoding)


# ----------------------------------------------------------------------------- tables


def is_common_char(ch: str) -> bool:
    """True for the 3,755 level-1 (most frequent) characters of GB2312."""
    try:
        b = ch.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return len(b) == 2 and 0xB0 <= b[0] <= 0xD7 and 0xA1 <= b[1] <= 0xFE


@lru_cache(maxsize=1)
def homophone_table() -> dict[str, tuple[str, ...]]:
    """Common character -> the other common characters with the same toneless pinyin.

    Built from pypinyin's character dictionary, restricted to GB2312 level 1, reading each
    character as `pypinyin.lazy_pinyin` does (its first reading, tones dropped).
    """
    from pypinyin import lazy_pinyin
    from pypinyin.pinyin_dict import pinyin_dict

    groups: dict[str, list[str]] = {}
    for cp in sorted(pinyin_dict):
        ch = chr(cp)
        if not is_common_char(ch):
            continue
        py = lazy_pinyin(ch)[0]
        if py and py.isascii() and py.isalpha():
            groups.setdefault(py, []).append(ch)
    table: dict[str, tuple[str, ...]] = {}
    for chars in groups.values():
        if len(chars) < 2:
            continue
        for ch in chars:
            table[ch] = tuple(c for c in chars if c != ch)
    return table


@lru_cache(maxsize=2)
def _opencc(config: str):
    import opencc

    return opencc.OpenCC(config)


# ----------------------------------------------------------------------------- simulator


_SITES = ("笔趣阁", "顶点小说", "八一中文网", "新笔趣阁", "书趣阁", "云来阁", "看书网", "全本小说网")
_FOOTERS = (
    "本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传，让更多读者欣赏。",
    "Copyright © {site} All Rights Reserved.",
    "如果您喜欢本书，请加入书签，方便下次阅读。",
    "温馨提示：按 回车[Enter]键 返回书目，按 ←键 返回上一页， 按 →键 进入下一页。",
)


def make_site(rng: random.Random) -> dict[str, str]:
    """A made-up pirate site: its name, desktop and mobile domains."""
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 7)))
    digits = str(rng.randint(1, 999)) if rng.random() < 0.5 else ""
    tld = rng.choice(["com", "net", "cc", "la", "org"])
    domain = f"{letters}{digits}.{tld}"
    return {"name": rng.choice(_SITES), "www": f"www.{domain}", "m": f"m.{domain}"}


class Simulator:
    """Makes pirated pages; all randomness comes from `seed` and the page key."""

    def __init__(self, seed: int = 0, filler: list[str] | None = None, strength: float = 1.0):
        """`strength` scales the rates of the disguises: the share of homophones (10%), of pinyin
        (10%), of junk symbols (15%); and divides the excerpt share (10%)."""
        if not 0.0 < strength <= 6.0:
            raise ValueError(f"strength must be in (0, 6], got {strength}")
        self.seed = seed
        self.filler = [f for f in (filler or []) if f.strip()]
        self.homophone_share = min(1.0, 0.10 * strength)
        self.pinyin_share = min(1.0, 0.10 * strength)
        self.junk_share = min(1.0, 0.15 * strength)
        self.excerpt_share = 0.10 / strength

    def rng(self, key: str) -> random.Random:
        return random.Random(f"{self.seed}:{key}")

    def site(self, rng: random.Random) -> dict[str, str]:
        return make_site(rng)

    def unrelated(self, rng: random.Random, size: int) -> str:
        """About `size` characters of whole lines of unrelated text (from `filler`)."""
        if not self.filler:
            raise ValueError("this transformation needs unrelated text: give Simulator(filler=[...])")
        text = rng.choice(self.filler)
        if len(text) <= size:
            return text
        at = rng.randrange(0, len(text) - size)
        nl = text.find("\n", at)
        at = nl + 1 if 0 <= nl < at + size // 2 else at
        return text[at : at + size]


def _truth(*sources: Source) -> tuple[tuple[str, ...], tuple[str, ...]]:
    copies = tuple(s.key for s in sources if s.registered)
    return copies, tuple(s.key for s in sources)


def _header(site: dict[str, str], title: str, rng: random.Random) -> list[str]:
    lines = [
        f"{site['name']} > 小说 > {title}",
        "首页 | 玄幻 | 武侠 | 都市 | 历史 | 排行榜 | 全本",
        title,
        f"天才一秒记住本站地址：{site['www']}",
        "上一章 ← 章节目录 → 下一章    加入书签",
    ]
    if rng.random() < 0.5:
        lines.insert(1, f"最快更新{title}最新章节！")
    return lines


def _footer(site: dict[str, str], rng: random.Random) -> list[str]:
    lines = [
        "上一章 ← 章节目录 → 下一章",
        f"手机用户请浏览{site['m']}阅读，更优质的阅读体验。",
        rng.choice(_FOOTERS).format(site=site["name"]),
    ]
    return lines


def _paragraphs(body: str) -> list[str]:
    return [p for p in body.split("\n") if p.strip()]


def _decorate(body: str, title: str, rng: random.Random) -> str:
    """Wrap `body` in a site's header and footer, with watermark lines between paragraphs."""
    site = make_site(rng)
    paras = body.split("\n")
    marks = [
        f"天才一秒记住本站地址：{site['www']}",
        "本章未完，请点击下一页继续阅读",
        f"手机用户请浏览{site['m']}阅读",
    ]
    slots = sorted(rng.sample(range(1, len(paras) + 1), k=min(3, len(paras))))
    out: list[str] = []
    for i, p in enumerate(paras):
        if slots and i == slots[0]:
            out.append(marks[len(slots) % 3])
            slots.pop(0)
        out.append(p)
    if rng.random() < 0.5:
        # An inline watermark at the start of one paragraph, as many sites do.
        cand = [i for i, p in enumerate(out) if p.strip() and p not in marks]
        if cand:
            i = rng.choice(cand)
            out[i] = f"（{site['name']} {site['www']}）{out[i]}"
    return "\n".join(_header(site, title, rng) + [""] + out + [""] + _footer(site, rng))


# ----------------------------------------------------------------------------- transformations


def boilerplate(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(a) The whole chapter inside site boilerplate."""
    rng = sim.rng(key)
    copies, used = _truth(src)
    return [Page(key, "boilerplate", _decorate(src.body, src.title, rng), copies, derived_from=used, payload=[src.body])]


def split_points(body: str, parts: int) -> list[int]:
    """Offsets cutting `body` into `parts` pieces of similar size, at line breaks if possible."""
    n = len(body)
    cuts = []
    for i in range(1, parts):
        target = n * i // parts
        nl = body.find("\n", target)
        at = nl + 1 if 0 <= nl < target + n // (parts * 2) else target
        if cuts and at <= cuts[-1]:
            at = target
        cuts.append(at)
    return cuts


def split(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(b) The chapter over 2 or 3 pages; each page copies the same original."""
    rng = sim.rng(key)
    k = rng.choice([2, 3])
    cuts = [0] + split_points(src.body, k) + [len(src.body)]
    copies, used = _truth(src)
    site = sim.site(rng)
    pages = []
    for i in range(k):
        part = src.body[cuts[i] : cuts[i + 1]]
        head = [f"{site['name']} > {src.title}", f"{src.title}（第{i + 1}/{k}页）", f"天才一秒记住本站地址：{site['www']}"]
        tail = ["本章未完，请点击下一页继续阅读" if i + 1 < k else "上一章 ← 章节目录 → 下一章", f"手机用户请浏览{site['m']}阅读"]
        text = "\n".join(head + [""]) + "\n" + part + "\n" + "\n".join([""] + tail)
        pages.append(Page(f"{key}_p{i + 1}", "split", text, copies, derived_from=used, payload=[part]))
    return pages


def merged(sim: Simulator, src: Source, key: str, nxt: Source) -> list[Page]:
    """(c) The chapter and the next one on one page; the page copies both."""
    rng = sim.rng(key)
    copies, used = _truth(src, nxt)
    body = f"{src.title}\n\n{src.body}\n\n{nxt.title}\n\n{nxt.body}"
    text = _decorate(body, f"{src.title} {nxt.title}", rng)
    return [Page(key, "merged", text, copies, derived_from=used, payload=[src.body, nxt.body])]


def excerpt(sim: Simulator, src: Source, key: str, share: float | None = None) -> list[Page]:
    """(d) A contiguous `share` of the chapter (default: the simulator's, 10%) inside unrelated
    text of about the chapter's size."""
    rng = sim.rng(key)
    share = sim.excerpt_share if share is None else share
    body = src.body
    size = max(1, int(len(body) * share))
    at = rng.randrange(0, max(1, len(body) - size))
    nl = body.find("\n", at)
    if 0 <= nl < at + size // 4 and nl + 1 + size <= len(body):
        at = nl + 1
    piece = body[at : at + size]
    before = sim.unrelated(rng, max(200, len(body) // 2))
    after = sim.unrelated(rng, max(200, len(body) // 2))
    text = f"{before}\n{piece}\n{after}"
    copies, used = _truth(src)
    return [Page(key, "excerpt", text, copies, derived_from=used, payload=[piece])]


def substitute_homophones(text: str, rng: random.Random, share: float = 0.10) -> str:
    """Replace `share` of the CJK characters that have a homophone with one of them."""
    table = homophone_table()
    chars = list(text)
    cjk = [i for i, c in enumerate(chars) if _CJK.match(c)]
    eligible = [i for i in cjk if chars[i] in table]
    k = min(len(eligible), round(len(cjk) * share))
    for i in rng.sample(eligible, k):
        chars[i] = rng.choice(table[chars[i]])
    return "".join(chars)


def homophones(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(e) About 10% of the characters replaced by a character of the same toneless pinyin."""
    rng = sim.rng(key)
    copies, used = _truth(src)
    text = src.title + "\n\n" + substitute_homophones(src.body, rng, sim.homophone_share)
    return [Page(key, "homophones", text, copies, derived_from=used, payload=[src.body])]


def traditional(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(f) Converted to traditional script with OpenCC s2t."""
    conv = _opencc("s2t")
    copies, used = _truth(src)
    text = conv.convert(src.title) + "\n\n" + conv.convert(src.body)
    return [Page(key, "traditional", text, copies, derived_from=used, payload=[src.body])]


def insert_junk(text: str, rng: random.Random, share: float = 0.15) -> str:
    """Put one junk symbol after `share` of the visible characters."""
    out = []
    for c in text:
        out.append(c)
        if not c.isspace() and rng.random() < share:
            out.append(rng.choice(JUNK_CHARS))
    return "".join(out)


def junk(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(g) A junk symbol after about 15% of the characters."""
    rng = sim.rng(key)
    copies, used = _truth(src)
    text = src.title + "\n\n" + insert_junk(src.body, rng, sim.junk_share)
    return [Page(key, "junk", text, copies, derived_from=used, payload=[src.body])]


def to_pinyin(text: str, rng: random.Random, share: float = 0.10) -> str:
    """Write `share` of the CJK characters as their toneless pinyin."""
    from pypinyin import lazy_pinyin

    chars = list(text)
    cjk = [i for i, c in enumerate(chars) if _CJK.match(c)]
    for i in rng.sample(cjk, round(len(cjk) * share)):
        chars[i] = lazy_pinyin(chars[i])[0]
    return "".join(chars)


def pinyin_words(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(h) About 10% of the characters replaced by their toneless pinyin."""
    rng = sim.rng(key)
    copies, used = _truth(src)
    text = src.title + "\n\n" + to_pinyin(src.body, rng, sim.pinyin_share)
    return [Page(key, "pinyin", text, copies, derived_from=used, payload=[src.body])]


_HTML = """<!DOCTYPE html>
<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=gbk">
<meta charset="gbk">
<title>{title}_{book}_{site}</title>
<script type="text/javascript">var _hmt = _hmt || []; (function() {{ var hm = document.createElement("script"); hm.src = "https://hm.example.com/hm.js?{rand}"; }})();</script>
<link rel="stylesheet" href="/css/style.css">
</head>
<body>
<div class="header"><a href="/">{site}</a> <a href="/xuanhuan/">玄幻小说</a> <a href="/wuxia/">武侠小说</a> <a href="/dushi/">都市小说</a> <a href="/paihang/">排行榜</a></div>
<div class="search"><form action="/search.php"><input name="q"> <button>搜索</button></form></div>
<div class="con_top"><a href="/">{site}</a> &gt; <a href="/book/{rand}/">{book}</a> &gt; {title}</div>
<div class="bookname"><h1>{title}</h1>
<div class="bottem1"><a href="{rand}_1.html">上一章</a> &larr; <a href="/book/{rand}/">章节目录</a> &rarr; <a href="{rand}_3.html">下一章</a> <a href="/shelf.php">加入书签</a></div>
</div>
<div id="sidebar"><h3>热门推荐</h3><ul><li><a href="/b/1/">万古神帝</a></li><li><a href="/b/2/">武炼巅峰</a></li><li><a href="/b/3/">圣墟</a></li></ul></div>
<div class="ad"><script>ads_top();</script>充值VIP，畅读全站好书！</div>
<div id="content">{content}</div>
<div class="ad"><script>ads_bottom();</script></div>
<div class="bottem2"><a href="{rand}_1.html">上一章</a> &larr; <a href="/book/{rand}/">章节目录</a> &rarr; <a href="{rand}_3.html">下一章</a></div>
<div class="footer"><p>{footer}</p><p>Copyright &copy; {www} All Rights Reserved.</p></div>
<script>footer_stat();</script>
</body>
</html>
"""


def html_gbk(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(i) An HTML page encoded in GBK (gb18030 bytes), the chapter in <div id="content">."""
    rng = sim.rng(key)
    site = sim.site(rng)
    lines = ["&nbsp;&nbsp;&nbsp;&nbsp;" + html.escape(p.strip()) for p in _paragraphs(src.body)]
    lines.insert(min(len(lines), 1), f"天才一秒记住本站地址：{site['www']}")
    content = "<br><br>".join(lines)
    page = _HTML.format(
        title=html.escape(src.title), book="小说", site=site["name"], rand=rng.randint(1000, 99999),
        content=content, footer=rng.choice(_FOOTERS).format(site=site["name"]), www=site["www"],
    )
    copies, used = _truth(src)
    return [Page(key, "html_gbk", page, copies, ext="html", encoding="gb18030", derived_from=used, payload=[src.body])]


def reorder_paragraphs(body: str, rng: random.Random) -> str:
    """Shuffle the paragraphs (or, for fewer than 4, the sentences) of `body`."""
    paras = _paragraphs(body)
    if len(paras) < 4:
        paras = [s for s in re.split(r"(?<=[。！？])", body.replace("\n", "")) if s.strip()]
    if len(paras) < 2:
        return body
    order = list(range(len(paras)))
    while order == sorted(order):
        rng.shuffle(order)
    return "\n".join(paras[i] for i in order)


def reordered(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(j) Paragraphs shuffled."""
    rng = sim.rng(key)
    copies, used = _truth(src)
    text = src.title + "\n\n" + reorder_paragraphs(src.body, rng)
    return [Page(key, "reordered", text, copies, derived_from=used, payload=[src.body])]


def combined(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(k) Homophones, then junk symbols, then site boilerplate."""
    rng = sim.rng(key)
    body = insert_junk(substitute_homophones(src.body, rng, sim.homophone_share), rng, sim.junk_share)
    copies, used = _truth(src)
    return [Page(key, "combined", _decorate(body, src.title, rng), copies, derived_from=used, payload=[src.body])]


def simplified(sim: Simulator, src: Source, key: str) -> list[Page]:
    """(l) Converted to simplified script with OpenCC t2s (for traditional originals)."""
    rng = sim.rng(key)
    conv = _opencc("t2s")
    copies, used = _truth(src)
    text = _decorate(conv.convert(src.body), conv.convert(src.title), rng)
    return [Page(key, "simplified", text, copies, derived_from=used, payload=[src.body])]


# name -> function; "merged" also takes the next chapter, "excerpt" needs Simulator.filler.
TRANSFORMS: dict[str, Callable[..., list[Page]]] = {
    "boilerplate": boilerplate,
    "split": split,
    "merged": merged,
    "excerpt": excerpt,
    "homophones": homophones,
    "traditional": traditional,
    "junk": junk,
    "pinyin": pinyin_words,
    "html_gbk": html_gbk,
    "reordered": reordered,
    "combined": combined,
}
