"""Search providers for discovery: a query in, result URLs (with title and snippet) out.

`SearchProvider` is the interface; `HTTPSearchProvider` talks to any search API that
answers JSON: SearXNG's `format=json`, Bing Web Search, Google Custom Search, Brave, or
an in-house engine. What differs between them is data (`SearchConfig`): the URL template,
where the key goes, and the path of the results in the answer; `PRESETS` hold those of
the common APIs. Another provider is a class with `name` and `search()`, named on the
command line as `--provider package.module:Class` (built with the discovery settings).

    FPT_SEARCH_PRESET=searxng
    FPT_SEARCH_URL='https://searx.example.org/search?q={query}&format=json&pageno={page}'

    FPT_SEARCH_PRESET=bing FPT_SEARCH_KEY=...   # the key only ever from the environment
    FPT_SEARCH_URL='https://api.bing.microsoft.com/v7.0/search?q={query}&count={count}&offset={offset}'

Placeholders of the URL template: {query} (URL-encoded), {page} (1, 2, ...), {offset}
(0-based index of the first result), {start} (1-based), {count} (results per page),
{key} (URL-encoded key, for APIs that take it in the URL). Without {page}, {offset} or
{start} the API is asked once per query.
"""
from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol, runtime_checkable

from ..egress import EgressPolicy, FetchError, Refused, fetch

USER_AGENT = "fptrack-discovery/0.1 (+https://github.com/fptrack)"
MAX_ANSWER_BYTES = 5_000_000  # an answer larger than this is not a page of search results
MAX_WAIT_S = 60.0  # longest Retry-After honoured


class SearchError(Exception):
    """The provider gave no answer to a query; the message is one line with the cause and the fix."""


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str = ""
    snippet: str = ""


@runtime_checkable
class SearchProvider(Protocol):
    """Anything that answers a query with result URLs."""

    name: str

    def search(self, query: str, *, limit: int) -> list[SearchResult]:
        """At most `limit` results, best first; SearchError when there is no answer."""
        ...


@dataclass(frozen=True)
class SearchConfig:
    """How to ask a JSON search API (see the module's docstring for the URL template)."""
    url: str = ""  # FPT_SEARCH_URL
    key: str = ""  # FPT_SEARCH_KEY: never written in a file that is shared or committed
    # FPT_SEARCH_KEY_HEADER: the header that carries the key: a name ("X-Subscription-Token",
    # the value is the key) or "Name: template" ("Authorization: Bearer {key}"); "" when the key is in the URL.
    key_header: str = ""
    results: str = "results"  # FPT_SEARCH_RESULTS: dotted path of the result list in the answer
    results_optional: bool = False  # FPT_SEARCH_RESULTS_OPTIONAL: the API leaves the list out when nothing is found
    url_field: str = "url"  # FPT_SEARCH_URL_FIELD: dotted path of a result's URL inside one result
    title_field: str = "title"  # FPT_SEARCH_TITLE_FIELD
    snippet_field: str = "content"  # FPT_SEARCH_SNIPPET_FIELD
    per_page: int = 10  # FPT_SEARCH_PER_PAGE: the {count} of the template
    interval: float = 2.0  # FPT_SEARCH_INTERVAL: seconds between two requests to the API (its rate limit)
    timeout: float = 15.0  # FPT_SEARCH_TIMEOUT: seconds to wait for one answer
    retries: int = 2  # FPT_SEARCH_RETRIES: more tries after a timeout, a 429 or a 5xx
    backoff: float = 5.0  # FPT_SEARCH_BACKOFF: seconds before the first retry, doubled for each next one
    headers: Mapping[str, str] = field(default_factory=dict)  # more headers (TOML only)

    def check(self) -> None:
        if not self.url:
            raise SearchError("no search API is configured: set FPT_SEARCH_URL (e.g. "
                              "'https://searx.example.org/search?q={query}&format=json&pageno={page}') "
                              "and FPT_SEARCH_PRESET (searxng, bing, google, brave)")
        if "{query}" not in self.url:
            raise SearchError(f"FPT_SEARCH_URL {self.url!r} has no {{query}}: write where the query goes, "
                              "e.g. ...search?q={query}")
        if urllib.parse.urlsplit(self.url).scheme not in ("http", "https"):
            raise SearchError(f"FPT_SEARCH_URL {self.url!r} is not an http(s) URL")
        try:
            self.url.format_map(_Template(query="q", page=1, offset=0, start=1, count=1, key="k"))
        except (ValueError, IndexError):
            raise SearchError(f"FPT_SEARCH_URL {self.url!r} has a lone brace; "
                              "write a literal brace as {{ or }}") from None
        if ("{key}" in self.url or "{key}" in self.key_header) and not self.key:
            raise SearchError("the search API needs a key: set FPT_SEARCH_KEY in the environment")
        if self.per_page < 1 or self.interval < 0 or self.timeout <= 0 or self.retries < 0 or self.backoff < 0:
            raise SearchError("FPT_SEARCH_PER_PAGE must be 1 or more, FPT_SEARCH_TIMEOUT above 0, "
                              "FPT_SEARCH_INTERVAL, FPT_SEARCH_RETRIES and FPT_SEARCH_BACKOFF 0 or more")


#: The answer shapes of common search APIs (their URL still comes from FPT_SEARCH_URL).
PRESETS: dict[str, dict[str, Any]] = {
    "searxng": {"results": "results", "url_field": "url", "title_field": "title", "snippet_field": "content"},
    "bing": {"results": "webPages.value", "results_optional": True, "url_field": "url", "title_field": "name",
             "snippet_field": "snippet", "key_header": "Ocp-Apim-Subscription-Key"},
    "google": {"results": "items", "results_optional": True, "url_field": "link", "title_field": "title",
               "snippet_field": "snippet"},
    "brave": {"results": "web.results", "results_optional": True, "url_field": "url", "title_field": "title",
              "snippet_field": "description", "key_header": "X-Subscription-Token"},
}


def config_from(values: Mapping[str, Any], preset: str = "") -> SearchConfig:
    """A SearchConfig from a preset and then plain values (names of SearchConfig's fields)."""
    if preset and preset not in PRESETS:
        raise SearchError(f"unknown search preset {preset!r}; use one of: {', '.join(PRESETS)}")
    merged = {**PRESETS.get(preset, {}), **{k: v for k, v in values.items() if v is not None}}
    known = {f.name: f for f in fields(SearchConfig)}
    out: dict[str, Any] = {}
    for name, raw in merged.items():
        if name not in known:
            raise SearchError(f"unknown search setting {name!r}; known: {', '.join(sorted(known))}")
        default = getattr(SearchConfig(), name)
        try:
            if isinstance(default, bool):
                out[name] = raw if isinstance(raw, bool) else str(raw).strip().lower() in ("1", "true", "yes", "on")
            elif isinstance(default, (int, float)):
                out[name] = type(default)(raw)
            elif isinstance(default, str):
                out[name] = str(raw)
            else:
                out[name] = dict(raw)
        except (TypeError, ValueError):
            raise SearchError(f"search setting {name} must be a {type(default).__name__}, got {raw!r}") from None
    return replace(SearchConfig(), **out)


class HTTPSearchProvider:
    """A JSON search API over HTTP: rate-limited (one request per `interval` seconds),
    retried with back-off after timeouts, 429 and 5xx, paged until `limit` results."""

    name = "http"

    def __init__(self, config: SearchConfig, *, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, policy: EgressPolicy | None = None):
        config.check()
        self.config = config
        self.policy = policy or EgressPolicy.load()  # the API and the results' addresses (tracker.egress)
        self.refused = 0  # results dropped: their address is not a public one
        self._sleep, self._clock = sleep, clock
        self._last = -float("inf")
        self.requests = 0  # requests sent (tests and the run's summary)

    @property
    def host(self) -> str:
        return urllib.parse.urlsplit(self.config.url).netloc

    def search(self, query: str, *, limit: int) -> list[SearchResult]:
        c = self.config
        paged = any(p in c.url for p in ("{page}", "{offset}", "{start}"))
        out: list[SearchResult] = []
        seen: set[str] = set()
        page = 0
        while len(out) < limit:
            results = self._page(query, page)
            fresh = [r for r in results if r.url not in seen]
            for r in fresh:
                seen.add(r.url)
            out.extend(fresh)
            page += 1
            if not paged or not fresh or len(results) < c.per_page:
                break
        return out[:limit]

    # ---- one page ------------------------------------------------------------

    def _page(self, query: str, page: int) -> list[SearchResult]:
        c = self.config
        url = c.url.format_map(_Template(query=urllib.parse.quote(query, safe=""), page=page + 1,
                                         offset=page * c.per_page, start=page * c.per_page + 1, count=c.per_page,
                                         key=urllib.parse.quote(c.key, safe="")))
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **c.headers}
        if c.key_header and c.key:
            name, sep, value = c.key_header.partition(":")
            headers[name.strip()] = value.strip().replace("{key}", c.key) if sep else c.key
        body, kind = self._fetch(url, headers)
        try:
            data = json.loads(body.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise SearchError(f"the search API at {self.host} answered something that is not JSON "
                              f"({kind or 'no content type'}): check FPT_SEARCH_URL (SearXNG needs format=json "
                              "and the json format enabled in its settings)") from None
        return self._results(data)

    def _results(self, data: Any) -> list[SearchResult]:
        c = self.config
        found = _path(data, c.results)
        if found is _MISSING:
            if c.results_optional and isinstance(data, dict):
                return []
            keys = ", ".join(sorted(map(str, data))[:8]) if isinstance(data, dict) else type(data).__name__
            raise SearchError(f"the answer of the search API at {self.host} has no {c.results!r} (it has: {keys}); "
                              "set FPT_SEARCH_RESULTS to the path of its result list")
        if not isinstance(found, list):
            raise SearchError(f"{c.results!r} in the answer of the search API at {self.host} is not a list; "
                              "set FPT_SEARCH_RESULTS to the path of its result list")
        out = []
        for item in found:
            url = _path(item, c.url_field)
            if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
                continue  # an ad block, an image result, a missing field: not a page to crawl
            try:  # a result on an internal address is no pirate site (a name is checked when crawled)
                self.policy.check_literal(urllib.parse.urlsplit(url.strip()).hostname or "")
            except (Refused, ValueError):
                self.refused += 1
                continue
            title, snippet = _path(item, c.title_field), _path(item, c.snippet_field)
            out.append(SearchResult(url=url.strip(), title=title if isinstance(title, str) else "",
                                    snippet=snippet if isinstance(snippet, str) else ""))
        return out

    def _fetch(self, url: str, headers: dict[str, str]) -> tuple[bytes, str]:
        c = self.config
        problem, wait = "", 0.0  # what went wrong last ("answered HTTP 503", ...), and its Retry-After
        for attempt in range(c.retries + 1):
            if attempt:
                self._sleep(min(MAX_WAIT_S, max(c.backoff * 2 ** (attempt - 1), wait)))
            self._wait_turn()
            self.requests += 1
            try:
                r = fetch(url, policy=self.policy, headers=headers, deadline=c.timeout, max_bytes=MAX_ANSWER_BYTES)
            except FetchError as e:
                if e.reason.startswith("refused"):  # the same answer on every try
                    raise SearchError(f"{e}; the search API is fetched under the same policy as pages") from None
                problem = ("did not answer: " + (f"timed out after {c.timeout:g} s" if e.reason == "timed out"
                                                 else f"cannot be reached ({e.reason})"))
                if e.reason.startswith(("incomplete", "bad answer", "closed")):
                    problem = f"broke off its answer ({e.reason})"
                wait = 0.0
                continue
            if r.truncated:
                raise SearchError(f"the search API at {self.host} answered more than "
                                  f"{MAX_ANSWER_BYTES} bytes: not a page of results; check FPT_SEARCH_URL")
            if r.status == 429 or r.status >= 500:
                problem = f"answered HTTP {r.status}"
                wait = _seconds(r.headers.get("Retry-After"))
                continue
            if r.status >= 300:
                fix = ("check FPT_SEARCH_KEY and FPT_SEARCH_KEY_HEADER" if r.status in (401, 403)
                       else "check FPT_SEARCH_URL")
                raise SearchError(f"the search API at {self.host} refused the query (HTTP {r.status}): {fix}")
            return r.body, r.headers.get("Content-Type", "")
        tries = c.retries + 1
        raise SearchError(f"the search API at {self.host} {problem} ({tries} {'try' if tries == 1 else 'tries'}); "
                          "the query is skipped, the next run sends it again")

    def _wait_turn(self) -> None:
        wait = self._last + self.config.interval - self._clock()
        if wait > 0:
            self._sleep(wait)
        self._last = self._clock()


class _Template(dict):
    def __missing__(self, key: str) -> str:
        raise SearchError(f"FPT_SEARCH_URL holds {{{key}}}, which is not a placeholder; use {{query}}, {{page}}, "
                          "{offset}, {start}, {count} or {key} (write a literal brace as {{ or }})")


_MISSING = object()


def _path(data: Any, path: str) -> Any:
    """data["a"]["b"][0] for "a.b.0"; _MISSING when a step is absent."""
    for step in filter(None, path.split(".")):
        if isinstance(data, dict) and step in data:
            data = data[step]
        elif isinstance(data, list) and step.isdigit() and int(step) < len(data):
            data = data[int(step)]
        else:
            return _MISSING
    return data


def _seconds(retry_after: str | None) -> float:
    """A Retry-After header's seconds (0 when absent or a date), at most MAX_WAIT_S."""
    try:
        return min(MAX_WAIT_S, max(0.0, float(retry_after or 0)))
    except ValueError:
        return 0.0
