"""Site rules: what the crawler should know about one site to do better than guessing.

A site with no rules is still crawled: links within its domain are followed,
chapter pages are recognised by their text, and the main text is found
automatically. Rules add start URLs, link patterns, selectors for the title,
content and next-part link, a forced encoding and politeness settings.

A rules file is TOML or JSON: one `[[site]]` table per site (or a single table).

    [[site]]
    name = "biquge"
    start_urls = ["https://www.biquge.test/book/1/"]
    follow = ['/book/\\d+/']        # only links matching one of these (regex) are followed
    deny = ['/search', 'sort=']     # links matching one of these are never followed
    content = "#content"            # CSS, or XPath when it starts with "/" or "("
    title = "h1"
    next_page = "//a[contains(., '下一页')]"
    encoding = "gbk"
    delay = 1.0                     # seconds between requests to this site
    concurrency = 2                 # requests at once to this site
    render = true                   # render pages without chapter text in the browser whenever they hold scripts
    images = false                  # do not fetch the images of its chapter and book pages
    hour = 4                        # its scheduled crawl at 04:00 UTC (default: FPT_RECRAWL_HOUR)
    every = 2                       # every 2 days (1 to 30; default 1)
    recrawl = false                 # its scheduled crawl paused
"""
from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fingerprint.errors import InputError
from pagetext.extraction.page import Selectors
from pagetext.scrub import scrub_value
from tracker.safe_names import clean_site_name
from tracker.sites.schedule import ScheduleError, check_every, check_hour
from tracker.sites.scope import bare_host, start_urls_cover

# Rule patterns are the operator's own and may backtrack, while a hostile page's href can be
# a megabyte long. No link worth following is this long (crawler.urls.trap_reason refuses any
# over 400 characters), so longer URLs match no rule: a pattern's cost per URL stays bounded.
MAX_RULE_URL = 2048


class RulesError(ValueError):
    """A rules file or rule value that cannot be used; the message names it and the fix."""


@dataclass(frozen=True)
class SiteRules:
    name: str = ""  # the site's name in reports; default: the host of its first start URL
    start_urls: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()  # default: the hosts of the start URLs (and their subdomains)
    follow: tuple[str, ...] = ()  # regexes: when given, only matching links are followed
    deny: tuple[str, ...] = ()  # regexes: matching links are never followed
    chapter_urls: tuple[str, ...] = ()  # regexes: pages that are chapters even when their text is short
    title: str = ""  # selectors (see pagetext.extraction.page.Selectors)
    content: str = ""
    next_page: str = ""
    chapter_links: str = ""
    encoding: str = ""  # force this encoding instead of the declared/detected one
    delay: float | None = None  # seconds between two requests to the site
    concurrency: int | None = None  # requests at once to the site
    obey_robots: bool = True
    max_pages: int | None = None  # stop following the site's links after fetching this many of its pages
    depth: int | None = None  # link depth for this site, at most the crawl's (--depth, 6 by default)
    recrawl: bool = True  # crawled on its schedule (false: paused)
    hour: int | None = None  # the UTC hour of its scheduled crawl; None: FPT_RECRAWL_HOUR (tracker.sites.schedule)
    every: int = 1  # days between its scheduled crawls, 1 to 30
    # Render every page that holds scripts and no chapter text in the browser (crawler.render),
    # not only those whose scripts look like they write it.
    render: bool = False
    # Fetch the images of chapter and book pages (size-limited), to match registered covers.
    images: bool = True
    _follow: tuple[re.Pattern, ...] = field(default=(), repr=False, compare=False)
    _deny: tuple[re.Pattern, ...] = field(default=(), repr=False, compare=False)
    _chapters: tuple[re.Pattern, ...] = field(default=(), repr=False, compare=False)

    @property
    def selectors(self) -> Selectors:
        return Selectors(title=self.title, content=self.content, next_page=self.next_page,
                         chapter_links=self.chapter_links)

    @property
    def domains(self) -> tuple[str, ...]:
        if self.allowed_domains:
            return self.allowed_domains
        return tuple(dict.fromkeys(host_of(u) for u in self.start_urls))

    def allows(self, url: str) -> bool:
        """Whether a link may be followed: in the site's domains, not denied, and matching `follow` if given."""
        if len(url) > MAX_RULE_URL:
            return False
        host = host_of(url)
        if not any(host == d or host.endswith("." + d) for d in self.domains):
            return False
        if any(p.search(url) for p in self._deny):
            return False
        return not self._follow or any(p.search(url) for p in self._follow)

    def is_chapter_url(self, url: str) -> bool:
        return len(url) <= MAX_RULE_URL and any(p.search(url) for p in self._chapters)

    def to_dict(self) -> dict[str, Any]:
        """The rules that differ from the defaults, as plain values (for the store and for the spider)."""
        defaults = _DEFAULTS
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
                if not k.startswith("_") and v != defaults[k]}


def host_of(url: str) -> str:
    """The host of a URL, lower case, without "www." and the port."""
    return bare_host(url)


def site_name(url: str) -> str:
    """The default name of the site a URL belongs to: its host, with the port when it is not the default."""
    parts = urlsplit(url)
    host = host_of(url)
    return f"{host}:{parts.port}" if parts.port and parts.port not in (80, 443) else host


_FIELDS = {f.name: f for f in fields(SiteRules) if not f.name.startswith("_")}
_DEFAULTS = {k: v for k, v in asdict(SiteRules()).items() if not k.startswith("_")}
_LISTS = {"start_urls", "allowed_domains", "follow", "deny", "chapter_urls"}


def make_rules(values: Mapping[str, Any], *, where: str = "the rules") -> SiteRules:
    """Checked SiteRules from plain values: unknown keys, bad regexes, selectors and URLs are errors."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in _FIELDS:
            raise RulesError(f"{where}: unknown key {key!r}; known keys: {', '.join(sorted(_FIELDS))}")
        out[key] = _value(key, value, where)
    for url in out.get("start_urls", ()):
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise RulesError(f"{where}: start URL {url!r} is not an http(s) URL; write it in full, "
                             "e.g. https://www.example.com/book/1/")
    if "allowed_domains" in out:
        out["allowed_domains"] = tuple(d.lower().removeprefix("www.") for d in out["allowed_domains"])
    rules = SiteRules(**out)
    if not rules.name and rules.start_urls:
        rules = _replace(rules, name=site_name(rules.start_urls[0]))
    for key in ("title", "content", "next_page", "chapter_links"):
        check_selector(getattr(rules, key), f"{where}: {key}")
    if rules.encoding:
        from pagetext.encoding import charset_codec

        if not charset_codec(rules.encoding):  # unicode_escape or base64 are codecs, not a page's charset
            raise RulesError(f"{where}: {rules.encoding!r} is not a known charset; use e.g. gbk, gb18030, big5, utf-8")
    return _replace(rules, _follow=_patterns(rules.follow, where, "follow"), _deny=_patterns(rules.deny, where, "deny"),
                    _chapters=_patterns(rules.chapter_urls, where, "chapter_urls"))


def rules_for_urls(urls: Iterable[str], known: Iterable[SiteRules] = ()) -> list[SiteRules]:
    """Rules for crawling `urls`: a known site's rules when one of its start URLs covers a URL (its
    start URLs replaced by the given ones), otherwise default rules named after the URL's host (and
    port). Only the site really holding the URL is taken: another site on the same host, or on
    another port of it, is not."""
    known = list(known)
    by_name: dict[str, SiteRules] = {}
    for url in urls:
        site = next((r for r in known if covers(r, url)), None)
        if site is None:
            site = make_rules({"start_urls": [url]}, where=f"the URL {url}")
        prev = by_name.get(site.name)
        start = (prev.start_urls if prev else ()) + (url,)
        by_name[site.name] = _replace(prev or site, start_urls=tuple(dict.fromkeys(start)))
    return list(by_name.values())


def load_rules_file(path: str | Path) -> list[SiteRules]:
    """Every site in a TOML or JSON rules file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise RulesError(f"cannot read the rules file {p}: {e.strerror}") from e
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(raw.decode("utf-8"))
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:  # TOMLDecodeError, JSONDecodeError: ValueErrors
        kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
        raise RulesError(f"the rules file {p} is not valid {kind}: {e}") from e
    data, _ = scrub_value(data)  # JSON "\ud800" escapes: names and URLs must be storable
    tables = data.get("site", data) if isinstance(data, dict) else data
    if isinstance(tables, dict):
        tables = [tables]
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise RulesError(f"the rules file {p} must hold [[site]] tables (TOML) or a list of objects (JSON)")
    sites = [make_rules(t, where=f"{p}, site {i + 1}") for i, t in enumerate(tables)]
    for s in sites:
        if not s.name:
            raise RulesError(f"{p}: a site has neither a name nor start_urls; give it at least one of them")
    return sites


def check_selector(selector: str, where: str) -> None:
    """Raise RulesError when a CSS or XPath selector does not compile."""
    if not selector:
        return
    from lxml import etree
    from lxml.cssselect import CSSSelector

    try:
        if selector.startswith(("/", "(")):
            etree.XPath(selector)
        else:
            CSSSelector(selector)
    except Exception as e:  # cssselect and lxml raise several unrelated error types
        raise RulesError(f"{where}: the selector {selector!r} is not valid ({e}); "
                         "CSS like '#content', or XPath starting with '/'") from None


def _value(key: str, value: Any, where: str) -> Any:
    kind = _FIELDS[key].type
    if key in _LISTS:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
            raise RulesError(f"{where}: {key} must be a list of strings")
        return tuple(items)
    if key in ("delay",):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise RulesError(f"{where}: {key} must be a number of seconds, 0 or more")
        return float(value)
    if key in ("concurrency", "max_pages", "depth"):
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if key == "depth" else 1):
            raise RulesError(f"{where}: {key} must be a whole number, {0 if key == 'depth' else 1} or more")
        return value
    if key in ("hour", "every"):
        if key == "hour" and value is None:  # JSON null: the deployment's hour
            return None
        try:
            return check_hour(value) if key == "hour" else check_every(value)
        except ScheduleError as e:
            raise RulesError(f"{where}: {e}") from None
    if key in ("obey_robots", "recrawl", "render", "images"):
        if not isinstance(value, bool):
            raise RulesError(f"{where}: {key} must be true or false")
        return value
    if not isinstance(value, str):
        raise RulesError(f"{where}: {key} must be a string ({kind})")
    if key == "name":  # one spelling per site, whatever entry it came in by
        try:
            return clean_site_name(value)
        except InputError as e:
            raise RulesError(f"{where}: {e}") from None
    return value.strip()


def _patterns(patterns: Iterable[str], where: str, key: str) -> tuple[re.Pattern, ...]:
    out = []
    for p in patterns:
        try:
            out.append(re.compile(p))
        except re.error as e:
            raise RulesError(f"{where}: {key} pattern {p!r} is not a valid regular expression ({e})") from None
    return tuple(out)


def covers(rules: SiteRules, url: str) -> bool:
    """Whether one of the site's start URLs holds `url` (tracker.sites.scope.start_urls_cover)."""
    return start_urls_cover(rules.start_urls, url)


def _replace(rules: SiteRules, **changes: Any) -> SiteRules:
    from dataclasses import replace

    return replace(rules, **changes)
