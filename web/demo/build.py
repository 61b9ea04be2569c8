"""`build_site`: every page of the sample pirate site, keyed by path (and query), from a list
of (title, text) chapters; pure, so a benchmark can render pages without a server.
"""
from __future__ import annotations

import datetime as _dt
import itertools
from collections.abc import Sequence
from dataclasses import replace

from web.demo.pages import (
    _PNG,
    BOOK_PATH,
    NEWS,
    NEWS_TITLE,
    ROBOTS_TXT,
    VARIANTS,
    Resource,
    _binary,
    _not_found,
    _Site,
    _text_resource,
)
from web.demo.traps import _with_sid, calendar_page


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
        for k, line in enumerate(lines[:-1], 1):  # noqa: B007  (k, where the loop stops, is the cut)
            acc += len(line)
            if acc >= total / 2:
                break
        return "\n".join(lines[:k]), "\n".join(lines[k:])
    half = len(text) // 2
    return text[:half], text[half:]
