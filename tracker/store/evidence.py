"""The record of a page's evidence: the page as it was served (a WARC file of the HTTP
exchange) or shown (a screenshot of the rendered page), kept with the page as proof of a
copy, and removed some days after the page is (tracker.evidence.retention)."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .records import now

#: What a piece of evidence is: "warc" (gzip-compressed WARC records, the HTTP exchange as
#: served) or "screenshot" (a full-page PNG of the rendered page).
EVIDENCE_KINDS = ("warc", "screenshot")
MEDIA_TYPES = {"warc": "application/warc", "screenshot": "image/png"}
SUFFIXES = {"warc": ".warc.gz", "screenshot": ".png"}


@dataclass
class Evidence:
    """One file of a page's evidence; unique per (page, sha256)."""
    page: str  # Page.key
    kind: str  # one of EVIDENCE_KINDS
    data: bytes  # the file ("" in listings, which leave the bytes out)
    url: str = ""  # the URL that was fetched
    fetched_at: datetime = field(default_factory=now)
    truncated: bool = False  # a body was cut at FPT_EVIDENCE_MAX_BYTES
    sha256: str = ""  # of data (hex); set by the store
    size: int = 0  # of data; set by the store
    created_at: datetime = field(default_factory=now)
    gone_since: datetime | None = None  # when the page was first found gone from the store

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES.get(self.kind, "application/octet-stream")

    @property
    def file_name(self) -> str:
        """A file name made of the hash alone: never of the URL or anything a site chose."""
        return self.sha256 + SUFFIXES.get(self.kind, ".bin")


def check_evidence(evidence: Evidence) -> None:
    """Raise ValueError for evidence no backend should keep."""
    if evidence.kind not in EVIDENCE_KINDS:
        raise ValueError(f"evidence kind must be one of {', '.join(EVIDENCE_KINDS)}, not {evidence.kind!r}")
    if not isinstance(evidence.data, (bytes, bytearray, memoryview)) or not evidence.data:
        raise ValueError("evidence needs its bytes (data)")
    if not evidence.page:
        raise ValueError("evidence belongs to a page: give its key")
