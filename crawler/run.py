"""Run a crawl from Python: `fptrack crawl`, the daily re-crawl and the tests call this.

Scrapy's reactor runs once per process, so a program that crawls more than
once (the Celery worker's daily run) starts `python -m crawler` instead.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tracker.safe_names import check_job
from tracker.settings import Settings

from .counts import by_site
from .frontier import (
    FRONTIER_ERROR,
    REDIS_DOWN,
    SHARED_IDLE_WAIT,
    FrontierUnavailable,
    Membership,
    clear_frontier,
    frontier_settings,
    job_name,
)
from .rules import SiteRules
from .tracking import JOB, PROCESS_PAGES, TRACKER_SETTINGS

#: Outcomes after which the job's frontier is kept, so that the next crawl resumes it.
RESUMABLE = ("shutdown", "closespider_pagecount", "closespider_timeout", "closespider_itemcount", REDIS_DOWN)


@dataclass
class CrawlLimits:
    max_pages: int | None = None  # responses fetched in this run (the rest is resumable)
    depth: int | None = None  # links followed from a start URL
    timeout: float | None = None  # seconds per request
    retries: int | None = None
    max_bytes: int | None = None  # largest response accepted
    delay: float | None = None  # seconds between requests to one site (AutoThrottle adapts from there)
    concurrency: int | None = None  # requests at once to one site


@dataclass
class CrawlResult:
    job: str
    outcome: str  # Scrapy's finish reason
    sites: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # counters.by_site
    resumable: bool = False
    error: str = ""  # why the crawl stopped early (a Redis failure), with the fix; one line


def crawl_settings(settings: Settings, sites: Sequence[SiteRules], limits: CrawlLimits, job: str, *,
                   process: bool = True, log_level: str = "WARNING") -> dict[str, Any]:
    """Scrapy settings for one crawl, on top of crawler.settings."""
    out: dict[str, Any] = {
        TRACKER_SETTINGS: settings, PROCESS_PAGES: process, JOB: job, "LOG_LEVEL": log_level,
        **frontier_settings(settings, job),
    }
    if settings.extract_processes >= 0:
        out["FPT_EXTRACT_PROCESSES"] = settings.extract_processes
    if settings.redis_url:
        # Shared frontier: a crawler holds only the requests it is fetching, and leaves the rest
        # in Redis for the others (Scrapy would otherwise pull CONCURRENT_REQUESTS of them at once).
        per_site = limits.concurrency or _default("CONCURRENT_REQUESTS_PER_DOMAIN")
        out["CONCURRENT_REQUESTS"] = max(1, per_site * max(1, len(sites)))
    if limits.max_pages:
        out["CLOSESPIDER_PAGECOUNT"] = limits.max_pages
    for key, value in (("DEPTH_LIMIT", limits.depth), ("DOWNLOAD_TIMEOUT", limits.timeout),
                       ("RETRY_TIMES", limits.retries), ("DOWNLOAD_MAXSIZE", limits.max_bytes),
                       ("DOWNLOAD_DELAY", limits.delay), ("CONCURRENT_REQUESTS_PER_DOMAIN", limits.concurrency)):
        if value is not None:
            out[key] = value
    if limits.delay is not None:
        out["AUTOTHROTTLE_START_DELAY"] = max(limits.delay, 0.01)
    if limits.max_bytes is not None:
        out["DOWNLOAD_WARNSIZE"] = min(limits.max_bytes, 1024 * 1024)
    slots: dict[str, dict[str, Any]] = {}
    for site in sites:  # politeness from each site's rules, per host
        slot = {k: v for k, v in (("delay", site.delay), ("concurrency", site.concurrency)) if v is not None}
        if slot:
            for domain in site.domains:
                slots[domain] = slots[f"www.{domain}"] = slot
    if slots:
        out["DOWNLOAD_SLOTS"] = slots
    return out


def run_crawl(settings: Settings, sites: Sequence[SiteRules], limits: CrawlLimits | None = None, *,
              job: str = "", fresh: bool = False, process: bool = True, log_level: str = "WARNING",
              on_response=None) -> CrawlResult:
    """Crawl `sites` (blocking) and store their pages through the tracker; returns what happened.

    `on_response(url)` is called for every response (progress display)."""
    limits = limits or CrawlLimits()
    # Checked before anything is created or deleted: the name becomes a folder under FPT_HOME.
    job = check_job(job) if job else job_name([s.name for s in sites])
    member = Membership(settings, job)
    member.join()  # JobBusy when the job runs in another process on disk; FrontierUnavailable when Redis fails
    try:
        return _run(settings, sites, limits, job, member, fresh=fresh, process=process, log_level=log_level,
                    on_response=on_response)
    finally:
        member.leave()


def _run(settings: Settings, sites: Sequence[SiteRules], limits: CrawlLimits, job: str, member: Membership, *,
         fresh: bool, process: bool, log_level: str, on_response) -> CrawlResult:
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    from .spiders.novel import NovelSpider

    if fresh:
        clear_frontier(settings, job)
    base = _default_settings()
    base.setdict(crawl_settings(settings, sites, limits, job, process=process, log_level=log_level),
                 priority="cmdline")
    base.set("LOG_INSTALL_ROOT_HANDLER", log_level != "NONE", priority="cmdline")
    process_ = CrawlerProcess(base)
    if log_level == "NONE":
        logging.getLogger("scrapy").setLevel(logging.CRITICAL)
    elif log_level in ("WARNING", "ERROR"):
        # Pages given up on and pages too large are counted with their reasons in the summary; a
        # robots.txt that could not be fetched is fetched no more, and its site's pages say why they failed.
        for name in ("scrapy.downloadermiddlewares.retry", "scrapy.core.downloader.handlers.http11",
                     "scrapy.core.scraper", "scrapy.downloadermiddlewares.robotstxt"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        for handler in logging.getLogger().handlers:  # Scrapy's, installed by CrawlerProcess
            handler.addFilter(one_line)
    crawler = process_.create_crawler(NovelSpider)
    # weak=False: Scrapy holds receivers by weak reference, and a lambda nothing else holds would be
    # collected at once (no heartbeat, no progress).
    crawler.signals.connect(lambda **_: member.beat(), signal=signals.response_received, weak=False)
    if on_response is not None:
        crawler.signals.connect(lambda response, **_: on_response(response.url), signal=signals.response_received,
                                weak=False)
    idle = SHARED_IDLE_WAIT if settings.redis_url else 0
    started = process_.crawl(crawler, sites=[s.to_dict() for s in sites], idle_wait=idle)
    not_started: list[str] = []
    started.addErrback(_redis_failure, settings, not_started)
    process_.start()
    if not_started:  # Redis failed between joining the job and opening the frontier
        raise FrontierUnavailable(not_started[0])
    outcome = crawler.stats.get_value("finish_reason") or "finished"
    error = crawler.stats.get_value(FRONTIER_ERROR) or ""
    if error:
        outcome = REDIS_DOWN
    resumable = outcome in RESUMABLE
    if not resumable and member.leave():  # the last crawler of a shared job clears its frontier
        try:
            clear_frontier(settings, job)
        except FrontierUnavailable as e:  # the next crawl would resume a finished job: say so
            error = f"{e} (the finished crawl's frontier is kept: add --fresh to the next crawl of job {job!r})"
    found = by_site(crawler.stats.get_stats())
    for site in sites:  # a site that answered nothing is reported too
        found.setdefault(site.name, {"counts": {}, "skipped": {}, "failed": {}})
    return CrawlResult(job=job, outcome=outcome, sites=found, resumable=resumable, error=error)


def one_line(record: logging.LogRecord) -> bool:
    """A log filter: a warning or an error is its message's first line, never a traceback (-v shows them)."""
    record.exc_info, record.exc_text, record.stack_info = None, None, None
    message = record.getMessage()
    if "\n" in message:
        record.msg, record.args = message.split("\n", 1)[0], ()
    return True


def _redis_failure(failure, settings: Settings, into: list[str]):
    """The crawl could not start because Redis failed: kept as one line, not a traceback."""
    import redis

    from tracker.redis_client import RedisUnavailable, explain

    if settings.redis_url and failure.check(redis.RedisError, redis.exceptions.RedisClusterException,
                                            RedisUnavailable, OSError):
        into.append(explain(failure.value, settings.redis_url))
        return None
    return failure


def _default(name: str) -> Any:
    from . import settings as defaults

    return getattr(defaults, name)


def _default_settings():
    from scrapy.settings import Settings as ScrapySettings

    s = ScrapySettings()
    s.setmodule("crawler.settings", priority="project")
    return s
