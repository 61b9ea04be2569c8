"""The evidence of a copy: both texts, the copied passages in each, the scores per channel;
for a stored match, and for a text pasted into "check this text now"."""
from __future__ import annotations

from typing import Any

from fingerprint.engine import verdict_reason
from fingerprint.models import Document
from fingerprint.track import Tracker
from tracker.pipeline import of_whole_works
from tracker.store import NotFound, Store
from tracker.wording import copy_kind, copy_summary, score_lines

from .catalog import Outline
from .highlight import excerpt, segments, side_spans
from .reports import page_row


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


def _pieces(text: str, spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [{"text": t, "copied": copied} for t, copied in segments(text, spans)]


def match_evidence(store: Store, outline: Outline, page: str, chapter: str) -> dict[str, Any]:
    """A stored match with both texts, the passages, scores and status history. Raises NotFound."""
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
    return {
        "match": {"page": m.page, "chapter": m.chapter, "chapter_title": outline.title(m.chapter), "work": m.work,
                  "site": m.site, "verdict": m.verdict, "similarity": m.similarity, "containment": m.containment,
                  "verdict_why": verdict_reason(m.containment, m.page_share, m.verdict),
                  "kind": copy_kind(m.verdict),
                  "summary": copy_summary(m.verdict, m.containment, m.page_share, m.spans),
                  "page_share": m.page_share, "scores": dict(m.scores), "score_lines": score_lines(m.scores),
                  "spans": list(m.spans), "status": m.status,
                  "first_seen": m.first_seen, "last_seen": m.last_seen, "history": list(m.history)},
        "page": None if p is None else {**page_row(p), "text": p.text},
        "chapter": None if ch is None else {"key": ch.key, "work": ch.work, "title": ch.title, "number": ch.number,
                                            "text": ch.text},
        "passages": passages(m.spans, page_text, original),
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
        results.append({
            "chapter": m.original, "chapter_title": outline.title(m.original), "work": m.original.split("/", 1)[0],
            "verdict": m.verdict, "similarity": m.similarity, "containment": m.containment,
            "verdict_why": verdict_reason(m.containment, m.page_share, m.verdict, tracker.config),
            "kind": copy_kind(m.verdict),
            "summary": copy_summary(m.verdict, m.containment, m.page_share, spans, "text"),
            "page_share": m.page_share, "scores": dict(m.scores), "score_lines": score_lines(m.scores), "spans": spans,
            "passages": passages(spans, text, original),
        })
    all_spans = [span for r in results for span in side_spans(r["spans"], "page")]
    return {"chars": len(text), "units": prepared.units, "matches": results,
            "text_segments": _pieces(text, all_spans)}
