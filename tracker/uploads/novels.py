"""Novels uploaded through the admin or the API: read whole, split into chapters, then registered.

An upload is one of three kinds, told apart by its bytes, not its name:

- a zip of chapter files (a folder of chapters: .txt, .html, JSON Lines), read as
  `fptrack add-work` reads a folder (tracker.registry.chapters_from);
- one text file (any common encoding, or HTML), split at its chapter headings;
- an EPUB, whose chapters are the documents of its spine (ebooklib), their XHTML read
  by the project's HTML reader (pagetext.html).

Reading is safe against hostile files: a zip's entries are counted and decompressed with
a budget (total size, size of one entry, compression ratio), archives inside it are
refused, and entry names never leave the temporary folder they are written to (`..` and
absolute parts are dropped). Every problem is an UploadError whose message names it and
the fix. Nothing is registered until the whole upload is read and split; a registration
that fails half-way is removed again, so the store never holds half a work.

An upload may also be a new edition of a registered work (replace=True): its chapters become
the work's. Unchanged chapters keep their fingerprints, index entries and matches; changed ones
are fingerprinted and indexed again; chapters the edition no longer has leave the index and the
store (their matches stay, for the record). A store failure half-way leaves each chapter in its
old or its new version and raises EditionIncomplete, which says what was done.

Where each part lives: reading (read_upload: the kind told by the bytes, one text or HTML file),
zips (a zip of chapter files, within its budgets), epubs (an EPUB's spine), upload (Upload,
Limits, UploadError), registration (register_upload, replace_work, remove_work,
remove_unfinished). This module is their public face: callers import from here.
"""
from __future__ import annotations

from .reading import read_upload
from .registration import (
    EditionIncomplete,
    EditionReport,
    NoWork,
    WorkExists,
    own_work_id,
    register_upload,
    remove_unfinished,
    remove_work,
)
from .upload import Limits, Upload, UploadError

__all__ = ["EditionIncomplete", "EditionReport", "Limits", "NoWork", "Upload", "UploadError", "WorkExists",
           "own_work_id", "read_upload", "register_upload", "remove_unfinished", "remove_work"]
