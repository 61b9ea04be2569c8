"""The gate: has this page's text been judged before, against the same registered chapters?

A page's exact key (fingerprint.textkeys.exact_key: its words and sentences once site
furniture, watermarks and ads are normalised away) is looked up in the Bloom filter
(tracker.seen.filters); when the filter says "maybe", the store's record of that key
(tracker.store.seen_texts) is read, and when it was judged under the same stamp (the engine's
settings, the index's parameters, the registered chapters and how many the index holds:
`stamp`), its matches are the page's, with the spans placed on this page's text. Otherwise
(a new text, a false positive of the filter, a judgement made before chapters were added or
changed, or while the index missed some) the page is judged in full, and once its matches are
stored its judgement is recorded under its key.

Spans are kept twice in a record: as offsets in the page that was judged, used as they are
when a page has the very same text, and as ranges of canonical units, placed on another
page's text (a mirror's offsets differ by its furniture) through that page's units.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import fingerprint
from fingerprint.engine import Prepared
from fingerprint.models import Match, Span
from fingerprint.textkeys import exact_key

from ..store import NotFound, Page
from ..store.seen_texts import SeenText

#: Bump when what a record holds, or how a key is made, changes: older records are then stale.
RECORD_VERSION = 1


def settings_hash(config, params) -> str:
    """Every engine setting (thresholds too), the index's parameters and the engine's release."""
    what = {"engine": config.to_dict(), "index": asdict(params), "record": RECORD_VERSION,
            "version": fingerprint.__version__}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def stamp(settings: str, catalog: tuple[int, str], indexed: int) -> str:
    """What a judgement depends on besides the text: the settings (`settings_hash`), the registered
    chapters (tracker.store catalog_stamp) and how many of them the index holds (an index that lost
    some, or is being rebuilt, judges otherwise)."""
    return hashlib.sha256(json.dumps([settings, list(catalog), int(indexed)]).encode()).hexdigest()[:32]


@dataclass
class Judged:
    """A page's matches, whether they came by lookup, and the record to keep once they are stored."""
    found: list[Match]
    looked_up: bool
    record: SeenText | None = None
    new: bool = True  # the store held no record of the key before


class SeenTexts:
    """The gate of one Context: its filter, its store, and what the judgements are made under."""

    def __init__(self, ctx, seen_filter):
        self.ctx, self.filter = ctx, seen_filter
        self.settings = settings_hash(ctx.config, ctx.params)

    def lookup(self, page: Page, prepared: Prepared) -> Judged:
        """The earlier judgement of the page's text, when there is one made under the current stamp
        (`looked_up`); else a Judged to complete with `judged` once the page is matched."""
        ctx = self.ctx
        # Read before matching: a chapter registered meanwhile makes the record stale, never wrong.
        under = stamp(self.settings, ctx.catalog_judged(), len(ctx.index))
        key = exact_key(prepared.normalized)
        held = None
        if self.filter.might_have(key):
            try:
                held = ctx.store.get_seen_text(key)
            except NotFound:  # a false positive of the filter
                held = None
        if held is not None and held.judged_under == under:
            found = [_placed(m, held, page, prepared) for m in held.matches]
            if all(m is not None for m in found):
                return Judged(found, True)
        record = SeenText(key=key, page=page.key, content_hash=page.content_hash, judged_under=under)
        return Judged([], False, record, new=held is None)

    @staticmethod
    def judged(pending: Judged, found: list[Match], prepared: Prepared) -> Judged:
        """`pending` (from lookup) with the matches the page was just judged to have."""
        pending.found = found
        pending.record.matches = [_kept(m, prepared) for m in found]
        return pending

    def remember(self, judged: Judged) -> None:
        """Keep a full judgement under its key (called once the page's matches are stored)."""
        if judged.record is not None:
            self.ctx.store.put_seen_text(judged.record)
            self.filter.add(judged.record.key, judged.new)

    def close(self) -> None:
        self.filter.close()


def _units(prepared: Prepared, start: int, end: int) -> list[int]:
    """The canonical units of the page inside raw offsets [start, end), as a range."""
    pos = prepared.normalized.unit_pos
    return [int(np.searchsorted(pos, start)), int(np.searchsorted(pos, end))]


def _kept(m: Match, prepared: Prepared) -> dict[str, Any]:
    return {"chapter": m.original, "similarity": float(m.similarity), "containment": float(m.containment),
            "page_share": float(m.page_share), "verdict": m.verdict,
            "scores": {k: v if isinstance(v, int) else float(v) for k, v in m.scores.items()},
            "spans": [vars(s).copy() for s in m.spans],
            "units": [_units(prepared, s.page_start, s.page_end) for s in m.spans]}


def _placed(m: dict[str, Any], held: SeenText, page: Page, prepared: Prepared) -> Match | None:
    """The recorded match as a match of this page; None when its spans do not fit this text."""
    if page.content_hash == held.content_hash:
        spans = [Span(**s) for s in m["spans"]]
    else:
        pos = prepared.normalized.unit_pos
        n = pos.shape[0]
        spans = []
        for s, (u0, u1) in zip(m["spans"], m["units"]):
            if not 0 <= u0 <= u1 <= n:
                return None
            start = int(pos[u0]) if u0 < n else len(page.text)
            end = int(pos[u1 - 1]) + 1 if u1 > u0 else start
            spans.append(Span(page_start=start, page_end=end, original_start=s["original_start"],
                              original_end=s["original_end"]))
    return Match(page=page.key, original=m["chapter"], similarity=m["similarity"], containment=m["containment"],
                 page_share=m["page_share"], scores=dict(m["scores"]), spans=spans, verdict=m["verdict"])
