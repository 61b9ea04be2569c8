"""A pirate novel site served on 127.0.0.1, with the traps real sites set for crawlers.

`build_site` turns a list of (title, text) chapters into every page of the site (pure, so a
benchmark can render pages without a server); `SampleSite` serves them from a thread. Each
page carries what a correct crawler must do with it (`Resource.kind`), so crawler tests can
check their results against `site.expected` and `site.hits`:

    home        "/": nav, ads, links to the catalogue, the news page and the traps
    catalogue   "/book/1/": chapter links, and links to every special page below
    chapter     a chapter page; encodings rotate over the chapters (GBK with <meta charset>,
                UTF-8, GBK bytes labelled utf-8 in the header, Big5 traditional, GBK with no
                charset anywhere); one chapter is split over two pages, one has broken HTML
    part        the second page of the split chapter (reached by its "下一页" link)
    unrelated   a news page of Chinese prose that copies nothing
    trap        "/calendar?d=...": every day links to the next and the previous one, forever
    duplicate   a page reached with "?sid=<random>": its links carry a fresh session id each time
    404         a chapter link that answers 404
    redirect    an old chapter URL that answers 301 to the real one
    slow        a page that answers after `slow_delay` seconds
    huge        a page of `huge_bytes` of HTML (a crawler should cap the download size)
    binary      a non-HTML file (application/octet-stream; an image without an extension)
    robots      a chapter under /vip/, which robots.txt forbids
    robots.txt  "/robots.txt"

With fewer than five chapters the encodings missing from the rotation are served as mirror
pages ("/big5/book/1/1.html"), so every feature exists even for a three-chapter book.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import html
import itertools
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = [
    "Resource", "SampleSite", "build_site", "respond", "chapters_from_folder",
    "VARIANTS", "CHROME_MARKERS", "BOOK_PATH",
]

BOOK_PATH = "/book/1/"
# How chapter pages are encoded and labelled, in rotation over the chapters.
VARIANTS = ("gbk", "utf8", "mislabel", "big5", "nocharset")
_CONTENT_TYPES = {
    "gbk": "text/html",  # the label is only in <meta charset="gbk">
    "utf8": "text/html; charset=utf-8",
    "mislabel": "text/html; charset=utf-8",  # but the bytes are GBK
    "big5": "text/html; charset=big5",
    "nocharset": "text/html",
}
_CODECS = {"gbk": "gbk", "utf8": "utf-8", "mislabel": "gbk", "big5": "big5", "nocharset": "gbk"}
_META = {
    "gbk": '<meta charset="gbk">',
    "utf8": '<meta charset="utf-8">',
    "mislabel": '<meta http-equiv="Content-Type" content="text/html; charset=gbk">',
    "big5": '<meta charset="big5">',
    "nocharset": "",
}
_LAYOUTS = {"gbk": "br", "utf8": "p", "mislabel": "br", "big5": "br", "nocharset": "p"}
# Strings of the site around a chapter that no extraction should keep (simplified script).
CHROME_MARKERS = (
    "天才一秒记住本站地址", "最新章节请访问", "本章未完", "手机用户请浏览", "本章完", "充值VIP", "精品小说推荐",
    "热门推荐", "加入书签", "章节目录", "上一章", "下一章", "下一页", "ads_", "xbiquge-fake", "All Rights Reserved",
    "本站所有小说为转载作品", "万古神帝",
)
ROBOTS_TXT = "User-agent: *\nDisallow: /vip/\n"
NEWS_TITLE = "滨江公园改造工程进入收尾阶段 下月底全面开放"
NEWS = (
    "本报讯 记者昨日从市园林局获悉，位于城东的滨江公园改造工程已进入收尾阶段，预计将于下月底向市民全面开放。"
    "此次改造历时十四个月，总投资约两亿三千万元，主要包括沿江步道拓宽、防洪堤加固、湿地生态修复以及儿童游乐区和健身设施的新建。",
    "据项目负责人介绍，改造后的滨江公园全长约六点八公里，新增绿地面积十二万平方米，种植乔木四千余株、灌木和地被植物三十余万株。"
    "为了保护江边原有的芦苇荡和候鸟栖息地，设计团队对原方案进行了三次调整，将部分硬质铺装改为透水材料，并在湿地区域设置了观鸟平台和科普展板。",
    "在交通方面，公园沿线新设了五处出入口和两座停车场，共提供停车位八百余个。公交公司也将开通两条接驳线路，连接地铁三号线和公园南北两端。",
    "附近居民王女士告诉记者，以前江边只有一条窄窄的水泥路，晚上灯光昏暗，很少有人愿意去散步。现在步道变宽了，还装上了节能路灯和休息座椅，"
    "她每天吃完晚饭都会和家人一起来走一走。退休教师李先生则更关心公园的后期管理，他希望有关部门能够加强巡查，保持环境整洁。",
    "园林局相关负责人表示，公园开放后将实行精细化管理，组建专门的养护队伍，并引入社会志愿者参与日常服务。"
    "同时还将定期举办自然教育、文艺演出和群众体育活动，让滨江公园真正成为市民休闲娱乐的好去处。",
)
# A 1x1 transparent PNG: the cover image, served without a file extension.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@dataclass(frozen=True)
class Resource:
    """One answer of the site, and what a correct crawler must do with it."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    kind: str  # see the module docstring
    delay: float = 0.0  # seconds to wait before answering
    copies: int | None = None  # index (into the chapters) of the original this page copies
    encoding: str | None = None  # the real encoding of body, for text pages
    text: str = ""  # the chapter text the page carries, as served (one part, or traditional script)
    variant: str = ""  # how a chapter page is encoded: one of VARIANTS

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


# ----------------------------------------------------------------------------- building


def build_site(
    chapters: Sequence[tuple[str, str]],
    *,
    book: str = "山城旧事",
    author: str = "林岚",
    site_name: str = "笔趣阁",
    domain: str = "www.xbiquge-fake.com",
    slow_delay: float = 2.0,
    huge_bytes: int = 3_000_000,
    calendar_start: str = "2026-11-01",
    seed: int = 0,
) -> dict[str, Resource]:
    """Build every page of a pirate site copying `chapters`, keyed by path (and query)."""
    chapters = [(str(t).strip(), str(x)) for t, x in chapters]
    if not chapters:
        raise ValueError("a sample site needs at least one (title, text) chapter")
    site = _Site(book, author, site_name, domain, seed)
    n = len(chapters)
    split = 1 if n >= 2 else 0  # /book/1/2.html and /book/1/2_2.html, as sites number them
    broken = min(2, n - 1)
    pages: dict[str, Resource] = {"/robots.txt": _text_resource(ROBOTS_TXT, "robots.txt")}

    def url(i: int) -> str:
        return f"{BOOK_PATH}{i + 1}.html" if 0 <= i < n else BOOK_PATH

    for i, (title, text) in enumerate(chapters):
        variant = VARIANTS[i % len(VARIANTS)]
        bar = dict(prev=url(i - 1), next=url(i + 1))
        if i == split:
            first, second = _halves(text)
            part2 = f"{BOOK_PATH}{i + 1}_2.html"
            pages[url(i)] = site.chapter(i, title, first, variant, part=(1, 2), next_page=part2,
                                         broken=i == broken, **bar)
            pages[part2] = site.chapter(i, title, second, variant, part=(2, 2), prev_page=url(i),
                                        kind="part", **bar)
        else:
            pages[url(i)] = site.chapter(i, title, text, variant, broken=i == broken, **bar)
    mirrors = []
    for v in range(n, len(VARIANTS)):
        i, variant = v % n, VARIANTS[v]
        path = f"/{variant}{BOOK_PATH}{i + 1}.html"
        pages[path] = site.chapter(i, chapters[i][0], chapters[i][1], variant, prev=url(i - 1), next=url(i + 1))
        mirrors.append((path, f"{_VARIANT_NAMES[variant]}：{chapters[i][0]}"))

    specials = {
        "missing": f"{BOOK_PATH}{n + 1}.html",
        "old": "/html/1/1.html",
        "slow": f"{BOOK_PATH}slow.html",
        "huge": f"{BOOK_PATH}huge.html",
        "vip": "/vip/1.html",
        "bin": "/download/book.bin",
        "img": "/img/cover",
    }
    pages[specials["missing"]] = _not_found(kind="404")
    pages[specials["old"]] = Resource(301, (("Location", url(0)), ("Content-Type", "text/html; charset=utf-8")),
                                      b'<a href="' + url(0).encode() + b'">moved</a>', "redirect")
    pages[specials["slow"]] = site.plain("精彩番外", NEWS[:1], kind="slow", delay=slow_delay)
    pages[specials["huge"]] = site.huge(huge_bytes)
    pages[specials["vip"]] = site.chapter(0, chapters[0][0], chapters[0][1], "gbk", prev=BOOK_PATH, next=BOOK_PATH,
                                          kind="robots")
    pages[specials["bin"]] = Resource(200, (("Content-Type", "application/octet-stream"),
                                            ("Content-Disposition", f'attachment; filename="book{seed}.bin"')),
                                      _binary(seed), "binary")
    pages[specials["img"]] = Resource(200, (("Content-Type", "image/png"),), _PNG, "binary")
    pages[BOOK_PATH] = site.catalogue(chapters, url, specials, mirrors)
    news = "/news/1.html"
    pages[news] = site.plain(NEWS_TITLE, NEWS, kind="unrelated")
    calendar = f"/calendar?d={calendar_start}"
    pages[calendar] = calendar_page(_dt.date.fromisoformat(calendar_start))
    sids = [site.sid(k) for k in range(2)]
    home = site.home(news, calendar, [f"{BOOK_PATH}?sid={sids[0]}", f"{url(0)}?sid={sids[1]}"], chapters[0][0])
    pages["/"] = home
    fresh = itertools.count(len(sids))
    for sid, path in zip(sids, (BOOK_PATH, url(0))):
        pages[f"{path}?sid={sid}"] = replace(pages[path], kind="duplicate",
                                             body=_with_sid(pages[path].body, lambda: site.sid(next(fresh))))
    return pages


_VARIANT_NAMES = {"gbk": "GBK版", "utf8": "UTF-8版", "mislabel": "旧版", "big5": "繁體版", "nocharset": "手机版"}


def _halves(text: str) -> tuple[str, str]:
    """Cut a chapter in two at the line break nearest its middle (or mid-line for one line)."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) >= 2:
        total, acc = sum(len(x) for x in lines), 0
        for k, line in enumerate(lines[:-1], 1):
            acc += len(line)
            if acc >= total / 2:
                break
        return "\n".join(lines[:k]), "\n".join(lines[k:])
    half = len(text) // 2
    return text[:half], text[half:]


@lru_cache(maxsize=1)
def _s2t():
    import opencc

    return opencc.OpenCC("s2t")


def _text_resource(text: str, kind: str) -> Resource:
    return Resource(200, (("Content-Type", "text/plain; charset=utf-8"),), text.encode("utf-8"), kind, encoding="utf-8")


def _not_found(kind: str = "404") -> Resource:
    body = "<!DOCTYPE html><html><head><meta charset='utf-8'><title>404 Not Found</title></head>" \
           "<body><h1>404 Not Found</h1><p>页面不存在或已被删除。</p><a href='/'>返回首页</a></body></html>"
    return Resource(404, (("Content-Type", "text/html; charset=utf-8"),), body.encode("utf-8"), kind, encoding="utf-8")


def _binary(seed: int) -> bytes:
    head = hashlib.sha256(f"bin:{seed}".encode()).digest()
    return b"\x00\x01BOOK" + head * 64 + bytes(range(256)) * 8


def _esc(s: str) -> str:
    return html.escape(s, quote=False)


class _Site:
    """The chrome of one made-up pirate site, shared by all its pages."""

    def __init__(self, book: str, author: str, name: str, domain: str, seed: int):
        self.book, self.author, self.name, self.domain, self.seed = book, author, name, domain, seed
        self.mobile = "m." + domain.removeprefix("www.")

    def sid(self, k: int) -> str:
        return hashlib.md5(f"{self.seed}:sid:{k}".encode()).hexdigest()[:16]

    def _page(self, title: str, body: str, meta: str = '<meta charset="utf-8">') -> str:
        return (
            f"<!DOCTYPE html>\n<html>\n<head>\n{meta}\n<title>{_esc(title)}</title>\n"
            '<script type="text/javascript">var _hmt = _hmt || []; (function() { '
            'var hm = document.createElement("script"); hm.src = "https://hm.example.com/hm.js"; })();</script>\n'
            "<style>#content{line-height:1.8;font-size:18px}</style>\n</head>\n<body>\n"
            f'<div class="header"><a href="/">{_esc(self.name)}</a> <a href="{BOOK_PATH}">{_esc(self.book)}</a> '
            '<a href="/news/1.html">资讯</a> <a href="/">排行榜</a> <a href="/">完本小说</a></div>\n'
            '<div class="ad"><script>ads_top();</script>充值VIP，畅读全站好书！</div>\n'
            f"{body}\n"
            '<div class="ad"><script>ads_bottom();</script>精品小说推荐：万古神帝、武炼巅峰</div>\n'
            '<div class="footer"><p>本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传，让更多读者欣赏。</p>'
            f"<p>Copyright &copy; {self.domain} All Rights Reserved.</p></div>\n"
            "<script>footer_stat();</script>\n</body>\n</html>\n"
        )

    def _html(self, page: str, kind: str, *, variant: str = "utf8", status: int = 200, **fields) -> Resource:
        codec = _CODECS[variant]
        return Resource(status, (("Content-Type", _CONTENT_TYPES[variant]),),
                        page.encode(codec, errors="xmlcharrefreplace"), kind, encoding=codec, variant=variant, **fields)

    def chapter(self, index: int, title: str, text: str, variant: str, *, prev: str, next: str,
                part: tuple[int, int] | None = None, next_page: str | None = None, prev_page: str | None = None,
                broken: bool = False, kind: str = "chapter") -> Resource:
        """A chapter page (or one part of it) with the site's chrome and watermarks in its content."""
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        marks = [
            f"天才一秒记住本站地址：{self.domain}",
            f"最新章节请访问{self.mobile}",
            f"手机用户请浏览{self.mobile}阅读，更优质的阅读体验。",
        ]
        content = list(lines)
        content.insert(min(1, len(content)), marks[0])
        content.insert(max(1, len(content) // 2), marks[1])
        ending = "本章未完，请点击下一页继续阅读" if part and part[0] < part[1] else "(本章完)"
        content += [marks[2], ending]
        ad = '<div class="ad"><script>ads_mid();</script>精品小说推荐</div>'
        if _LAYOUTS[variant] == "br":
            cells = ["&nbsp;&nbsp;&nbsp;&nbsp;" + _esc(x) for x in content]
            cells.insert(max(1, 2 * len(cells) // 3), ad)
            block = '<div id="content">' + "<br><br>".join(cells) + "</div>"
        else:
            cells = [f"<p>{_esc(x)}</p>" for x in content]
            cells.insert(max(1, 2 * len(cells) // 3), ad)
            block = '<div class="read-content" id="chaptercontent">' + "\n".join(cells) + "</div>"
        if broken:
            # Unclosed <font> and <p>, a stray </span>: lxml must recover the whole chapter.
            block = block.replace("<br><br>", "<br><font color=#333><br>", 1).replace("</p>\n", "\n", 2)
            block = block.replace("<br><br>", "<br></span><br>", 1)
        bar = [f'<a href="{prev}">上一章</a>']
        if prev_page:
            bar.append(f'<a href="{prev_page}">上一页</a>')
        bar.append(f'&larr; <a href="{BOOK_PATH}">章节目录</a> &rarr;')
        if next_page:
            bar.append(f'<a href="{next_page}">下一页</a>')
        bar.append(f'<a href="{next}">下一章</a> <a href="{BOOK_PATH}">加入书签</a>')
        bar_html = " ".join(bar)
        h1 = title + (f"({part[0]}/{part[1]})" if part else "")
        body = (
            f'<div class="con_top"><a href="/">{_esc(self.name)}</a> &gt; <a href="{BOOK_PATH}">{_esc(self.book)}</a>'
            f" &gt; {_esc(title)}</div>\n"
            f'<div class="bookname"><h1>{_esc(h1)}</h1>\n<div class="bottem1">{bar_html}</div></div>\n'
            f'<div id="sidebar"><h3>热门推荐</h3><ul><li><a href="{BOOK_PATH}">{_esc(self.book)}</a></li>'
            '<li><a href="/news/1.html">滨江公园下月开放</a></li></ul></div>\n'
            f"{block}\n"
            f'<div class="bottem2">{bar_html}</div>'
        )
        page = self._page(f"{title}_{self.book}_{self.name}", body, _META[variant])
        if broken:
            # No <html>/<head>/<body> start tags, a stray </div>, no end tags.
            page = page.replace("<!DOCTYPE html>\n<html>\n<head>\n", "").replace("</head>\n<body>\n", "")
            page = page.replace("</div></div>\n<div id=\"sidebar\">", "</div></div></div>\n<div id=\"sidebar\">")
            page = page.replace("</body>\n</html>\n", "")
        served = "\n".join(lines)
        if variant == "big5":
            page, served = _s2t().convert(page), _s2t().convert(served)
        return self._html(page, kind, variant=variant, copies=index, text=served)

    def catalogue(self, chapters, url: Callable[[int], str], specials: dict[str, str],
                  mirrors: list[tuple[str, str]]) -> Resource:
        n = len(chapters)
        items = [f'<dd><a href="{url(i)}">{_esc(t)}</a></dd>' for i, (t, _) in enumerate(chapters)]
        items += [
            f'<dd><a href="{specials["missing"]}">第{n + 1}章 敬请期待</a></dd>',
            f'<dd><a href="{specials["old"]}">{_esc(chapters[0][0])}（旧址）</a></dd>',
            f'<dd><a href="{specials["slow"]}">第{n + 2}章 番外</a></dd>',
            f'<dd><a href="{specials["huge"]}">第{n + 3}章 全本合集</a></dd>',
            f'<dd><a href="{specials["vip"]}">VIP精校：{_esc(chapters[0][0])}</a></dd>',
        ]
        items += [f'<dd><a href="{p}">{_esc(t)}</a></dd>' for p, t in mirrors]
        latest = "".join(f'<li><a href="{url(i)}">{_esc(chapters[i][0])}</a></li>' for i in range(max(0, n - 3), n))
        body = (
            f'<div id="info"><h1>{_esc(self.book)}</h1><p>作&nbsp;&nbsp;者：{_esc(self.author)}</p>'
            f'<p><img src="/img/cover" alt="封面"> <a href="/img/cover">封面大图</a> '
            f'<a href="{specials["bin"]}">TXT全本下载</a></p></div>\n'
            f'<div id="intro"><p>{_esc(self.book)}是一部连载小说，讲述山城旧家三代人守护的秘密。本站提供最新章节在线阅读。</p></div>\n'
            f'<div class="latest"><h3>最新章节</h3><ul>{latest}</ul></div>\n'
            f'<div id="list"><dl><dt>《{_esc(self.book)}》正文</dt>{"".join(items)}</dl></div>'
        )
        return self._html(self._page(f"{self.book}最新章节列表_{self.name}", body), "catalogue")

    def home(self, news: str, calendar: str, sid_links: list[str], first_title: str) -> Resource:
        body = (
            f'<div class="nav"><a href="/">首页</a> | <a href="{BOOK_PATH}">书库</a> | <a href="{news}">资讯</a></div>\n'
            f'<div id="hot"><h2>热门小说</h2><ul><li><a href="{BOOK_PATH}">{_esc(self.book)}</a> {_esc(self.author)}</li>'
            f'<li><a href="{sid_links[0]}">{_esc(self.book)}（会员通道）</a></li>'
            f'<li><a href="{sid_links[1]}">继续阅读：{_esc(first_title)}</a></li></ul></div>\n'
            f'<div id="news"><h2>资讯</h2><p><a href="{news}">{_esc(NEWS_TITLE)}</a></p>'
            f'<p><a href="{calendar}">万年历</a></p></div>'
        )
        return self._html(self._page(f"{self.name}_书友最值得收藏的网络小说阅读网", body), "home")

    def plain(self, title: str, paragraphs: Sequence[str], *, kind: str, delay: float = 0.0) -> Resource:
        paras = "".join(f"<p>{_esc(p)}</p>" for p in paragraphs)
        body = f'<div class="article"><h1>{_esc(title)}</h1>{paras}</div>'
        return replace(self._html(self._page(f"{title}_{self.name}", body), kind), delay=delay)

    def huge(self, size: int) -> Resource:
        one = "".join(f"<p>{_esc(p)}</p>\n" for p in NEWS).encode("utf-8")
        head = self._page("全本合集", '<div class="article"><h1>全本合集</h1>').encode("utf-8")
        reps = max(1, -(-(size - len(head)) // len(one)))
        body = head + one * reps
        return Resource(200, (("Content-Type", "text/html; charset=utf-8"),), body, "huge", encoding="utf-8")


def calendar_page(day: _dt.date) -> Resource:
    """One day of the endless calendar: it links to the day before and the day after."""
    links = []
    for label, delta in (("前一天", -1), ("后一天", 1)):
        try:
            other = day + _dt.timedelta(days=delta)
        except OverflowError:
            continue
        links.append(f'<a href="/calendar?d={other.isoformat()}">{label}</a>')
    body = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>万年历 {day.isoformat()}</title></head><body><h1>{day.year}年{day.month}月{day.day}日</h1>"
        f"<p>宜：出行、会友。忌：动土。</p><p>{' '.join(links)}</p><p><a href='/'>首页</a></p></body></html>"
    )
    headers = (("Content-Type", "text/html; charset=utf-8"),)
    return Resource(200, headers, body.encode("utf-8"), "trap", encoding="utf-8")


# ----------------------------------------------------------------------------- answering


_HREF = re.compile(rb'href="(/[^"#]*)"')


def _with_sid(body: bytes, new_sid: Callable[[], str]) -> bytes:
    """Give every site link of `body` a fresh session id, as sites that track sessions in URLs do."""
    def add(m: re.Match) -> bytes:
        link = m.group(1)
        return b'href="' + link + (b"&" if b"?" in link else b"?") + b"sid=" + new_sid().encode() + b'"'

    return _HREF.sub(add, body)


def respond(pages: dict[str, Resource], target: str, new_sid: Callable[[], str] | None = None) -> Resource:
    """The answer to a request for `target` (path and query): calendar days and session ids are made up on the fly."""
    if target in pages:
        return pages[target]
    parts = urlsplit(target)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(k == "sid" for k, _ in query):
        rest = urlencode([(k, v) for k, v in query if k != "sid"])
        canonical = respond(pages, parts.path + (f"?{rest}" if rest else ""), None)
        if canonical.status != 200 or not (canonical.header("Content-Type") or "").startswith("text/html"):
            return canonical
        body = _with_sid(canonical.body, new_sid) if new_sid else canonical.body
        return replace(canonical, kind="duplicate", body=body)
    if parts.path == "/calendar":
        try:
            return calendar_page(_dt.date.fromisoformat(dict(query).get("d", "")))
        except ValueError:
            return _not_found(kind="")
    return _not_found(kind="")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a crawler that hangs up on the slow or huge page is expected, not an error


class SampleSite:
    """Serve `build_site(chapters, ...)` on 127.0.0.1 from a daemon thread; use as a context manager.

    `url` is the base URL without a trailing slash; `expected` maps each path to its kind;
    `copies` maps each chapter, part and /vip/ page to the index of the chapter it copies;
    `hits` counts the requests per path (with query), safely across threads.
    """

    def __init__(self, chapters: Sequence[tuple[str, str]], *, port: int = 0, host: str = "127.0.0.1", **options):
        self.chapters = [(t, x) for t, x in chapters]
        self.pages = build_site(self.chapters, **options)
        self.expected = {p: r.kind for p, r in self.pages.items()}
        # Session-id variants copy a chapter too, but a correct crawler never keeps them apart from it.
        self.copies = {p: r.copies for p, r in self.pages.items() if r.copies is not None and r.kind != "duplicate"}
        self._host, self._port = host, port
        self._hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._sids = itertools.count(10_000)
        self._server: _QuietServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the sample site is not running: use `with SampleSite(...) as site:`")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def hits(self) -> Counter[str]:
        """A snapshot of the requests so far, per path with query."""
        with self._lock:
            return Counter(self._hits)

    def requests_under(self, prefix: str) -> int:
        """How many requests asked for a path starting with `prefix`."""
        return sum(n for p, n in self.hits.items() if p.startswith(prefix))

    def _new_sid(self) -> str:
        with self._lock:
            k = next(self._sids)
        return hashlib.md5(f"live:{k}".encode()).hexdigest()[:16]

    def _answer(self, target: str) -> Resource:
        with self._lock:
            self._hits[target] += 1
        return respond(self.pages, target, self._new_sid)

    def start(self) -> SampleSite:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _QuietServer((self._host, self._port), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="sample-site", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()  # wakes a slow answer that is still waiting
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server, self._thread = None, None

    def __enter__(self) -> SampleSite:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _handler(site: SampleSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "nginx"
        sys_version = ""

        def do_GET(self) -> None:
            r = site._answer(self.path)
            if r.delay and site._stopping.wait(r.delay):
                return  # shutting down: the client gets a closed connection
            try:
                self.send_response(r.status)
                for name, value in r.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(r.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(r.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a download cap on the huge page)

        do_HEAD = do_GET

        def log_message(self, format: str, *args) -> None:
            pass  # quiet: tests and the demo own the terminal

    return Handler


# ----------------------------------------------------------------------------- chapters from files


def chapters_from_folder(path: str | Path) -> list[tuple[str, str]]:
    """Read the chapter .txt files of a folder as (title, text), in the order of the number in their names.

    The title is the first line when it is short enough to be a heading (else the file name);
    the text is the rest of the file.
    """
    from fingerprint.encoding import decode_bytes
    from tracker.registry import number_in_name

    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder of chapter .txt files")
    files = [f for f in folder.iterdir() if f.is_file() and f.suffix.lower() == ".txt"]
    if not files:
        raise ValueError(f"no .txt chapter files in {folder}")

    def order(f: Path) -> tuple[bool, int, str]:
        k = number_in_name(f.stem)
        return (k is None, k or 0, f.name)

    out = []
    for f in sorted(files, key=order):
        text, _ = decode_bytes(f.read_bytes())
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        first, _, rest = text.partition("\n")
        if first.strip() and len(first.strip()) <= 40 and rest.strip():
            out.append((first.strip(), rest.strip()))
        else:
            out.append((f.stem, text))
    return out
