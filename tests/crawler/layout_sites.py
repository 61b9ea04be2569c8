"""Pirate sites built the way real ones are, served on 127.0.0.1 for crawler tests.

Each layout is a function from chapters [(title, text), ...] to pages {path: Page}; the
structures are the common ones (written here, no real page copied):

    biquge      catalogue paged with 下一页, chapter list in <dl><dd>, text in #content as
                <br> runs with watermark sentences between and inside the paragraphs
    qidian      chapter list in <ul><li>, text in .read-content as <p>, the catalogue on the
                book's page itself
    wap         one site in two variants: desktop (/book/, #chaptercontent, <p>) and wap
                (/wap/book/, #nr1, <br>, its catalogue paged), each linked from the home page
    sitemap     chapters linked from nowhere: robots.txt names a sitemap index, which lists a
                gzipped sitemap of the chapters
    split       chapter 2 split over three pages chained by 下一页 (its part 2 also linked from
                the catalogue); chapter 3 split over two pages with no chain: its part 2 is
                reachable only from the catalogue
    covers      a book page whose og:image is a copy of the registered cover on another host,
                with a logo, a tracking pixel, a CSS-hidden image, an "image" that is HTML and
                one that is gone; chapters with a lazy-loaded copy of the illustration (the
                real address in data-original) and the cover again in the sidebar, one with
                the cover inline as a data: URI (see COVER_ART)
    pictures    a chapter posted as two pictures (the second lazy-loaded) with a photo between
                them, on a page with no chapter text (see chapter_pictures)

`LayoutSite` serves one layout: every 200 page carries an ETag and a Last-Modified, a
request whose If-None-Match or If-Modified-Since matches gets 304 and no body, and every
request is recorded (path, conditional or not, status, body bytes sent).
"""
from __future__ import annotations

import gzip
import hashlib
import html
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LAST_MODIFIED = "Mon, 02 Nov 2026 08:00:00 GMT"
MARKS = ("天才一秒记住本站地址：www.layout-fake.test", "最新章节请访问m.layout-fake.test", "手机用户请浏览阅读，更优质的阅读体验。")
INLINE_MARK = "（看最新章节请到layout-fake）"


@dataclass(frozen=True)
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    kind: str = ""  # chapter, part, catalogue, home, sitemap, robots
    copies: int | None = None  # index of the chapter a chapter or part page copies
    text: str = ""  # the chapter text the page carries (a part's share for a part)


@dataclass
class Hit:
    path: str
    conditional: bool
    status: int
    sent: int  # body bytes sent


def esc(s: str) -> str:
    return html.escape(s, quote=False)


def lines_of(text: str) -> list[str]:
    return [x.strip() for x in text.split("\n") if x.strip()]


def watermarked(lines: list[str]) -> list[str]:
    """The lines with the site's watermark sentences between them, and one inside a paragraph."""
    out = list(lines)
    if len(out) > 2:
        mid = out[2]
        out[2] = mid[: len(mid) // 2] + INLINE_MARK + mid[len(mid) // 2:]
    out.insert(min(1, len(out)), MARKS[0])
    out.insert(len(out) // 2, MARKS[1])
    out.append(MARKS[2])
    return out


def doc(title: str, body: str, charset: str = "utf-8") -> bytes:
    return (f"<!DOCTYPE html><html><head><meta charset='{charset}'><title>{esc(title)}_布局小说网</title></head>"
            f"<body><div class='nav'><a href='/'>首页</a> <a href='/top/'>排行榜</a> <a href='/full/'>完本</a></div>"
            f"{body}<div class='footer'>本站所有小说均来自网友上传 Copyright layout-fake.test</div></body></html>"
            ).encode(charset, errors="xmlcharrefreplace")


def br_block(selector: str, lines: list[str]) -> str:
    key, name = selector[0], selector[1:]
    attr = f"id='{name}'" if key == "#" else f"class='{name}'"
    return f"<div {attr}>" + "<br><br>".join("&nbsp;&nbsp;&nbsp;&nbsp;" + esc(x) for x in lines) + "</div>"


def p_block(selector: str, lines: list[str]) -> str:
    key, name = selector[0], selector[1:]
    attr = f"id='{name}'" if key == "#" else f"class='{name}'"
    return f"<div {attr}>" + "".join(f"<p>{esc(x)}</p>" for x in lines) + "</div>"


def chapter_page(title: str, lines: list[str], *, block: Callable[[str, list[str]], str], selector: str,
                 catalogue: str, prev: str, next: str, next_page: str = "", h1: str = "") -> bytes:
    bar = f"<a href='{prev}'>上一章</a> <a href='{catalogue}'>目录</a> "
    if next_page:
        bar += f"<a href='{next_page}'>下一页</a> "
    bar += f"<a href='{next}'>下一章</a>"
    ending = ["本章未完，请点击下一页继续阅读"] if next_page else []
    body = (f"<div class='bookname'><h1>{esc(h1 or title)}</h1><div class='bar'>{bar}</div></div>"
            f"{block(selector, watermarked(lines) + ending)}<div class='bar'>{bar}</div>")
    return doc(title, body)


def halves(lines: list[str], k: int) -> list[list[str]]:
    """`lines` cut into `k` runs of about equal length."""
    size = -(-len(lines) // k)
    return [lines[i:i + size] for i in range(0, len(lines), size)]


# ---------------------------------------------------------------------------- layouts


def biquge(chapters: Sequence[tuple[str, str]]) -> dict[str, Page]:
    """Catalogue paged with 下一页 (two chapters a page), <dl><dd> lists, #content with <br> runs."""
    pages: dict[str, Page] = {}
    n = len(chapters)
    url = lambda i: f"/book/7/{i + 1}.html" if 0 <= i < n else "/book/7/"  # noqa: E731
    per = 2
    index_pages = [chapters[i:i + per] for i in range(0, n, per)]
    for k, group in enumerate(index_pages):
        path = "/book/7/" if k == 0 else f"/book/7/index_{k + 1}.html"
        items = "".join(f"<dd><a href='{url(k * per + j)}'>{esc(t)}</a></dd>" for j, (t, _) in enumerate(group))
        nav = f"<a href='/book/7/index_{k + 2}.html'>下一页</a>" if k + 1 < len(index_pages) else ""
        body = (f"<div id='info'><h1>山城旧事</h1><p>作者：林岚</p></div><div id='list'><dl><dt>正文</dt>{items}</dl>"
                f"</div><div class='page'>{nav}</div>")
        pages[path] = Page(doc("山城旧事最新章节", body), kind="catalogue")
    for i, (title, text) in enumerate(chapters):
        pages[url(i)] = Page(chapter_page(title, lines_of(text), block=br_block, selector="#content",
                                          catalogue="/book/7/", prev=url(i - 1), next=url(i + 1)),
                             kind="chapter", copies=i, text=text)
    pages["/"] = Page(doc("布局小说网", "<ul><li><a href='/book/7/'>山城旧事</a></li></ul>"), kind="home")
    return pages


def qidian(chapters: Sequence[tuple[str, str]]) -> dict[str, Page]:
    """Chapter list in <ul><li> on the book's page, text in .read-content as <p>."""
    pages: dict[str, Page] = {}
    n = len(chapters)
    url = lambda i: f"/info/31/c{i + 101}/" if 0 <= i < n else "/info/31/"  # noqa: E731
    items = "".join(f"<li><a href='{url(i)}'>{esc(t)}</a></li>" for i, (t, _) in enumerate(chapters))
    body = (f"<div class='book-info'><h1>山城旧事</h1><p class='intro'>山城旧家三代人守护的秘密。</p></div>"
            f"<div class='catalog'><h3>目录</h3><ul class='cf'>{items}</ul></div>")
    pages["/info/31/"] = Page(doc("山城旧事", body), kind="catalogue")
    for i, (title, text) in enumerate(chapters):
        pages[url(i)] = Page(chapter_page(title, lines_of(text), block=p_block, selector=".read-content",
                                          catalogue="/info/31/", prev=url(i - 1), next=url(i + 1)),
                             kind="chapter", copies=i, text=text)
    pages["/"] = Page(doc("布局小说网", "<p><a href='/info/31/'>山城旧事</a></p>"), kind="home")
    return pages


def wap(chapters: Sequence[tuple[str, str]]) -> dict[str, Page]:
    """Desktop (/book/, #chaptercontent, <p>) and wap (/wap/book/, #nr1, <br>, catalogue paged) variants."""
    pages: dict[str, Page] = {}
    n = len(chapters)
    desk = lambda i: f"/book/5/{i + 1}.html" if 0 <= i < n else "/book/5/"  # noqa: E731
    mob = lambda i: f"/wap/book/5/{i + 1}.html" if 0 <= i < n else "/wap/book/5/"  # noqa: E731
    items = "".join(f"<dd><a href='{desk(i)}'>{esc(t)}</a></dd>" for i, (t, _) in enumerate(chapters))
    pages["/book/5/"] = Page(doc("山城旧事", f"<div id='list'><dl>{items}</dl></div>"), kind="catalogue")
    first = "".join(f"<li><a href='{mob(i)}'>{esc(t)}</a></li>" for i, (t, _) in enumerate(chapters[:1]))
    rest = "".join(f"<li><a href='{mob(i)}'>{esc(t)}</a></li>" for i, (t, _) in enumerate(chapters) if i >= 1)
    pages["/wap/book/5/"] = Page(doc("山城旧事-手机版", f"<ul class='chapter'>{first}</ul>"
                                                  "<div class='page'><a href='/wap/book/5/2/'>下一页</a></div>"),
                                 kind="catalogue")
    pages["/wap/book/5/2/"] = Page(doc("山城旧事-手机版 第2页", f"<ul class='chapter'>{rest}</ul>"), kind="catalogue")
    for i, (title, text) in enumerate(chapters):
        pages[desk(i)] = Page(chapter_page(title, lines_of(text), block=p_block, selector="#chaptercontent",
                                           catalogue="/book/5/", prev=desk(i - 1), next=desk(i + 1)),
                              kind="chapter", copies=i, text=text)
        pages[mob(i)] = Page(chapter_page(title, lines_of(text), block=br_block, selector="#nr1",
                                          catalogue="/wap/book/5/", prev=mob(i - 1), next=mob(i + 1)),
                             kind="chapter", copies=i, text=text)
    pages["/"] = Page(doc("布局小说网", "<a href='/book/5/'>电脑版</a> <a href='/wap/book/5/'>手机版</a>"), kind="home")
    return pages


def sitemap(chapters: Sequence[tuple[str, str]]) -> dict[str, Page]:
    """Chapters linked from nowhere but a gzipped sitemap, listed by an index named in robots.txt."""
    pages: dict[str, Page] = {}
    n = len(chapters)
    url = lambda i: f"/read/88/{i + 1}.html"  # noqa: E731
    for i, (title, text) in enumerate(chapters):
        # No links at all: the catalogue is drawn by a script the crawler does not run.
        pages[url(i)] = Page(doc(title, f"<h1>{esc(title)}</h1>{br_block('#content', watermarked(lines_of(text)))}"),
                             kind="chapter", copies=i, text=text)
    pages["/"] = Page(doc("布局小说网", "<div id='app'></div><script>loadCatalogue('/api/88')</script>"), kind="home")
    pages["/robots.txt"] = Page(b"User-agent: *\nDisallow: /api/\nSitemap: /sitemap_index.xml\n",
                                "text/plain; charset=utf-8", kind="robots")
    pages["/sitemap_index.xml"] = Page(
        b"<?xml version='1.0' encoding='UTF-8'?><sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
        b"<sitemap><loc>{ROOT}/sitemaps/chapters.xml.gz</loc></sitemap>"
        b"<sitemap><loc>http://elsewhere.test/sitemap.xml</loc></sitemap></sitemapindex>",
        "application/xml", kind="sitemap")
    urlset = "".join(f"<url><loc>{{ROOT}}{url(i)}</loc><lastmod>2026-11-02</lastmod></url>" for i in range(n))
    pages["/sitemaps/chapters.xml.gz"] = Page(
        ("<?xml version='1.0' encoding='UTF-8'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
         f"{urlset}<url><loc>http://elsewhere.test/1.html</loc></url></urlset>").encode(),
        "application/x-gzip", kind="sitemap")
    return pages


def split(chapters: Sequence[tuple[str, str]]) -> dict[str, Page]:
    """Chapter 2 over three pages chained by 下一页; chapter 3 over two with no chain (part 2 in the catalogue only)."""
    pages: dict[str, Page] = {}
    n = len(chapters)
    url = lambda i: f"/b/9/{i + 1}.html" if 0 <= i < n else "/b/9/"  # noqa: E731
    items = []
    for i, (title, text) in enumerate(chapters):
        lines = lines_of(text)
        common = dict(block=br_block, selector="#content", catalogue="/b/9/", prev=url(i - 1), next=url(i + 1))
        items.append(f"<dd><a href='{url(i)}'>{esc(title)}</a></dd>")
        if i == 1:
            runs = halves(lines, 3)
            paths = [url(i)] + [f"/b/9/{i + 1}_{k + 1}.html" for k in range(1, len(runs))]
            for k, run in enumerate(runs):
                nxt = paths[k + 1] if k + 1 < len(runs) else ""
                pages[paths[k]] = Page(chapter_page(title, run, next_page=nxt, h1=f"{title}（{k + 1}/{len(runs)}）",
                                                    **common),
                                       kind="chapter" if k == 0 else "part", copies=i, text="\n".join(run))
            # Part 2 is in the catalogue too: fetched through its own link, maybe before its chain.
            items.append(f"<dd><a href='{paths[1]}'>{esc(title)}（中）</a></dd>")
        elif i == 2:
            runs = halves(lines, 2)
            second = f"/b/9/{i + 1}_2.html"
            for k, (path, run) in enumerate(((url(i), runs[0]), (second, runs[1]))):
                pages[path] = Page(chapter_page(title, run, h1=f"{title}（{k + 1}/2）", **common),
                                   kind="chapter" if k == 0 else "lone part", copies=i, text="\n".join(run))
            items.append(f"<dd><a href='{second}'>{esc(title)}（下）</a></dd>")
        else:
            pages[url(i)] = Page(chapter_page(title, lines, **common), kind="chapter", copies=i, text=text)
    pages["/b/9/"] = Page(doc("山城旧事", f"<div id='list'><dl>{''.join(items)}</dl></div>"), kind="catalogue")
    pages["/"] = Page(doc("布局小说网", "<a href='/b/9/'>山城旧事</a>"), kind="home")
    return pages


_ART: dict[str, bytes] = {}


def cover_art() -> dict[str, bytes]:
    """The registered images ("cover.png", "illustration.png"), the pirate site's copies of them
    ("cover copy", half size in JPEG; "illustration copy", cropped 4% and watermarked) and an
    unrelated "logo"; made once, the same every time."""
    if not _ART:
        import random

        from bench.images import cover, encode, transforms

        rng = random.Random(11)
        front, _ = cover(rng, title="Rain City")
        art, _ = cover(rng, title="The Map")
        logo, _ = cover(rng, title="LAYOUT")
        _ART.update({
            "cover.png": encode(front), "illustration.png": encode(art),
            "cover copy": encode(transforms(front, rng)["resized to half"], "JPEG", quality=70),
            "illustration copy": encode(transforms(art, rng)["cropped 4% on every side"], "PNG"),
            "logo": encode(logo.resize((120, 40)), "PNG"),
        })
    return _ART


def covers(chapters: Sequence[tuple[str, str]]) -> dict[str, Page]:
    """A book page and chapters that show copies of the registered cover and illustration."""
    import base64

    art = cover_art()
    pages: dict[str, Page] = {}
    n = len(chapters)
    url = lambda i: f"/b/5/{i + 1}.html" if 0 <= i < n else "/b/5/"  # noqa: E731
    inline = "data:image/jpeg;base64," + base64.b64encode(art["cover copy"]).decode()
    sidebar = "<div class='side'><img src='{IMGROOT}/covers/5.jpg' alt='封面'></div>"
    items = "".join(f"<li><a href='{url(i)}'>{esc(t)}</a></li>" for i, (t, _) in enumerate(chapters))
    book = doc("山城旧事", "<div id='info'><img src='/logo.png' width='240' height='90'><h1>山城旧事</h1>"
                          "<img src='/px.gif' width='1' height='1'><img src='/fake.jpg'><img src='/gone.jpg'>"
                          "<span style='display:none'><img src='/hidden.png'></span></div>"
                          f"<ul class='chapters'>{items}</ul>")
    book = book.replace(b"<head>", b"<head><meta property='og:image' content='{IMGROOT}/covers/5.jpg'>", 1)
    pages["/b/5/"] = Page(book, kind="catalogue")
    for i, (title, text) in enumerate(chapters):
        picture = (f"<img src='{inline}' alt='封面'>" if i == 1 else
                   "<img src='data:image/gif;base64,R0lGODlhAQABAAAAACw=' data-original='{IMGROOT}/ill/1.png'>")
        body = (f"<div class='bookname'><h1>{esc(title)}</h1></div>{sidebar}{picture}"
                f"{p_block('.read-content', lines_of(text))}<a href='{url(i + 1)}'>下一章</a>")
        pages[url(i)] = Page(doc(title, body), kind="chapter", copies=i, text=text)
    pages["/covers/5.jpg"] = Page(art["cover copy"], content_type="image/jpeg", kind="image")
    pages["/ill/1.png"] = Page(art["illustration copy"], content_type="image/png", kind="image")
    pages["/logo.png"] = Page(art["logo"], content_type="image/png", kind="image")
    pages["/px.gif"] = Page(base64.b64decode("R0lGODlhAQABAAAAACw="), content_type="image/gif", kind="image")
    pages["/hidden.png"] = Page(art["logo"], content_type="image/png", kind="image")
    pages["/fake.jpg"] = Page(b"<html><body>hotlinking not allowed</body></html>", content_type="text/html",
                              kind="image")
    pages["/"] = Page(doc("布局小说网", "<a href='/b/5/'>山城旧事</a>"), kind="home")
    return pages


_PICTURES: dict[str, bytes] = {}


def chapter_pictures(text: str) -> dict[str, bytes]:
    """`text` drawn as a reading app's screenshots ("1.jpg", "2.jpg": dark theme, a site's watermark,
    a status bar) and a photo-like picture ("photo.jpg"), by bench/pictures/render.py; made once."""
    if not _PICTURES:
        import io

        from bench.pictures.render import (
            Style,
            available_fonts,
            render_chapter,
            render_textless,
        )

        def jpeg(image) -> bytes:
            out = io.BytesIO()
            image.convert("RGB").save(out, "JPEG", quality=85)
            return out.getvalue()

        drawn = render_chapter(text, seed=5, style=Style(font=available_fonts()[0], pages=2, theme="dark",
                                                         watermark="图文小说网 www.layout-fake.test"))
        _PICTURES.update({f"{k}.jpg": jpeg(p.image) for k, p in enumerate(drawn, 1)})
        _PICTURES["photo.jpg"] = jpeg(render_textless("noise", 3, (800, 600)).image)
    return _PICTURES


def pictures(chapters: Sequence[tuple[str, str]]) -> dict[str, Page]:
    """A book whose second chapter is posted as two pictures (no text on its page but a line asking
    to wait for them) with a photo between them; the other chapters as text."""
    pages: dict[str, Page] = {}
    n = len(chapters)
    url = lambda i: f"/p/9/{i + 1}.html" if 0 <= i < n else "/p/9/"  # noqa: E731
    items = "".join(f"<li><a href='{url(i)}'>{esc(t)}</a></li>" for i, (t, _) in enumerate(chapters))
    pages["/p/9/"] = Page(doc("山城旧事", f"<h1>山城旧事</h1><ul class='chapters'>{items}</ul>"), kind="catalogue")
    drawn = chapter_pictures(chapters[1][1]) if n > 1 else {}
    for i, (title, text) in enumerate(chapters):
        if i == 1:
            shown = ("<div id='content'><p>本章为图片章节，请耐心等待图片加载。</p>"
                     "<img src='{IMGROOT}/pic/9/2-1.jpg' alt=''><img src='{IMGROOT}/pic/9/photo.jpg' alt=''>"
                     "<img data-original='{IMGROOT}/pic/9/2-2.jpg' src='data:image/gif;base64,R0lGODlhAQABAAAAACw='>"
                     "</div>")
            kind = "pictures"
        else:
            shown, kind = p_block(".read-content", lines_of(text)), "chapter"
        body = f"<div class='bookname'><h1>{esc(title)}</h1></div>{shown}<a href='{url(i + 1)}'>下一章</a>"
        pages[url(i)] = Page(doc(title, body), kind=kind, copies=i, text=text)
    for name, path in (("1.jpg", "/pic/9/2-1.jpg"), ("2.jpg", "/pic/9/2-2.jpg"), ("photo.jpg", "/pic/9/photo.jpg")):
        if name in drawn:
            pages[path] = Page(drawn[name], content_type="image/jpeg", kind="image")
    pages["/"] = Page(doc("布局小说网", "<a href='/p/9/'>山城旧事</a>"), kind="home")
    return pages


LAYOUTS: dict[str, Callable[[Sequence[tuple[str, str]]], dict[str, Page]]] = {
    "biquge": biquge, "qidian": qidian, "wap": wap, "sitemap": sitemap, "split": split, "covers": covers,
    "pictures": pictures,
}


# ---------------------------------------------------------------------------- serving


class LayoutSite:
    """Serve one layout on 127.0.0.1 from a daemon thread; use as a context manager."""

    def __init__(self, layout: str, chapters: Sequence[tuple[str, str]], *, validators: bool = True):
        self.layout = layout
        self.pages = LAYOUTS[layout](list(chapters))
        self.validators = validators
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def image_url(self) -> str:
        """The same server under another host name: an image server, outside the site's domain."""
        return self.url.replace("127.0.0.1", "localhost")

    def paths(self, *kinds: str) -> set[str]:
        return {p for p, page in self.pages.items() if page.kind in kinds}

    def answer(self, path: str, headers) -> tuple[int, list[tuple[str, str]], bytes]:
        page = self.pages.get(path)
        if page is None:
            return 404, [("Content-Type", "text/html; charset=utf-8")], b"<html><body>404</body></html>"
        body = page.body.replace(b"{ROOT}", self.url.encode()).replace(b"{IMGROOT}", self.image_url.encode())
        if path.endswith(".gz"):
            body = gzip.compress(body, mtime=0)
        out = [("Content-Type", page.content_type)]
        if self.validators and page.status == 200:
            etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
            out += [("ETag", etag), ("Last-Modified", LAST_MODIFIED)]
            if headers.get("If-None-Match") == etag or (
                    not headers.get("If-None-Match") and headers.get("If-Modified-Since") == LAST_MODIFIED):
                return 304, out[1:], b""
        return page.status, out, body

    def __enter__(self) -> LayoutSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, headers, body = site.answer(self.path, self.headers)
                conditional = bool(self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since"))
                with site._lock:
                    site.hits.append(Hit(self.path, conditional, status, len(body)))
                try:
                    self.send_response(status)
                    for k, v in headers:
                        self.send_header(k, v)
                    if status != 304:
                        self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
