"""An upload as read into chapters (Upload), the budgets reading one keeps to (Limits), and
UploadError, whose message names the problem and the fix; shared by the readers and registration."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from fingerprint.errors import InputError
from pagetext.sources import ReadReport

from ..registry import ChapterInput

__all__ = ["FIXES", "HAS_CONTENT", "Limits", "MAX_IMAGES", "Upload", "UploadError"]

HAS_CONTENT = re.compile(r"[^\W_]")
MAX_IMAGES = 50  # covers and illustrations registered from one upload
FIXES = "upload a .txt file (split at its chapter headings), a .zip of chapter files, or an .epub"


class UploadError(InputError):
    """An upload that cannot be registered; the message names the problem and the fix."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 32 * 1024 * 1024  # the upload itself
    max_total: int = 64 * 1024 * 1024  # everything a zip decompresses to
    max_entry: int = 32 * 1024 * 1024  # one entry of a zip, decompressed
    max_entries: int = 10_000
    max_ratio: int = 100  # decompressed / compressed, per entry of more than RATIO_FLOOR bytes
    ratio_floor: int = 1024 * 1024


@dataclass
class Upload:
    kind: str  # "zip" | "text" | "epub"
    chapters: list[ChapterInput]
    skipped: ReadReport = field(default_factory=ReadReport)
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (file name, bytes): covers, illustrations
