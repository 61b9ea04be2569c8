"""The pages of the sample pirate site: `Resource` (one answer and what a crawler must do with it),
the site's constants (encoding variants, chrome markers, the news article) and `_Site`, the HTML
builders of its home, catalogue, chapter, plain and huge pages in the site's chrome.

The kinds of page are listed in web.demo's docstring.
"""
from __future__ import annotations

import hashlib
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

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
    kind: str  # see web.demo's docstring
    delay: float = 0.0  # seconds to wait before answering
    copies: int | None = None  # index (into the chapters) of the original this page copies
    encoding: str | None = None  # the real encoding of body, for text pages
    text: str = ""  # the chapter text the page carries, as served (one part, or traditional script)
    variant: str = ""  # how a chapter page is encoded: one of VARIANTS

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


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
            f'<div id="intro"><p>{_esc(self.book)}是一部连载小说，讲述山城旧家三代人守护的秘密。'
            '本站提供最新章节在线阅读。</p></div>\n'
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
