"""The keys of Scrapy request and response meta that fptrack's spider, middlewares and pipelines
pass to each other: one place, so that no component imports another to learn a key.

Set by the spider on a request:
"""
from __future__ import annotations

SITE = "fpt_site"  # the site a request belongs to
FORCE_ENCODING = "fpt_encoding"  # the encoding a site's rules force
CONDITIONAL = "fpt_conditional"  # the made_by token of a request whose 304 may stand for the stored page
IMAGE = "fpt_image"  # an image request: a 304 stands for the stored page image
IMAGE_OF = "fpt_image_of"  # the page that shows the image requested
IMAGE_AT = "fpt_image_at"  # the image's place among the page's images (page order)
CHAPTER_LINK = "fpt_chapter_link"  # a catalogue linked the page as a chapter
ROOT = "fpt_root"  # the site root whose robots.txt a request asks for
PARTS = "fpt_parts"  # [(url, title, text), ...] of the parts of a split chapter fetched so far
FLUSH = "fpt_flush"  # URLs of lone later parts to store on their own now (crawler.spiders.chapters)
#: The site's Selectors, on a request whose page the spider extracts: crawler.middlewares.extract
#: extracts it in a worker process ahead of the callback.
EXTRACT = "fpt_extract"

# Set by the middlewares:
SENT = "fpt_validators_sent"  # the validators sent, (etag, last_modified) (conditional)
EXTRACTED = "fpt_extracted"  # (url, Extracted) or (url, "ExceptionName") from an extraction worker (extract)
WORKER_DIED = "extraction process died"  # EXTRACTED's "ExceptionName" when the worker process died
CSS = "fpt_css"  # the text of the page's external stylesheets (extract; crawler.stylesheets)
RECEIVED = "fpt_received"  # bytes of the body received so far (how a cancelled download is told apart)
