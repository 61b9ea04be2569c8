"""Takedown notices made from confirmed matches: per site, the work, the chapters, the
URLs, when each copy was seen, what was copied in words, and an excerpt of the copied text
as evidence (for a translated copy: that it is a translation, its aligned-sentence count, and
a few aligned sentence pairs). in_notice decides which matches a notice may name (notice_matches finds them),
for the admin's Takedown page, the API, `fptrack evidence` and the evidence package alike."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from tracker.store import MatchRecord, NotFound, Store
from tracker.wording import (
    EXCERPT,
    FULL_COPY,
    copy_kind,
    copy_sentence,
    is_translation,
    language_name,
    notice_translation,
    page_language,
)

from ..reports.catalog import Outline
from .highlight import excerpt

MAX_ITEMS = 2000  # one notice; more is split by site or work
EXCERPT_CHARS = 120
NOTICE_PAIRS = 3  # aligned sentence pairs quoted for a translated copy
# A notice names only the copies someone has reviewed and confirmed; once it is sent they move to
# takedown-sent (web.review.notices.mark_sent) and are not named again.
NOTICE_STATUSES = ("confirmed",)
CONFIRM_HOW = "confirm them on the Matches page or with `fptrack set-status PAGE CHAPTER confirmed` first"


def in_notice(m: MatchRecord, include_excerpts: bool = False) -> bool:
    """Whether a notice may name this match: a confirmed one; an excerpt (a short quotation,
    which may be fair use) only when the sender includes excerpts."""
    return m.status in NOTICE_STATUSES and (include_excerpts or copy_kind(m.verdict) != EXCERPT)


def notice_matches(store: Store, *, work: str | None = None, site: str | None = None, page: str | None = None,
                   include_excerpts: bool = False, limit: int = MAX_ITEMS) -> tuple[list[MatchRecord], bool]:
    """The matches a notice names (in_notice), by site; and whether there were more than `limit`."""
    kept: list[MatchRecord] = []
    offset = 0
    while len(kept) <= limit:
        batch = store.matches(work=work, site=site, page=page, status=list(NOTICE_STATUSES), sort="site",
                              limit=limit + 1, offset=offset)
        kept += [m for m in batch if in_notice(m, include_excerpts)]
        if len(batch) <= limit:
            break
        offset += len(batch)
    return kept[:limit], len(kept) > limit


def left_out_excerpts(store: Store, *, work: str | None = None, site: str | None = None,
                      page: str | None = None) -> int:
    """Confirmed excerpts a notice leaves out unless they are included (at most MAX_ITEMS counted)."""
    found = store.matches(work=work, site=site, page=page, status=list(NOTICE_STATUSES), limit=MAX_ITEMS)
    return sum(copy_kind(m.verdict) == EXCERPT for m in found)


def nothing_to_notice(store: Store, *, work: str | None = None, site: str | None = None, page: str | None = None,
                      include_excerpts: bool = False, include_how: str = "include excerpts") -> str:
    """Why a notice would name nothing, and what to do: one line for people."""
    what = "".join(part for part in (f" of 《{work}》" if work else "", f" on {site}" if site else "",
                                     f" on the page {page}" if page else ""))
    excerpts = 0 if include_excerpts else left_out_excerpts(store, work=work, site=site, page=page)
    if excerpts:
        return (f"no confirmed full copy or part{what}, only {excerpts} confirmed "
                f"excerpt{'s' if excerpts != 1 else ''} (a short quotation, which may be fair use): "
                f"{include_how} to name {'them' if excerpts != 1 else 'it'}")
    waiting = store.count_matches(work=work, site=site, page=page, status="new")
    if waiting:
        return (f"no confirmed matches{what} ({waiting:,} new match{'es' if waiting != 1 else ''} "
                f"{'await' if waiting != 1 else 'awaits'} review): {CONFIRM_HOW}")
    return f"no confirmed matches{what}: {CONFIRM_HOW}"


def notice_entries(store: Store, outline: Outline, found: Sequence[MatchRecord]) -> list[dict[str, Any]]:
    """What a notice says of each match, sorted by site, URL, work and chapter."""
    works: dict[str, Any] = {}
    items = []
    for m in found:
        if m.work not in works:
            try:
                works[m.work] = store.get_work(m.work)
            except NotFound:
                works[m.work] = None
        w = works[m.work]
        try:
            page = store.get_page(m.page)
            url, text = page.url or m.page, page.text
        except NotFound:
            url, text = m.page, ""
        longest = max(m.spans, key=lambda s: s.get("page_end", 0) - s.get("page_start", 0), default=None)
        translated = _translated(store, m, text, outline.title(m.chapter), w.title if w else m.work)
        items.append({
            "site": m.site, "page": m.page, "url": url, "work": m.work, "work_title": w.title if w else m.work,
            "author": w.author if w else "", "chapter": m.chapter, "chapter_title": outline.title(m.chapter),
            "containment": m.containment, "page_share": m.page_share, "kind": copy_kind(m.verdict),
            "copied": translated["said"] if translated else copy_sentence(m.containment, m.page_share, m.spans),
            "first_seen": m.first_seen, "last_seen": m.last_seen,
            "excerpt": excerpt(text, longest["page_start"], longest["page_end"], EXCERPT_CHARS)
            if longest and text and not translated else "",
            "translation": translated["said"] if translated else "", "pairs": translated["pairs"] if translated else [],
            "language": translated["language"] if translated else "",
        })
    items.sort(key=lambda i: (i["site"], i["url"], i["work"], i["chapter"]))
    return items


def _translated(store: Store, m: MatchRecord, text: str, chapter_title: str, work_title: str) -> dict[str, Any] | None:
    """A translated copy's part of a notice entry: the sentence that says so (tracker.wording),
    and its first NOTICE_PAIRS aligned pairs (original, page) in the chapter's order."""
    if not is_translation(m.scores):
        return None
    try:
        original = store.get_chapter(m.chapter).text
    except NotFound:  # a deleted chapter keeps its matches
        original = ""
    lang = page_language(text, original)
    said = notice_translation(m.scores, m.containment, m.page_share, lang, chapter_title, work_title)
    spans = sorted(m.spans, key=lambda s: s.get("original_start", 0))[:NOTICE_PAIRS]
    pairs = [{"original": excerpt(original, s.get("original_start", 0), s.get("original_end", 0), EXCERPT_CHARS),
              "page": excerpt(text, s.get("page_start", 0), s.get("page_end", 0), EXCERPT_CHARS)} for s in spans]
    return {"said": said, "pairs": [p for p in pairs if p["original"] and p["page"]],
            "language": language_name(lang)}


def notice_items(store: Store, outline: Outline, *, work: str | None = None, site: str | None = None,
                 include_excerpts: bool = False, limit: int = MAX_ITEMS) -> tuple[list[dict[str, Any]], bool]:
    """The entries of a notice (notice_matches, notice_entries); and whether there were more than `limit`."""
    # notices.mark_sent moves the matches listed here with the same query: keep the two alike
    found, more = notice_matches(store, work=work, site=site, include_excerpts=include_excerpts, limit=limit)
    return notice_entries(store, outline, found), more


def _verb(translated: list[bool], one: bool) -> str:
    """What the listed pages do: reproduce, translate (a translation needs the rights holder's
    permission as a copy does), or both."""
    verb = "translates" if all(translated) else "reproduces or translates" if any(translated) else "reproduces"
    if one:
        return verb + " "
    return {"translates": "translate ", "reproduces or translates": "reproduce or translate "}.get(verb, "reproduce ")


def _when(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def notice_text(items: list[dict[str, Any]], *, sender: str = "", contact: str = "", today: date | None = None,
                more: bool = False, empty: str = "") -> str:
    """The notice as plain text, one section per site, ready to edit and send; with no items,
    `empty` (see nothing_to_notice) rather than a notice naming nothing."""
    today = today or datetime.now(UTC).date()
    sender = sender.strip() or "[name of the rights holder]"
    contact = contact.strip() or "[postal address, e-mail and telephone]"
    if not items:
        why = empty or f"no confirmed matches: {CONFIRM_HOW}"
        return f"No notice: {why}.\n"
    by_site: dict[str, list[dict[str, Any]]] = {}
    for i in items:
        by_site.setdefault(i["site"], []).append(i)
    sections = []
    for site, rows in by_site.items():
        works = {(r["work_title"], r["author"]) for r in rows}
        one_work, pages = len(works) == 1, len({r["url"] for r in rows})
        lines = [
            "NOTICE OF COPYRIGHT INFRINGEMENT",
            "",
            f"Date: {today.isoformat()}",
            f"To: the operator of the site {site or '(unnamed site)'}",
            f"From: {sender}",
            f"Contact: {contact}",
            "",
            f"We hold the rights to the following {'work' if one_work else 'works'}:",
            *(f"  - 《{t}》" + (f" by {a}" if a else "") for t, a in sorted(works)),
            "",
            ("The page listed below " if pages == 1 else f"The {pages} pages listed below ")
            + _verb([bool(r.get("translation")) for r in rows], pages == 1)
            + ("chapters" if all(r["kind"] == FULL_COPY for r in rows) else "chapters, or parts of chapters,")
            + (" of this work without" if one_work else " of these works without"),
            "our permission. We ask you to remove "
            + ("it, or disable access to it," if pages == 1 else "them, or disable access to them,") + " without delay.",
            "",
        ]
        for n, r in enumerate(rows, 1):
            lines += [
                f"{n}. {r['url']}",
                f"   Copies: 《{r['work_title']}》 {r['chapter_title']} ({r['kind']}"
                + (f", in {r['language']} translation" if r.get("language") else "") + ")",
                f"   What was copied: {r['copied']}",
                f"   First seen: {_when(r['first_seen'])}; last seen: {_when(r['last_seen'])}",
            ]
            if r["excerpt"]:
                lines.append(f"   Copied text: \u201c{r['excerpt']}\u201d")
            if r.get("pairs"):
                lines.append("   Aligned sentences (the original, then the page's translation of it):")
                for pair in r["pairs"]:
                    lines += [f"     \u201c{pair['original']}\u201d", f"     = \u201c{pair['page']}\u201d"]
            lines.append("")
        lines += [
            "I have a good faith belief that the use of the material described above is not authorised",
            "by the rights holder, its agent, or the law. The information in this notice is accurate,",
            "and I am the rights holder or authorised to act on its behalf.",
            "",
            f"Signed: {sender}",
            "",
        ]
        sections.append("\n".join(lines))
    text = ("\n" + "-" * 72 + "\n\n").join(sections)
    if more:
        text += f"\n(Only the first {len(items)} matches are listed: make one notice per site or work for the rest.)\n"
    return text
