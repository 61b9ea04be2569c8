"""The evidence of a copy: both texts, the copied passages in each, the scores per channel;
for a stored match, and for a text pasted into "check this text now". A translated copy's
evidence is its aligned sentence pairs, in the chapter's order (`translation`)."""
from __future__ import annotations

from typing import Any

from fingerprint.engine import verdict_reason
from fingerprint.models import Document
from fingerprint.track import Tracker
from tracker.pipeline import of_whole_works
from tracker.store import NotFound, Store
from tracker.wording import (
    copy_kind,
    copy_summary,
    is_translation,
    language_name,
    more_pairs,
    other_language,
    page_language,
    score_lines,
)

from ..reports.catalog import Outline
from ..reports.queries import page_row
from .highlight import excerpt, segments, side_spans
from .pictures import picture_evidence


def passages(spans: list[dict[str, int]], page_text: str, original_text: str | None) -> list[dict[str, Any]]:
    """Each copied passage with its offsets and a one-line excerpt from both sides, longest first."""
    out = []
    for s in spans:
        ps, pe = s.get("page_start", 0), s.get("page_end", 0)
        os_, oe = s.get("original_start", 0), s.get("original_end", 0)
        out.append({"page_start": ps, "page_end": pe, "original_start": os_, "original_end": oe,
                    "length": max(0, oe - os_),
                    "page_excerpt": excerpt(page_text, ps, pe),
                    "original_excerpt": excerpt(original_text, os_, oe) if original_text is not None else ""})
    out.sort(key=lambda p: (-p["length"], p["page_start"]))
    return out


ROWS_SHOWN = 200  # aligned pairs on the admin's match page; the evidence report shows them all
SENTENCE_CHARS = 600  # one side of an aligned pair, on one line


def aligned_pairs(spans: list[dict[str, int]], page_text: str, original_text: str | None) -> list[dict[str, Any]]:
    """A translated copy's aligned sentence pairs in the chapter's order: each the original's
    sentence(s) beside the page's, with their offsets, numbered from 1."""
    ordered = sorted(spans, key=lambda s: (s.get("original_start", 0), s.get("page_start", 0)))
    out = []
    for n, s in enumerate(ordered, 1):
        ps, pe = s.get("page_start", 0), s.get("page_end", 0)
        os_, oe = s.get("original_start", 0), s.get("original_end", 0)
        out.append({"n": n, "page_start": ps, "page_end": pe, "original_start": os_, "original_end": oe,
                    "page": excerpt(page_text, ps, pe, SENTENCE_CHARS),
                    "original": excerpt(original_text, os_, oe, SENTENCE_CHARS) if original_text is not None else ""})
    return out


def translation(scores: dict[str, Any], spans: list[dict[str, int]], page_text: str, original_text: str | None,
                shown: int | None = None) -> dict[str, Any] | None:
    """What a page shows of a translated copy: the languages in words, every aligned pair, how
    many of them a page shows (ROWS_SHOWN) and the line saying where the rest are; None for a
    copy in the chapter's own language."""
    if not is_translation(scores):
        return None
    shown = ROWS_SHOWN if shown is None else shown
    lang = page_language(page_text, original_text)
    rows = aligned_pairs(spans, page_text, original_text)
    return {"language": lang, "language_name": language_name(lang) or "the page's language",
            "original_language_name": language_name(other_language(lang)) or "the chapter's language",
            "pairs": rows, "total": len(rows), "shown": min(shown, len(rows)),
            "more": more_pairs(shown, len(rows)) if len(rows) > shown else ""}


def _pieces(text: str, spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [{"text": t, "copied": copied} for t, copied in segments(text, spans)]


def match_evidence(store: Store, outline: Outline, page: str, chapter: str, *, embed: bool = False) -> dict[str, Any]:
    """A stored match with both texts, the passages, scores and status history; for a chapter posted
    as pictures, the pictures with their lines boxed (web.review.pictures; embed: as data: URIs, for the
    report). Raises NotFound."""
    m = store.get_match(page, chapter)
    try:
        p = store.get_page(page)
    except NotFound:  # kept for the record after the page was dropped
        p = None
    try:
        ch = store.get_chapter(chapter)
    except NotFound:  # a deleted chapter keeps its matches
        ch = None
    page_text = p.text if p else ""
    original = ch.text if ch else None
    translated = translation(m.scores, m.spans, page_text, original)
    return {
        "match": {"page": m.page, "chapter": m.chapter, "chapter_title": outline.title(m.chapter), "work": m.work,
                  "site": m.site, "verdict": m.verdict, "similarity": m.similarity, "containment": m.containment,
                  "verdict_why": verdict_reason(m.containment, m.page_share, m.verdict),
                  "kind": copy_kind(m.verdict),
                  "summary": copy_summary(m.verdict, m.containment, m.page_share, m.spans, scores=m.scores,
                                          language=translated["language"] if translated else ""),
                  "page_share": m.page_share, "scores": dict(m.scores), "score_lines": score_lines(m.scores),
                  "spans": list(m.spans), "status": m.status,
                  "first_seen": m.first_seen, "last_seen": m.last_seen, "history": list(m.history)},
        "page": None if p is None else {**page_row(p), "text": p.text},
        "chapter": None if ch is None else {"key": ch.key, "work": ch.work, "title": ch.title, "number": ch.number,
                                            "text": ch.text},
        "passages": passages(m.spans, page_text, original),
        "translation": translated,
        "pictures": picture_evidence(store, p, list(m.spans), embed=embed),
        "page_segments": _pieces(page_text, side_spans(m.spans, "page")),
        "original_segments": _pieces(original, side_spans(m.spans, "original")) if original is not None else [],
    }


def check_text(tracker: Tracker, store: Store, outline: Outline, text: str) -> dict[str, Any]:
    """Which registered chapters a pasted text copies, with the copied passages, as the pipeline judges a page."""
    prepared = tracker.prepare(Document("pasted text", text))
    found = of_whole_works(store, tracker.match(prepared)) if prepared.units else []
    results = []
    hides_work = getattr(store, "hides_work", None)  # an organisation's view (tracker.store.scoped)
    for m in found:
        if hides_work is not None and hides_work(m.original.split("/", 1)[0]):
            continue  # another organisation's chapter: as if it were not registered
        try:
            original = store.get_chapter(m.original).text
        except NotFound:
            original = None
        spans = [vars(s).copy() for s in m.spans]
        translated = translation(m.scores, spans, text, original)
        results.append({
            "chapter": m.original, "chapter_title": outline.title(m.original), "work": m.original.split("/", 1)[0],
            "verdict": m.verdict, "similarity": m.similarity, "containment": m.containment,
            "verdict_why": verdict_reason(m.containment, m.page_share, m.verdict, tracker.config),
            "kind": copy_kind(m.verdict),
            "summary": copy_summary(m.verdict, m.containment, m.page_share, spans, "text", scores=m.scores,
                                    language=translated["language"] if translated else ""),
            "page_share": m.page_share, "scores": dict(m.scores), "score_lines": score_lines(m.scores), "spans": spans,
            "passages": passages(spans, text, original),
            "translation": translated,
        })
    all_spans = [span for r in results for span in side_spans(r["spans"], "page")]
    return {"chars": len(text), "units": prepared.units, "matches": results,
            "text_segments": _pieces(text, all_spans)}
