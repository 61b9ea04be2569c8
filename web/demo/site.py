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

The code lives in modules of its own, and every name is importable from here:
    web.demo.pages      `Resource`, the site's constants and the HTML builders of its pages
    web.demo.traps      the calendar and session-id traps made up per request, and `respond`
    web.demo.build      `build_site`
    web.demo.server     `SampleSite`, the HTTP server
    web.demo.chapters   `chapters_from_folder`
"""
from __future__ import annotations

from web.demo.build import build_site
from web.demo.chapters import chapters_from_folder
from web.demo.pages import BOOK_PATH, CHROME_MARKERS, VARIANTS, Resource
from web.demo.pages import NEWS, NEWS_TITLE, ROBOTS_TXT, _s2t  # noqa: F401  (importable from here too)
from web.demo.server import SampleSite
from web.demo.traps import calendar_page, respond  # noqa: F401  (calendar_page: importable from here too)

__all__ = [
    "Resource", "SampleSite", "build_site", "respond", "chapters_from_folder",
    "VARIANTS", "CHROME_MARKERS", "BOOK_PATH",
]
