"""The Scrapy project that finds reposted chapters and hands pages to the tracker.

May import: fingerprint, tracker and crawler (never web).
"""

from fingerprint.moved import keep_old_names

#: Modules that moved when the extraction moved below the tracker: the old names still import, with a
#: DeprecationWarning, until the next release (docs/architecture.md).
MOVED = {
    "crawler.extract": "fingerprint.extraction.page",
    "crawler.extraction": "fingerprint.extraction",
    "crawler.extraction.chapters": "fingerprint.extraction.chapters",
    "crawler.extraction.density": "fingerprint.extraction.density",
    "crawler.extraction.furniture": "fingerprint.extraction.furniture",
    "crawler.extraction.images": "fingerprint.extraction.images",
    "crawler.extraction.letters": "fingerprint.extraction.letters",
    "crawler.extraction.lines": "fingerprint.extraction.lines",
    "crawler.extraction.links": "fingerprint.extraction.links",
    "crawler.extraction.parts": "fingerprint.extraction.parts",
    "crawler.extraction.selection": "fingerprint.extraction.selection",
    "crawler.extraction.sitelines": "fingerprint.extraction.sitelines",
    "crawler.extraction.sitememory": "fingerprint.extraction.sitememory",
    "crawler.extraction.titles": "fingerprint.extraction.titles",
}
keep_old_names(MOVED)
