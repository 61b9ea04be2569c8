"""URL normalisation and crawler traps.

Pirate sites hand out the same page under many URLs (session ids, tracking
parameters, reordered queries, fragments) and generate endless ones (calendars,
"next day" links, ever-growing query strings). Normalising the URL before the
duplicate filter sees it folds the first kind into one request; the second is
bounded by depth, by a few shape checks here, and by a budget per URL pattern
that stops following a pattern whose pages never hold a chapter.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache, wraps
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

# Query parameters that never change what a page shows.
_DROP_PARAMS = re.compile(r"^(utm_\w+|sid|sessionid|session_id|phpsessid|jsessionid|fbclid|gclid|spm|_t|timestamp)$",
                          re.I)
_PATH_SESSION = re.compile(r";(jsessionid|sid|phpsessid)=[^/?#]*", re.I)
MAX_URL_LENGTH = 400
MAX_QUERY_PARAMS = 6
MAX_SEGMENT_REPEATS = 3
MAX_PATH_DEPTH = 12


def _remembered(fn):
    """`fn` keeping its last answers: pages of a site repeat the same links (navigation, previous and
    next chapter, the catalogue), each parsed once. A URL longer than a link the spider follows is
    not kept, so a hostile page's megabyte-long links cannot fill the memory."""
    cached = lru_cache(maxsize=1024)(fn)

    @wraps(fn)
    def wrapper(url: str) -> str:
        return cached(url) if len(url) <= 4 * MAX_URL_LENGTH else fn(url)

    return wrapper


@_remembered
def normalize_url(url: str) -> str:
    """One spelling per page: lower-case scheme and host, no default port, no fragment,
    no session or tracking parameters, query sorted.

    >>> normalize_url("HTTP://WWW.Example.com:80/a/b.html;jsessionid=XYZ?utm_source=x&b=2&a=1#top")
    'http://www.example.com/a/b.html?a=1&b=2'
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    netloc = host if port is None or (scheme, port) in (("http", 80), ("https", 443)) else f"{host}:{port}"
    path = _PATH_SESSION.sub("", parts.path) or "/"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if not _DROP_PARAMS.match(k)])
    return canonicalize_url(urlunsplit((scheme, netloc, path, query, "")), keep_fragments=False)


@_remembered
def trap_reason(url: str) -> str:
    """Why a URL is not worth following on its shape alone, or "" when it may be."""
    if len(url) > MAX_URL_LENGTH:
        return f"URL longer than {MAX_URL_LENGTH} characters"
    parts = urlsplit(url)
    if len(parse_qsl(parts.query, keep_blank_values=True)) > MAX_QUERY_PARAMS:
        return f"more than {MAX_QUERY_PARAMS} query parameters"
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) > MAX_PATH_DEPTH:
        return f"path deeper than {MAX_PATH_DEPTH} folders"
    if segments and Counter(segments).most_common(1)[0][1] >= MAX_SEGMENT_REPEATS:
        return "a path segment repeated (a relative-link loop)"
    return ""


@_remembered
def url_pattern(url: str) -> str:
    """The shape of a URL: host, path with every run of digits as N, and the query's keys.

    >>> url_pattern("https://a.com/calendar/2026/11/02?d=2026-11-02&view=1")
    'a.com/calendar/N/N/N?d&view'
    """
    parts = urlsplit(url)
    path = re.sub(r"\d+", "N", parts.path)
    keys = sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return f"{parts.hostname or ''}{path}" + (f"?{'&'.join(keys)}" if keys else "")


class PatternBudget:
    """Stop following a URL pattern after `limit` of its pages held no chapter and none did.

    Chapter pages share one pattern by the thousand, so a plain cap per pattern would cut
    real books short; a pattern that keeps producing empty pages (a calendar, a sort
    order, a search) is a trap.
    """

    def __init__(self, limit: int = 40):
        self.limit = limit
        self._fetched: Counter[str] = Counter()
        self._useful: Counter[str] = Counter()

    def seen(self, url: str, useful: bool) -> None:
        p = url_pattern(url)
        self._fetched[p] += 1
        self._useful[p] += bool(useful)

    def exhausted(self, url: str) -> bool:
        p = url_pattern(url)
        return self._useful[p] == 0 and self._fetched[p] >= self.limit
