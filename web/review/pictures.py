"""The evidence of a chapter posted as pictures: each picture of the page with the lines it
holds boxed, the copied ones apart, beside the original's passages.

A picture page (tracker.media.pictures) keeps, per line of its text, the picture, the line's box in
the picture's pixels and where the line sits in the text; a match's spans are offsets in that
text, so the lines they cover, and their boxes, follow (`tracker.media.pictures.lines_in`). The
admin and the evidence report draw each picture as an SVG: the picture drawn anew (never the
bytes as served, as for every crawled image) with a rectangle per line, in the picture's own
pixel coordinates, so the boxes stay on their lines at any size and no inline style is needed.
"""
from __future__ import annotations

import base64
import io
from typing import Any

from fingerprint.errors import InputError
from fingerprint.image import load_image
from tracker.media.pictures import is_picture_page, line_map, lines_in
from tracker.store import NotFound, Page, Store

PICTURE_WIDTH = 900  # pixels: the widest a picture is drawn for the admin and the report


def picture_png(data: bytes, width: int = PICTURE_WIDTH) -> bytes:
    """The picture drawn anew as a PNG at most `width` pixels wide (a long screenshot stays long);
    InputError when it cannot be read."""
    from PIL import Image

    img = load_image(data, "the picture")
    if img.width > width:
        img = img.resize((width, max(1, round(img.height * width / img.width))), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    img.save(out, "PNG", optimize=True)
    return out.getvalue()


def picture_evidence(store: Store, page: Page | None, spans: list[dict[str, int]], *,
                     embed: bool = False) -> list[dict[str, Any]]:
    """The pictures of a picture page in page order, each with its size, its lines' boxes (copied or
    not) and what was read there; [] for a text page. embed: each picture also as a data: URI (the
    evidence report stands alone)."""
    if page is None or not is_picture_page(page):
        return []
    where = line_map(page)
    copied = {id(line) for line in lines_in(where, [(s.get("page_start", 0), s.get("page_end", 0)) for s in spans])}
    pictures: dict[str, dict[str, Any]] = {}
    for line in where:
        key = line["picture"]
        entry = pictures.get(key)
        if entry is None:
            entry = pictures[key] = _picture(store, key, embed)
        left, top, right, bottom = line["box"]
        entry["boxes"].append({"x": left, "y": top, "width": max(1, right - left), "height": max(1, bottom - top),
                               "copied": id(line) in copied, "text": page.text[line["start"]:line["end"]]})
    out = [p for p in pictures.values() if p["width"] and p["height"]]
    for n, p in enumerate(out, 1):
        p["n"] = n
        p["copied"] = sum(b["copied"] for b in p["boxes"])
    return out


def _picture(store: Store, key: str, embed: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"key": key, "url": "", "width": 0, "height": 0, "engine": "", "boxes": [],
                             "data_uri": ""}
    try:
        image = store.get_page_image(key)
    except NotFound:  # dropped since: its lines are still in the page's text
        return entry
    entry.update(url=image.url, width=int(image.reading.get("width", 0)), height=int(image.reading.get("height", 0)),
                 engine=image.reading.get("engine", ""), sha256=image.sha256, media_type=image.media_type)
    if embed:
        try:
            entry["data_uri"] = "data:image/png;base64," + base64.b64encode(picture_png(image.data)).decode()
        except InputError:
            entry["data_uri"] = ""
    return entry
