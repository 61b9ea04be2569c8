"""Lines a site repeats on many of its pages: furniture that no single page shows as such.

A watermark a site prints once per chapter ("新笔趣阁 最快更新，无弹窗阅读请收藏本站", "Read the
latest chapters first at our site") reads like a line of the story on any one page; across
the pages of one site it is the same line again and again, where the story's lines are not.
`SiteLines` remembers, per site, on how many pages each short line was seen, and once a line
has been seen on enough of them, drops it from the pages that follow.

What it never counts: dialogue and narration (quote marks, a third person), sentences of more
than a short line's length, ornaments (scene breaks), and anything on a page it has not been
shown. A story's formula at every chapter's end ("且听下回分解") is a sentence with its closing
mark and stays. Memory is bounded: at most `max_lines` lines per site are counted, and when the
count is full the lines seen on a single page are forgotten first.
"""
from __future__ import annotations

from collections import Counter

from pagetext.extraction.letters import CJK, LATIN, visible
from pagetext.extraction.lines import narrates

__all__ = ["SiteLines"]

_SENTENCE_END = ("。", "！", "？", "…", "」", "”", "』", "!", "?", ".", "\"", "'")
_MIN_CHARS = 6  # visible characters: shorter lines ("好。", "***") say too little to be a site's
_MAX_CHARS = 80  # longer lines are paragraphs


def _candidate(line: str) -> bool:
    """A short line of words that could be a site's: no dialogue, no narration, no sentence end."""
    n = visible(line)
    if not _MIN_CHARS <= n <= _MAX_CHARS or line.rstrip().endswith(_SENTENCE_END) or narrates(line):
        return False
    letters = CJK.findall(line) + LATIN.findall(line)
    return len(letters) * 2 >= n and len(set(letters)) >= 4


class SiteLines:
    """Per site: how many pages showed each candidate line; lines on enough pages are the site's.

    A line is the site's when at least `pages` pages showed it and it was on at least `share`
    of the pages seen so far. `learn` one page's text, then `clean` the next pages' texts
    (`clean_and_learn` does both, in a crawl's order)."""

    def __init__(self, pages: int = 8, share: float = 0.5, max_lines: int = 1000) -> None:
        if pages < 2 or not 0 < share <= 1 or max_lines < 1:
            raise ValueError("SiteLines needs pages >= 2, 0 < share <= 1 and max_lines >= 1")
        self.pages, self.share, self.max_lines = pages, share, max_lines
        self._seen: dict[str, int] = {}  # site -> pages learned
        self._counts: dict[str, Counter] = {}  # site -> line -> pages that showed it

    def learn(self, site: str, text: str) -> None:
        """Count the candidate lines of one page of `site` (each once, however often it repeats)."""
        self._seen[site] = self._seen.get(site, 0) + 1
        counts = self._counts.setdefault(site, Counter())
        for line in {" ".join(x.split()) for x in text.split("\n")}:
            if line and _candidate(line):
                counts[line] += 1
        if len(counts) > self.max_lines:
            # Forget the lines one page showed: a site's line is on many pages, not one.
            for line in [k for k, n in counts.items() if n <= 1]:
                del counts[line]
            if len(counts) > self.max_lines:  # still full: keep the most frequent
                self._counts[site] = Counter(dict(counts.most_common(self.max_lines)))

    def site_lines(self, site: str) -> set[str]:
        """The lines `site` has shown on enough pages to be its own."""
        seen = self._seen.get(site, 0)
        need = max(self.pages, self.share * seen)
        return {line for line, n in self._counts.get(site, Counter()).items() if n >= need}

    def clean(self, site: str, text: str) -> str:
        """`text` without the lines `site` repeats across its pages."""
        lines = self.site_lines(site)
        if not lines:
            return text
        return "\n".join(x for x in text.split("\n") if " ".join(x.split()) not in lines)

    def clean_and_learn(self, site: str, text: str) -> str:
        """Learn this page of `site`, then return it cleaned of the site's lines."""
        self.learn(site, text)
        return self.clean(site, text)
