"""Takedown notices made from confirmed matches: per site, the work, the chapters, the
URLs, when each copy was seen, and an excerpt of the copied text as evidence."""
from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from tracker.store import NotFound, Store

from .catalog import Outline
from .highlight import excerpt

MAX_ITEMS = 2000  # one notice; more is split by site or work
EXCERPT = 120


def notice_items(store: Store, outline: Outline, *, work: str | None = None, site: str | None = None,
                 status: str = "confirmed", limit: int = MAX_ITEMS) -> tuple[list[dict[str, Any]], bool]:
    """The matches a notice lists, by site then page; and whether there were more than `limit`."""
    # notices.mark_sent moves the matches listed here with the same query: keep the two alike
    found = store.matches(work=work, site=site, status=status, sort="site", limit=limit + 1)
    more = len(found) > limit
    works: dict[str, Any] = {}
    items = []
    for m in found[:limit]:
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
        items.append({
            "site": m.site, "page": m.page, "url": url, "work": m.work, "work_title": w.title if w else m.work,
            "author": w.author if w else "", "chapter": m.chapter, "chapter_title": outline.title(m.chapter),
            "containment": m.containment, "first_seen": m.first_seen, "last_seen": m.last_seen,
            "excerpt": excerpt(text, longest["page_start"], longest["page_end"], EXCERPT) if longest and text else "",
        })
    items.sort(key=lambda i: (i["site"], i["url"], i["work"], i["chapter"]))
    return items, more


def _when(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def notice_text(items: list[dict[str, Any]], *, sender: str = "", contact: str = "", today: date | None = None,
                more: bool = False) -> str:
    """The notice as plain text, one section per site, ready to edit and send."""
    today = today or datetime.now(timezone.utc).date()
    sender = sender.strip() or "[name of the rights holder]"
    contact = contact.strip() or "[postal address, e-mail and telephone]"
    if not items:
        return "No confirmed matches to report: confirm matches first, then make the notice.\n"
    by_site: dict[str, list[dict[str, Any]]] = {}
    for i in items:
        by_site.setdefault(i["site"], []).append(i)
    sections = []
    for site, rows in by_site.items():
        works = {(r["work_title"], r["author"]) for r in rows}
        lines = [
            "NOTICE OF COPYRIGHT INFRINGEMENT",
            "",
            f"Date: {today.isoformat()}",
            f"To: the operator of the site {site or '(unnamed site)'}",
            f"From: {sender}",
            f"Contact: {contact}",
            "",
            "We hold the rights to the following work(s):",
            *(f"  - 《{t}》" + (f" by {a}" if a else "") for t, a in sorted(works)),
            "",
            f"The {len({r['url'] for r in rows})} page(s) listed below reproduce chapters of these works without",
            "our permission. We ask you to remove them, or disable access to them, without delay.",
            "",
        ]
        for n, r in enumerate(rows, 1):
            lines += [
                f"{n}. {r['url']}",
                f"   Copies: 《{r['work_title']}》 {r['chapter_title']} ({r['containment']:.0%} of the chapter)",
                f"   First seen: {_when(r['first_seen'])}; last seen: {_when(r['last_seen'])}",
            ]
            if r["excerpt"]:
                lines.append(f"   Copied text: \u201c{r['excerpt']}\u201d")
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
