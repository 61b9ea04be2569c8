"""The small shapes that move between stages: documents in, matches out."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Document:
    """A text to fingerprint: an original chapter or a page that may copy one."""

    key: str  # unique name: file name without extension, JSONL "id", or given
    text: str
    source: str = ""  # where it was read from (path, path:line, "-")
    meta: dict[str, Any] = field(default_factory=dict)  # encoding, format, title, url...


@dataclass
class Skipped:
    """An input that could not be used, kept with the reason so nothing is lost silently."""

    source: str
    reason: str


@dataclass
class Span:
    """A copied passage: [start, end) in the page and in the original, as raw character offsets."""

    page_start: int
    page_end: int
    original_start: int
    original_end: int

    @property
    def length(self) -> int:
        return self.original_end - self.original_start


@dataclass
class Match:
    """One (page, original) pair judged a copy, with its scores and evidence."""

    page: str
    original: str
    similarity: float  # overall similarity of the two texts, 0..1
    containment: float  # share of the original found in the page, 0..1
    page_share: float  # share of the page that is copied from the original, 0..1
    scores: dict[str, float] = field(default_factory=dict)  # per channel
    spans: list[Span] = field(default_factory=list)
    verdict: str = "copy"

    def to_record(self, with_spans: bool = True) -> dict[str, Any]:
        rec = asdict(self)
        if not with_spans:
            rec.pop("spans")
        return rec
