"""The images a page shows a reader: a book page's cover, a chapter's illustrations.

What a pirate page copies besides the text is its covers and illustrations; these
are the URLs to fetch and check against the registered images. Read after the
page's hidden elements are gone (so a CSS-hidden tracking image is not one), in
document order, after the images the page names as its own picture (og:image,
twitter:image, <link rel="image_src">): a book page names its cover there.

Lazy loading is the rule on novel sites: the real address sits in data-src,
data-original and their kin while src holds a placeholder, or in srcset. An image
whose declared width or height is under MIN_SIDE pixels is an icon, a spacer or a
tracking pixel; vector images and icons (.svg, .ico) are never covers. Inline
data: images are kept when they are small enough to be worth it. At most
MAX_IMAGES a page: a gallery of a hundred thumbnails is not a chapter's picture.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from pagetext.extraction.links import absolute

__all__ = ["MAX_IMAGES", "page_images"]

MAX_IMAGES = 8
MIN_SIDE = 64  # pixels, as the page declares them
MAX_DATA_URI = 700_000  # characters of an inline data: image (about 500 KB of image)
LAZY = ("data-src", "data-original", "data-lazy-src", "data-lazy", "data-echo", "data-url", "data-actualsrc",
        "file", "src")
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpe?g|gif|webp|bmp);base64,", re.I)
_NOT_PICTURES = (".svg", ".svgz", ".ico")
_META = (("meta", "property", "og:image"), ("meta", "name", "og:image"), ("meta", "name", "twitter:image"),
         ("meta", "property", "twitter:image"))


def _declared_small(el) -> bool:
    for name in ("width", "height"):
        value = (el.get(name) or "").strip().lower().removesuffix("px")
        if value.isdigit() and int(value) < MIN_SIDE:
            return True
    return False


def _largest_in_srcset(srcset: str) -> str | None:
    """The candidate of a srcset with the largest width (or density) descriptor; the last one without."""
    best, best_size = None, -1.0
    for candidate in srcset.split(","):
        parts = candidate.split()
        if not parts:
            continue
        size = 0.0
        if len(parts) > 1 and parts[1][:-1].replace(".", "", 1).isdigit() and parts[1][-1:] in ("w", "x"):
            size = float(parts[1][:-1])
        if size >= best_size:
            best, best_size = parts[0], size
    return best


def _resolve(value: str | None, base: str) -> str | None:
    value = (value or "").strip()
    if not value:
        return None
    if value[:5].lower() == "data:":
        return value if len(value) <= MAX_DATA_URI and _DATA_IMAGE.match(value) else None
    url = absolute(value, base)
    if url is None or urlsplit(url).path.lower().endswith(_NOT_PICTURES):
        return None
    return url


def _img_source(el, base: str) -> str | None:
    """The address an <img> really shows: a lazy-loading attribute first, then src, then srcset."""
    for name in LAZY:
        url = _resolve(el.get(name), base)
        if url is None:
            continue
        if name == "src" and url.startswith("data:") and len(url) < 200:
            continue  # a blank pixel while the real picture loads (it may be in srcset)
        return url
    srcset = el.get("data-srcset") or el.get("srcset")
    if srcset:
        url = _resolve(_largest_in_srcset(srcset), base)
        if url:
            return url
    return None  # only a placeholder, or nothing


def page_images(tree, base: str, limit: int = MAX_IMAGES) -> list[str]:
    """Absolute http(s) (or inline data:) URLs of the images the page shows, its own picture first,
    each once, at most `limit`."""
    found: dict[str, None] = {}
    for tag, attr, value in _META:
        for el in tree.iter(tag):
            if (el.get(attr) or "").strip().lower() == value:
                url = _resolve(el.get("content"), base)
                if url:
                    found.setdefault(url)
    for el in tree.iter("link"):
        if "image_src" in (el.get("rel") or "").lower().split():
            url = _resolve(el.get("href"), base)
            if url:
                found.setdefault(url)
    for el in tree.iter("img"):
        if len(found) >= limit:
            break
        if _declared_small(el):
            continue
        url = _img_source(el, base)
        if url:
            found.setdefault(url)
    return list(found)[:limit]
