"""Per-site crawl counts, kept in Scrapy's stats collector under "site/<name>/...".

The spider, the pipelines and the errbacks count into the same collector, so
one crawl of several sites still reports each site on its own; `by_site` turns
the collector's flat keys into what the store keeps (tracker.store.CrawlRun).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PREFIX = "site/"
#: Images (crawled beside the pages, counted apart): their reasons go to the run's skipped and failed
#: with an "image: " prefix, so that a page's reasons still add up to the page counts.
IMAGE_REASONS = {"images skipped": "skipped", "images failed": "failed"}
#: Pictures read for their text (tracker.media.pictures) likewise, with a "picture: " prefix.
PICTURE_REASONS = {"pictures skipped": "skipped", "pictures failed": "failed"}


def count(stats: Any, site: str, what: str, reason: str = "", n: int = 1) -> None:
    """Add `n` to a site's counter; skipped and failed pages also count under their reason."""
    # "/" separates the parts of a key; a reason or site name holding one must not split it.
    site = site.replace("/", "∕")
    stats.inc_value(f"{PREFIX}{site}/{what}", n)
    if reason:
        stats.inc_value(f"{PREFIX}{site}/{what}:{reason.replace('/', '∕')}", n)


def by_site(values: Mapping[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    """{site: {"counts": {...}, "skipped": {reason: n}, "failed": {reason: n}}} from the collector's values."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for key, value in values.items():
        if not key.startswith(PREFIX) or not isinstance(value, int):
            continue
        site, _, what = key[len(PREFIX):].partition("/")
        entry = out.setdefault(site.replace("∕", "/"), {"counts": {}, "skipped": {}, "failed": {}})
        what, _, reason = what.partition(":")
        if reason:
            reason = reason.replace("∕", "/")
            if what in IMAGE_REASONS:  # kept beside the pages' reasons, told apart by their prefix
                what, reason = IMAGE_REASONS[what], f"image: {reason}"
            elif what in PICTURE_REASONS:
                what, reason = PICTURE_REASONS[what], f"picture: {reason}"
            entry.setdefault(what, {})[reason] = value
        else:
            entry["counts"][what] = value
    return out
