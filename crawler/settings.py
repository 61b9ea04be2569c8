"""Scrapy settings of the crawler: polite by default, bounded everywhere.

`crawler.run.crawl_settings` layers per-crawl values (limits, the frontier, the
tracker's settings) on top of these.
"""
from scrapy.settings import default_settings as _defaults

BOT_NAME = "fptrack"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
USER_AGENT = "fptrack/0.1 (+content fingerprint tracking; respects robots.txt)"

# Politeness: obey robots.txt, adapt the pace to the server, few requests at once per site.
ROBOTSTXT_OBEY = True
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0.25
DOWNLOAD_DELAY_JITTER = 0.5  # ±50%: a fixed beat is easy for a site to spot
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # no control port on a crawler that reads hostile pages

# Safety: bounded responses, time and retries; breadth first so catalogues come before deep chains
# (DEPTH_PRIORITY), and within one depth the last links first: catalogues list the newest chapters,
# the most copied, last, and a slow page at the end of a long catalogue is waited for while the
# others are fetched, not after them.
DOWNLOAD_MAXSIZE = 4 * 1024 * 1024
DOWNLOAD_WARNSIZE = 1024 * 1024
DOWNLOAD_TIMEOUT = 30
RETRY_ENABLED = True
RETRY_TIMES = 2
DEPTH_LIMIT = 6
DEPTH_PRIORITY = 1
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleLifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.LifoMemoryQueue"
URLLENGTH_LIMIT = 2000
REDIRECT_MAX_TIMES = 5
HTTPERROR_ALLOW_ALL = False

# Components switched off above (cookies, telnet, remote control) are taken out of Scrapy's base
# lists as well: Scrapy imports every listed component, even one set to None, and the remote
# control's module brings aiohttp (with the cookies middleware, a tenth of a second per crawl).
_OFF = ("scrapy.downloadermiddlewares.cookies.CookiesMiddleware", "scrapy.extensions.telnet.TelnetConsole",
        "scrapy.extensions.remote_control.RemoteControl")
DOWNLOADER_MIDDLEWARES_BASE = {k: v for k, v in _defaults.DOWNLOADER_MIDDLEWARES_BASE.items() if k not in _OFF}
EXTENSIONS_BASE = {k: v for k, v in _defaults.EXTENSIONS_BASE.items() if k not in _OFF}

DOWNLOADER_MIDDLEWARES = {
    # First: every request, redirects included, is checked by the egress policy before anything else
    # (robots.txt's own request comes back through here too).
    "crawler.middlewares.egress.EgressMiddleware": 50,
    "crawler.middlewares.truncated.TruncatedMiddleware": 595,  # before decompression (590): is the stream whole?
    "crawler.middlewares.encoding.EncodingMiddleware": 560,  # after decompression (590), before the spider sees text
    "crawler.middlewares.conditional.ConditionalMiddleware": 580,  # If-None-Match for pages already stored
    "crawler.middlewares.render.RenderMiddleware": 555,  # on decoded text, before Retry (550): does a script write the chapter?
    "crawler.middlewares.extract.ExtractMiddleware": 540,  # the page as the spider gets it, in a worker process
}
# Worker processes that extract pages while the crawl fetches others (crawler.middlewares.extract);
# None: one fewer than the cores (at most 4), 0: extract in the crawl's own process. Set from the
# tracker's FPT_EXTRACT_PROCESSES by crawler.run.
FPT_EXTRACT_PROCESSES = None

# Pages whose chapter a script writes are rendered in the system's chromium (crawler.render):
# scrapy-playwright's handler, started only when a page needs it; other requests take
# Scrapy's HTTP/1.1 handler, which it extends. It needs the asyncio reactor, Scrapy's default
# since 2.13 (and what the scrapy-redis frontier runs on as well), named here so that it stays.
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
DOWNLOAD_HANDLERS = {
    "http": "crawler.render.RenderHandler",
    "https": "crawler.render.RenderHandler",
}
PLAYWRIGHT_BROWSER_TYPE = "chromium"
PLAYWRIGHT_MAX_CONTEXTS = 1  # one context (crawler.render.CONTEXT), one browser process
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 3  # pages rendered at once
PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT = 20_000  # ms (crawler.render.NAVIGATION_TIMEOUT_MS)
PLAYWRIGHT_ABORT_REQUEST = "crawler.render.abort_request"  # no images, media or fonts
PLAYWRIGHT_LAUNCH_OPTIONS = {"headless": True}  # the executable is found when the browser starts (FPT_CHROMIUM or PATH)
EXTENSIONS = {
    "crawler.extensions.sitestats.SiteStats": 500,
    "crawler.extensions.heldparts.HeldParts": 510,  # only with a Redis frontier (FPT_HELD_KEY)
}
# The order pages go through, in numbers: check, then store (and queue for matching).
ITEM_PIPELINES = {
    "crawler.pipelines.validate.ValidatePipeline": 100,
    "crawler.pipelines.store.StorePipeline": 300,
}

# Scrapy starts CONCURRENT_ITEMS asyncio tasks (default 100) for the output of every response, to
# run async pipelines side by side; the pipelines here are synchronous and a page yields one item,
# so the other tasks only started and ended: about 0.9 s of a 7 s crawl of 400 static pages.
CONCURRENT_ITEMS = 4
# Scrapy's check for generator callbacks that return a value parses the callback's source with
# inspect and ast; its cache is keyed on bound methods, which die with each request, so it ran
# on most responses (about 5% of a static crawl's CPU). The spider's callbacks return nothing.
WARN_ON_GENERATOR_RETURN_VALUE = False

# The egress policy on every answer of the DNS (crawler.resolver): the address connected to is the
# address checked; private, loopback and link-local ones are refused unless FPT_FETCH_ALLOW lists them.
TWISTED_DNS_RESOLVER = "crawler.resolver.EgressResolver"

LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
