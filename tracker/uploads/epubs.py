"""EPUB uploads: the documents of the spine, in reading order, each one chapter (their XHTML read
by pagetext.html), and the book's cover images."""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import BinaryIO

from pagetext.encoding import decode
from pagetext.scrub import scrub
from pagetext.sources import ReadReport

from ..registry import ChapterInput
from .upload import HAS_CONTENT, MAX_IMAGES, Upload, UploadError

__all__ = ["read_epub"]


def read_epub(stream: BinaryIO) -> Upload:
    """The spine's documents, in reading order, each one chapter (those without text skipped)."""
    import warnings

    from pagetext.html import html_to_text

    try:
        import ebooklib
        from ebooklib import epub
    except ImportError:  # pragma: no cover - a dependency
        raise UploadError("EPUB uploads need the ebooklib package (pip install 'ebooklib>=0.18')") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            book = epub.read_epub(stream, {"ignore_ncx": True})
    except Exception as e:
        raise UploadError(f"the EPUB cannot be read ({type(e).__name__}: {str(e)[:200]}); "
                          "export it again, or upload its text as a .txt file") from None
    report = ReadReport()
    chapters: list[ChapterInput] = []
    seen: set[str] = set()
    for entry in book.spine:
        idref = entry[0] if isinstance(entry, (tuple, list)) else entry
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        try:
            raw = item.get_content()
            html, _, _ = decode(raw) if isinstance(raw, bytes) else (str(raw), "", 0)
            text, meta = html_to_text(html)
        except Exception as e:
            report.add_skip(item.get_name(), f"unreadable: {e}")
            continue
        text, _ = scrub(text)
        if not HAS_CONTENT.search(text):
            continue  # a cover page, a title page with an image
        title = (scrub(meta.get("title") or "")[0].strip() or _first_line(text)
                 or PurePosixPath(item.get_name()).stem)
        if not HAS_CONTENT.search(text.replace(_first_line(text), "", 1)):
            continue  # a heading alone: a part title, an illustration's caption page
        name = " ".join(title.split())[:80].replace("/", "／") or f"{len(chapters) + 1:04d}"
        if name in seen:
            name = f"{name} ({len(chapters) + 1})"
        seen.add(name)
        chapters.append(ChapterInput(name=name, title=title[:200], text=text, number=len(chapters) + 1))
        report.documents += 1
    if not chapters:
        raise UploadError("the EPUB has no chapters with text in its reading order (spine); "
                          "export it again with its text, or upload the text as a .txt file")
    covers = []
    for item in [*book.get_items_of_type(ebooklib.ITEM_COVER), *book.get_items_of_type(ebooklib.ITEM_IMAGE)]:
        name = PurePosixPath(item.get_name() or "").name
        if item.get_type() == ebooklib.ITEM_COVER or "cover" in name.lower():
            if name and all(name != n for n, _ in covers):
                covers.append((name, item.get_content()))
    return Upload("epub", chapters, report, covers[:MAX_IMAGES])


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:80]
    return ""
