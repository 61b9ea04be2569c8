"""Saved chapter pages of real sites with hand-written gold text, and how close each extractor comes.

Layout (kept outside the repository, never committed): DIR/<site>/<name>.html next to
DIR/<site>/<name>.gold.txt, the text a reader of that chapter sees (no title line needed,
no site furniture). A page's language is its gold text's: "zh" when CJK characters are at
least a fifth of its letters, else "en".

Scores are character-level on a bag of characters: both texts are NFKC-normalised,
lower-cased and stripped of whitespace and punctuation, then compared as multisets.
precision = shared / extracted, recall = shared / gold, F1 their harmonic mean. A bag of
characters is linear and blind to order; it counts every kept furniture character against
precision and every lost text character against recall, which is what the crawler's
fingerprints feel. A title line the extractor keeps costs a little precision.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[A-Za-z\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass
class RealPage:
    """One saved page of a real site and its gold text."""

    site: str
    name: str
    html: str
    gold: str

    @property
    def language(self) -> str:
        letters = len(_LETTER.findall(self.gold))
        return "zh" if letters and len(_CJK.findall(self.gold)) >= 0.2 * letters else "en"


def read_pages(folder: Path) -> list[RealPage]:
    """Every <site>/<name>.html under `folder` that has a <name>.gold.txt beside it."""
    pages = []
    for html in sorted(folder.glob("*/*.html")):
        gold = html.with_name(html.name[: -len(".html")] + ".gold.txt")
        if gold.is_file():
            raw = html.read_bytes()
            pages.append(RealPage(html.parent.name, html.stem, _decode(raw), gold.read_text(encoding="utf-8")))
    return pages


def _decode(raw: bytes) -> str:
    from pagetext.encoding import decode_bytes  # the project's own decoding, as the crawler reads pages

    return decode_bytes(raw)[0]


def bag(text: str) -> Counter:
    """The multiset of the letters and digits of `text`, normalised."""
    s = unicodedata.normalize("NFKC", text).lower()
    return Counter(c for c in s if c.isalnum())


def prf(extracted: str, gold: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of `extracted` against `gold`, on bags of characters."""
    got, want = bag(extracted), bag(gold)
    shared = sum((got & want).values())
    p = shared / sum(got.values()) if got else (1.0 if not want else 0.0)
    r = shared / sum(want.values()) if want else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score_pages(pages: list[RealPage], extractors: dict[str, Callable[[str], str]]) -> dict:
    """(extractor, page) -> (precision, recall, F1)."""
    out = {}
    for name, fn in extractors.items():
        for page in pages:
            try:
                text = fn(page.html) or ""
            except Exception:  # a crash is a page with nothing recovered
                text = ""
            out[name, page.site, page.name] = prf(text, page.gold)
    return out
