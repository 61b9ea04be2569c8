"""Which site a URL belongs to: the one whose start URLs hold it (the crawler and discovery agree)."""
from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import SplitResult, urlsplit


def bare_host(url: str) -> str:
    """The host of a URL, lower case, without "www." and the port."""
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def start_urls_cover(start_urls: Iterable[str], url: str) -> bool:
    """Whether one of the start URLs holds `url`: the same host (with or without "www."), the same
    port, and a path under the start URL's. "https://b.test/book/1/" holds "http://www.b.test/book/1/2.html",
    not "https://b.test/book/12/" nor "https://b.test:8080/book/1/"; "https://b.test/" holds the whole host."""
    want = urlsplit(url)
    for start in start_urls:
        have = urlsplit(start)
        if bare_host(start) != bare_host(url) or _port(have) != _port(want):
            continue
        prefix, path = have.path or "/", want.path or "/"
        if path == prefix or path.startswith(prefix if prefix.endswith("/") else prefix + "/"):
            return True
    return False


def _port(parts: SplitResult) -> int | None:
    """An explicit port; the default ports (80, 443, none) are all the same site."""
    try:
        port = parts.port
    except ValueError:  # not a number: never the same as a site's
        return -1
    return None if port in (None, 80, 443) else port
