"""Scrapy settings of the crawler: polite by default, bounded everywhere.

`crawler.run.crawl_settings` layers per-crawl values (limits, the frontier, the
tracker's settings) on top of these.
"""
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

# Safety: bounded responses, time and retries; breadth first so catalogues come before deep chains.
DOWNLOAD_MAXSIZE = 4 * 1024 * 1024
DOWNLOAD_WARNSIZE = 1024 * 1024
DOWNLOAD_TIMEOUT = 30
RETRY_ENABLED = True
RETRY_TIMES = 2
DEPTH_LIMIT = 6
DEPTH_PRIORITY = 1
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
URLLENGTH_LIMIT = 2000
REDIRECT_MAX_TIMES = 5
HTTPERROR_ALLOW_ALL = False

DOWNLOADER_MIDDLEWARES = {
    "crawler.middlewares.truncated.TruncatedMiddleware": 595,  # before decompression (590): is the stream whole?
    "crawler.middlewares.encoding.EncodingMiddleware": 560,  # after decompression (590), before the spider sees text
    "crawler.middlewares.conditional.ConditionalMiddleware": 580,  # If-None-Match for pages already stored
    "crawler.middlewares.render.RenderMiddleware": 555,  # on decoded text, before Retry (550): does a script write the chapter?
}

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
}
# The order pages go through, in numbers: check, then store (and queue for matching).
ITEM_PIPELINES = {
    "crawler.pipelines.validate.ValidatePipeline": 100,
    "crawler.pipelines.store.StorePipeline": 300,
}

# Scrapy's check for generator callbacks that return a value parses the callback's source with
# inspect and ast; its cache is keyed on bound methods, which die with each request, so it ran
# on most responses (a tenth of a static crawl's CPU). The spider's callbacks return nothing.
WARN_ON_GENERATOR_RETURN_VALUE = False

LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
