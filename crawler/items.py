"""The shapes a crawled page, and an image it shows, take on their way from the spider to the store."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from tracker.store import now


@dataclass
class PageItem:
    url: str  # the page's URL (the first part's, for a chapter joined from several pages)
    site: str  # the site's name (its rules' name, or its host)
    text: str  # the main text, parts joined in order
    title: str = ""
    parts: list[str] = field(default_factory=list)  # URLs of every part, in order
    encoding: str = ""
    extractor: str = ""
    referer: str = ""
    depth: int = 0
    fetched_at: datetime = field(default_factory=now)
    etag: str = ""  # the response's validators, for a page of one response (see crawler.middlewares.conditional)
    last_modified: str = ""
    made_by: str = ""  # how the text was made (crawler.middlewares.conditional.made_by)


@dataclass
class ImageItem:
    url: str  # where the image was fetched (an inline data: image: its data URI)
    site: str
    found_on: str  # the page that shows it
    data: bytes  # the body as fetched
    media_type: str = ""
    fetched_at: datetime = field(default_factory=now)
    etag: str = ""
    last_modified: str = ""
    position: int = 0  # its place among the images of the page that shows it (a chapter over pictures)


@dataclass
class NotModifiedItem:
    """A stored page the server answered 304 Not Modified for: still up, as stored."""
    url: str
    site: str
