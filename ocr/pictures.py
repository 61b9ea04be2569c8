"""Pictures of text read as pages: textness first, then OCR, one Document per post.

A chapter posted as pictures (a long screenshot, or a few screenshots in a row) is a
page like any other once its text is read. This module turns picture files into
Documents the matching takes as they are:

- `picture_posts(paths, join=...)` groups the files into posts. By default pictures in
  one folder named like one post (`ch12-1.png`, `ch12-2.png`; `ch12_1`, `ch12_2`;
  `ch12(1)`, `ch12 (2)`, `ch12（3）`) are one post, in the order of their numbers; `join="all"`
  makes every picture given one post (in the order given, folders in name order);
  `join="none"` reads each picture on its own.
- `PictureReader.read(post)` runs the cheap textness test on each picture, reads the
  ones holding text with OCR (RapidOCR by default, within `ocr.bounds`
  limits and a deadline per picture), and joins their text in order into one Document
  whose meta says how it was read: "ocr" (the engine), "pictures", "lines" (each line's
  text, box in its picture's pixels, and picture number), "characters", "seconds",
  "complete". A post none of whose pictures holds text gives a reason instead, for the
  read report ("a picture with no text: not read"); so does an unreadable file.

The engine is made on the first picture that needs reading (loading the models takes
about half a second and 1 GB), so a run over textless pictures never needs it; a
missing engine raises `EngineMissing`, whose one-line message names the package.

A page read by OCR carries the engine's look-alike misreadings (己/已, 日/曰); the
`ocr` flag in its meta lets the comparison fold look-alikes on both sides
(`fold_for_ocr`) without changing how text against text is judged.
"""
from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fingerprint.errors import InputError
from fingerprint.models import Document
from pagetext.sources import IMAGE_SUFFIXES

__all__ = ["NO_TEXT", "PictureReader", "Post", "fold_for_ocr", "folded_tracker", "is_picture", "ocr_view",
           "picture_posts", "post_part"]

NO_TEXT = "a picture with no text: not read"
MAX_PICTURE_BYTES = 50 * 2**20
# Seconds OCR may spend on one picture (checked before each tile; see ocr.read).
DEADLINE = 60.0
JOIN_MODES = ("auto", "all", "none")
# Whether a page read by OCR is matched with look-alikes folded on both sides (docs/ocr.md:
# measured with bench/pictures_match.py).
FOLD_LOOKALIKES = False


def is_picture(path: str | os.PathLike) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


@dataclass
class Post:
    """The pictures of one page, in reading order, and the key the page gets."""

    key: str
    paths: list[Path]
    shown: str  # how reports name it: the first picture's path, "+N more" when split


def post_part(stem: str) -> tuple[str, int] | None:
    """(base, number) when `stem` ends like a part of a post: "-2", "_2", "(2)", " (2)", "（2）";
    None otherwise. Reads the name from its end, once (no regular expression)."""
    s = stem.rstrip()
    closing = {")": "(", "）": "（"}
    if s and s[-1] in closing:
        opening = closing[s[-1]]
        start = s.rfind(opening)
        digits = s[start + 1:-1] if start > 0 else ""
        if digits.isdigit() and digits.isascii():
            base = s[:start].rstrip()
            return (base, int(digits)) if base else None
        return None
    end = len(s)
    i = end
    while i > 0 and s[i - 1].isascii() and s[i - 1].isdigit():
        i -= 1
    if i == end or i < 2 or s[i - 1] not in "-_":
        return None
    return s[:i - 1], int(s[i:end])


def _pictures_in(given: str) -> list[tuple[Path, str]]:
    """The picture files of one input (a file, or a folder searched recursively, hidden
    files skipped), with the path as the user would write it."""
    path = Path(given)
    if path.is_file():
        return [(path, given)] if is_picture(path) else []
    if not path.is_dir():
        return []
    out = []
    for f in sorted((p for p in path.rglob("*") if p.is_file() and is_picture(p)),
                    key=lambda p: natural(p.relative_to(path).as_posix())):
        rel = f.relative_to(path)
        if not any(part.startswith(".") for part in rel.parts):
            out.append((f, os.path.join(given, *rel.parts)))
    return out


def natural(name: str) -> tuple:
    """A sort key that orders numbers in names by value: page2 before page10."""
    parts: list = []
    run = ""
    for ch in name:
        if ch.isascii() and ch.isdigit():
            run += ch
            continue
        if run:
            parts.append((0, int(run), ""))
            run = ""
        parts.append((1, 0, ch))
    if run:
        parts.append((0, int(run), ""))
    return tuple(parts)


def picture_posts(inputs: Sequence[str], join: str = "auto") -> list[Post]:
    """The pictures among `inputs` grouped into posts (see the module's docstring).

    Keys follow the text files' rule: the file name without extension; a post of parts
    takes the parts' common name ("ch12" for ch12-1.png and ch12-2.png)."""
    if join not in JOIN_MODES:
        raise InputError(f"unknown way to join pictures {join!r}; choose one of: {', '.join(JOIN_MODES)}")
    files = [f for given in inputs if given != "-" for f in _pictures_in(given)]
    if not files:
        return []
    if join == "all":
        first = Path(inputs[0])
        key = first.name if len(inputs) == 1 and first.is_dir() else _common_key(files)
        return [_post(key, files)]
    if join == "none":
        return [_post(p.stem, [(p, shown)]) for p, shown in files]
    groups: dict[tuple[Path, str], list[tuple[int, Path, str]]] = {}
    singles: list[tuple[Path, str]] = []
    for p, shown in files:
        part = post_part(p.stem)
        if part is None:
            singles.append((p, shown))
        else:
            groups.setdefault((p.parent, part[0]), []).append((part[1], p, shown))
    posts: list[tuple[str, Post]] = []
    for (_parent, base), parts in groups.items():
        if len(parts) == 1:  # "scan-3.png" alone is a picture of its own, named as it is
            singles.append((parts[0][1], parts[0][2]))
            continue
        parts.sort(key=lambda t: (t[0], t[2]))
        posts.append((parts[0][2], _post(base, [(p, shown) for _, p, shown in parts])))
    posts += [(shown, _post(p.stem, [(p, shown)])) for p, shown in singles]
    posts.sort(key=lambda t: t[0])
    return [post for _, post in posts]


def _common_key(files: list[tuple[Path, str]]) -> str:
    part = post_part(files[0][0].stem)
    return part[0] if part else files[0][0].stem


def _post(key: str, files: list[tuple[Path, str]]) -> Post:
    shown = files[0][1] + (f" (+{len(files) - 1} more)" if len(files) > 1 else "")
    return Post(key, [p for p, _ in files], shown)


@dataclass
class PictureReader:
    """Reads posts of pictures into Documents; counts what it read and skipped.

    `engine` is an engine name (made on first use) or a ready engine (tests and the
    benchmark pass one, made once)."""

    engine: Any = "rapidocr"
    deadline: float | None = DEADLINE
    threads: int = 1
    pictures_read: int = 0
    textless: int = 0
    seconds: float = 0.0
    _engine: Any = field(default=None, repr=False)

    def _get_engine(self):
        if self._engine is None:
            if isinstance(self.engine, str):
                from ocr.engines import make_engine

                self._engine = make_engine(self.engine, threads=self.threads)
            else:
                self._engine = self.engine
        return self._engine

    def read(self, post: Post) -> Document | str:
        """The post as one Document, or the reason it gives no text (for the read report).
        A missing engine raises EngineMissing: no picture could be read without it."""
        from PIL import Image, UnidentifiedImageError

        from ocr.bounds import Bounds
        from ocr.read import read_picture
        from ocr.textness import textness

        started = time.perf_counter()
        texts: list[str] = []
        lines: list[list[Any]] = []
        complete = True
        read_any = False
        problems: list[str] = []
        for number, path in enumerate(post.paths, 1):
            try:
                if path.stat().st_size > MAX_PICTURE_BYTES:
                    raise InputError(f"larger than {MAX_PICTURE_BYTES // 2**20} MiB; cut it into smaller pictures")
                with Image.open(path) as image:
                    if not textness(image).has_text:
                        self.textless += 1
                        problems.append(NO_TEXT)
                        continue
                    reading = read_picture(image, self._get_engine(), Bounds(deadline=self.deadline))
            except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as e:
                problems.append(f"unreadable picture: {e}; check the file")
                continue
            except InputError as e:
                problems.append(f"unreadable picture: {e}")
                continue
            self.pictures_read += 1
            read_any = True
            complete = complete and reading.complete
            texts.append(reading.text)
            lines += [[line.text, list(line.box), number] for line in reading.lines]
        seconds = time.perf_counter() - started
        self.seconds += seconds
        text = "\n".join(t for t in texts if t)
        if not read_any:
            return problems[0] if len(set(problems)) == 1 else "; ".join(dict.fromkeys(problems))
        if not any(ch.isalnum() for ch in text):
            return "a picture with text OCR could not read: empty reading"
        engine = self._get_engine()
        meta = {"ocr": getattr(engine, "name", str(self.engine)), "format": "picture",
                "path": str(post.paths[0]), "pictures": [str(p) for p in post.paths], "lines": lines,
                "characters": sum(1 for ch in text if not ch.isspace()), "seconds": round(seconds, 2),
                "complete": complete}
        if problems:
            meta["pictures_skipped"] = problems
        return Document(key=post.key, text=text, source=post.shown, meta=meta)


def fold_for_ocr(original_text: str, page: Document) -> str:
    """The original's text as it is compared with `page`: with look-alikes folded
    (ocr.lookalike) when the page was read by OCR, unchanged otherwise.
    Folding maps one character to one, so offsets into the folded text are offsets into
    the original."""
    if not (FOLD_LOOKALIKES and page.meta.get("ocr")):
        return original_text
    from ocr.lookalike import fold

    return fold(original_text)


def ocr_view(page: Document) -> Document:
    """A page read by OCR as the matching sees it: look-alikes folded when FOLD_LOOKALIKES
    (one character for one, so the copied spans' offsets hold for the page as read)."""
    if not (FOLD_LOOKALIKES and page.meta.get("ocr")):
        return page
    from ocr.lookalike import fold

    return Document(key=page.key, text=fold(page.text), source=page.source, meta=page.meta)


def folded_tracker(tracker, originals: Sequence[Document]):
    """The tracker that pages read by OCR are matched with: `tracker` itself, or, when
    FOLD_LOOKALIKES, a second one over the same originals with look-alikes folded (same
    settings and keys, so its matches name the same originals with valid offsets)."""
    if not FOLD_LOOKALIKES:
        return tracker
    from fingerprint.track import Tracker
    from ocr.lookalike import fold

    other = Tracker(tracker.config)
    for doc in originals:
        other.add(Document(key=doc.key, text=fold(doc.text), source=doc.source, meta=doc.meta))
    return other
