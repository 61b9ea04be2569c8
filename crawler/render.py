"""Render a page in the system's headless chromium, through scrapy-playwright.

Some sites write the chapter with a script (an escaped string put into innerHTML, or
JSON fetched after load): the HTML holds no text, and only a browser shows it. Those
pages, and only those (crawler.middlewares.render decides), are fetched again with
meta {"playwright": True}; scrapy-playwright's download handler renders them in
chromium and hands the spider the DOM as a reader sees it. scrapy-playwright rather
than Selenium: it is a Scrapy download handler chosen per request, so the spider,
the pipelines, the scheduler and the frontier stay as they are, it runs on Scrapy's
asyncio reactor without a thread per browser, and it can abort a page's images,
media and fonts; Selenium would need its own blocking driver loop beside Scrapy's.

The page's scripts run only in the browser. Before its HTML is taken, the elements
and text the browser's computed style hides (display:none, opacity 0, off the page, a
transparent colour, visibility:hidden, a zero font-size) are removed, so extract()
reads what is shown, whatever stylesheet or script hid the rest.

Before anything is removed, a full-page screenshot of the page is taken as evidence of
what a reader saw (crawler.capture keeps it with the page).

Bounded: one browser process, at most PLAYWRIGHT_MAX_CONTEXTS x
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT pages at once, NAVIGATION_TIMEOUT_MS to load, then
at most IDLE_WAIT_MS for the network to go quiet; images, media and fonts are never
downloaded. The browser and Playwright's driver start on the first page that needs
them: a crawl of static sites starts neither.
"""
from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from tracker.browser import chromium_path
from tracker.egress import EgressPolicy, Refused, parse_ip

from .tracking import tracker_settings

__all__ = [
    "NEEDS_BROWSER", "NeedsBrowser", "RenderHandler", "chromium_path", "render_meta", "abort_request",
    "NAVIGATION_TIMEOUT_MS", "IDLE_WAIT_MS", "CONTEXT", "take_screenshot",
]

NEEDS_BROWSER = "needs a browser: install chromium (scripts/system-deps test, or apt-get install chromium)"
NAVIGATION_TIMEOUT_MS = 20_000
IDLE_WAIT_MS = 5_000  # after load: the page's own requests (the chapter's JSON) get this long to finish
SCREENSHOT_TIMEOUT_MS = 10_000
SCREENSHOT_MAX_BYTES = 5_000_000  # a larger full-page PNG is taken again of the visible part only
CONTEXT = "render"  # one browser context for every rendered page: one cache, one process
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--mute-audio"]
_SKIPPED_RESOURCES = frozenset(("image", "media", "font"))
log = logging.getLogger(__name__)

# Runs in the page, after it settled: what the browser's computed style hides is removed
# from the DOM. display:none, opacity 0 and a box laid out far off the page hide an element
# with all it holds; visibility, font-size and a transparent colour are inherited and can be
# undone by a child, so for them each text node asks its parent.
_STRIP_HIDDEN = """() => {
  if (!document.body) return 0;
  const gone = [], mute = [];
  for (const el of document.body.querySelectorAll('*')) {
    const s = getComputedStyle(el);
    if (s.display === 'none' || parseFloat(s.opacity) === 0) { gone.push(el); continue; }
    const r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right < -500 || r.bottom < -500)) { gone.push(el); continue; }
    const transparent = s.color === 'transparent' || /rgba\\([^)]*,\\s*0\\)$/.test(s.color);
    if (s.visibility === 'hidden' || s.visibility === 'collapse' || parseFloat(s.fontSize) === 0 || transparent)
      mute.push(el);
  }
  for (const el of mute)
    for (const n of Array.from(el.childNodes))
      if (n.nodeType === Node.TEXT_NODE) n.remove();
  for (const el of gone) el.remove();
  return gone.length + mute.length;
}"""


class NeedsBrowser(Exception):
    """A page needs rendering and no browser can be started."""


async def wait_quiet(page, idle_ms: int = IDLE_WAIT_MS) -> None:
    """Wait (a bounded time) for the page's requests to finish."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        await page.wait_for_load_state("networkidle", timeout=idle_ms)
    except PlaywrightTimeout:  # a page that polls forever is read as it is by then
        pass


async def strip_hidden(page) -> int:
    """Drop from the DOM what the page hides; returns how many elements."""
    return await page.evaluate(_STRIP_HIDDEN)


async def settle(page, idle_ms: int = IDLE_WAIT_MS) -> int:
    """Wait (a bounded time) for the page's requests to finish, then drop what it hides; returns how many elements."""
    await wait_quiet(page, idle_ms)
    return await strip_hidden(page)


async def take_screenshot(page, max_bytes: int = SCREENSHOT_MAX_BYTES) -> bytes | None:
    """A full-page PNG of the page as a reader sees it, for evidence (crawler.capture); the visible
    part alone when the whole page makes a larger file than `max_bytes`; None when it fails (the
    page is still read)."""
    try:
        shot = await page.screenshot(full_page=True, type="png", timeout=SCREENSHOT_TIMEOUT_MS)
        if len(shot) > max_bytes:
            shot = await page.screenshot(full_page=False, type="png", timeout=SCREENSHOT_TIMEOUT_MS)
        return shot if len(shot) <= max_bytes else None
    except Exception as e:  # a screenshot is evidence, not the text: the page goes on without one
        log.warning("no screenshot of %s: %s: %s", page.url, type(e).__name__, str(e)[:200])
        return None


def render_meta(meta: dict[str, Any], screenshot_max_bytes: int = SCREENSHOT_MAX_BYTES) -> dict[str, Any]:
    """`meta` for fetching a page again in the browser: wait for it to settle, take its screenshot
    (evidence, before anything is removed), then drop what it hides."""
    from scrapy_playwright.page import PageMethod

    return {
        **meta,
        "playwright": True,
        "playwright_context": CONTEXT,
        "playwright_page_goto_kwargs": {"wait_until": "load", "timeout": NAVIGATION_TIMEOUT_MS},
        "playwright_page_methods": [PageMethod(wait_quiet, IDLE_WAIT_MS),
                                    PageMethod(take_screenshot, screenshot_max_bytes),
                                    PageMethod(strip_hidden)],
    }


def abort_request(request) -> bool:
    """PLAYWRIGHT_ABORT_REQUEST: a rendered page's images, media and fonts are never fetched."""
    return request.resource_type in _SKIPPED_RESOURCES


_LOCAL_SCHEMES = frozenset({"data", "blob", "about"})  # answered inside the browser: nothing leaves it


async def refused_by(policy: EgressPolicy, url: str) -> str:
    """Why the browser may not fetch `url` (the page's own sub-requests: scripts, XHR, frames,
    stylesheets), or "": the egress policy on the scheme and on every address of the host."""
    parts = urlsplit(url)
    if parts.scheme in _LOCAL_SCHEMES:
        return ""
    try:
        policy.check_scheme(parts.scheme, url)
        host = parts.hostname or ""
        if parse_ip(host) is not None:
            policy.check_literal(host, url=url)
        elif not policy.host_allowed(host):
            infos = await asyncio.get_running_loop().getaddrinfo(host, parts.port or None, type=socket.SOCK_STREAM)
            for info in infos:
                address = parse_ip(info[4][0])
                if address is not None:
                    policy.check(address, host=host, url=url)
    except Refused as e:
        return str(e)
    except (OSError, ValueError, UnicodeError):
        return ""  # a name that does not resolve: the browser finds that out itself
    return ""


def policy_abort(policy: EgressPolicy):
    """abort_request with the egress policy: a sub-request to a refused address is aborted too."""
    async def abort(request) -> bool:
        if abort_request(request):
            return True
        why = await refused_by(policy, request.url)
        if why:
            log.info("the browser's request %s", why)
        return bool(why)
    return abort


class RenderHandler(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's download handler, started on the first request that asks for the browser.

    Every other request goes through Scrapy's HTTP/1.1 handler as before (the parent class is
    that handler). scrapy-playwright starts Playwright's driver when the engine starts; here
    that waits for the first rendered page, so static crawls start no browser process at all."""

    def __init__(self, crawler) -> None:
        super().__init__(crawler)
        # The browser's own requests (the page, its scripts, frames, XHR) keep to the egress policy too.
        self.abort_request = policy_abort(EgressPolicy.load(tracker_settings(crawler.settings)))
        for receiver in ("_maybe_launch_in_thread", "_engine_started"):
            if hasattr(self, receiver):
                crawler.signals.disconnect(getattr(self, receiver), signal=signals.engine_started)
        self._started = False
        self._broken: str | None = None  # why the browser did not start: said once, then at once for every page
        self._start_lock = asyncio.Lock()

    async def download_request(self, request, spider=None):  # Scrapy >= 2.14 passes the request alone
        if request.meta.get("playwright"):
            await self._start()
        if spider is None:
            return await super().download_request(request)
        return await super().download_request(request, spider)

    async def _start(self) -> None:
        async with self._start_lock:
            if self._started:
                return
            if self._broken is not None:
                raise NeedsBrowser(self._broken)
            path = chromium_path()
            if path is None:
                raise NeedsBrowser(NEEDS_BROWSER)
            self.config.launch_options.setdefault("executable_path", path)
            self.config.launch_options.setdefault("args", LAUNCH_ARGS)
            self.config.launch_options.setdefault("headless", True)
            try:
                await self._launch()
                await self._maybe_launch_browser()
            except Exception as e:  # a chromium that does not start is a missing browser to the crawl
                self._broken = NEEDS_BROWSER
                log.warning("chromium (%s) does not start, pages that need it fail: %s: %s", path, type(e).__name__,
                            str(e)[:300])
                raise NeedsBrowser(NEEDS_BROWSER) from e
            self._started = True
