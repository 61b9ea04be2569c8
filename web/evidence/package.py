"""The evidence package of a page (all its matches) or of a work on a site: the pages'
WARC files and screenshots as kept by the crawl, the evidence report (the copied passages
side by side, the scores, the verdict) as HTML and PDF, the takedown notice, and the
manifest (tracker.evidence.package writes and checks the zip).

The report is made of web.review.evidence.match_evidence, as the admin's evidence page shows a
match, and the notice of web.review.takedown's in_notice, notice_entries and notice_text, as the
admin's notice: confirmed matches only, excerpts when included.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from tracker.evidence.package import write_package
from tracker.evidence.pdf import NO_FONT, PdfError, cjk_font_installed, html_to_pdf
from tracker.evidence.warc import WarcError, read_warc
from tracker.media.pictures import is_picture_page, line_map
from tracker.store import MatchRecord, NotFound, Store, StoreError, now

from ..filters import num, pct, score, when
from ..reports.catalog import Outline
from ..review.evidence import match_evidence
from ..review.takedown import in_notice, nothing_to_notice, notice_entries, notice_matches, notice_text

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
MAX_MATCHES = 500  # matches in one package; more: one package per page


class NothingToPack(LookupError):
    """No match for what was asked; the message says how to find one."""


@dataclass
class Selection:
    """The matches a package is made of, and how to name it."""
    title: str
    matches: list[MatchRecord]
    query: dict[str, str]

    @property
    def pages(self) -> list[str]:
        return list(dict.fromkeys(m.page for m in self.matches))


@dataclass
class Packed:
    manifest_sha256: str
    files: list[str]
    warnings: list[str] = field(default_factory=list)


def select_page(store: Store, url: str) -> Selection:
    """Every match of one stored page (its key is its URL as crawled)."""
    found = store.matches(page=url, sort="-containment", limit=MAX_MATCHES)
    if not found:
        try:
            store.get_page(url)
        except NotFound:
            raise NothingToPack(f"no page {url!r} in the store: give the URL exactly as crawled "
                                "(see `fptrack matches` for the pages with matches)") from None
        raise NothingToPack(f"the page {url!r} has no match: there is no copy to give evidence of")
    return Selection(f"page {url}", found, {"page": url})


def select_work_site(store: Store, work: str, site: str, *, include_excerpts: bool = False) -> Selection:
    """The matches of a work on one site that a takedown notice may name (web.review.takedown.in_notice):
    the confirmed ones, excerpts only when included; the report is sent with the notice."""
    found, more = notice_matches(store, work=work, site=site, include_excerpts=include_excerpts, limit=MAX_MATCHES)
    if not found:
        if not store.count_matches(work=work, site=site):
            raise NothingToPack(f"no match of the work {work!r} on the site {site!r}: "
                                "check the names with `fptrack matches --work WORK`")
        raise NothingToPack(nothing_to_notice(store, work=work, site=site, include_excerpts=include_excerpts,
                                              include_how="add --include-excerpts"))
    if more:
        raise NothingToPack(f"the work {work!r} has more than {MAX_MATCHES} confirmed matches on {site!r}: make one "
                            "package per page (fptrack evidence PAGE_URL)")
    found.sort(key=lambda m: (m.page, m.chapter))
    return Selection(f"work {work} on site {site}", found, {"work": work, "site": site})


def _version() -> str:
    try:
        return version("fptrack")
    except PackageNotFoundError:
        return "(development)"


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(("html",)))
    env.filters.update(when=when, pct=pct, num=num, score=score)
    return env


def _records(data: bytes) -> list[dict[str, Any]]:
    out = []
    for r in read_warc(data):
        length = r.headers.get("FPT-Body-Length", "")
        out.append({"type": r.type, "http_status": r.http_status, "date": r.date, "size": len(r.payload),
                    "truncated": r.headers.get("WARC-Truncated") == "length", "length": length})
    return out


def _notice(store: Store, outline: Outline, selection: Selection, sender: str, contact: str,
            include_excerpts: bool, include_how: str) -> tuple[str, int]:
    """The notice of the selected matches it may name (web.review.takedown.in_notice), and how many it names;
    with none, the reason and what to do instead of a notice."""
    named = [m for m in selection.matches if in_notice(m, include_excerpts)]
    if named:
        return notice_text(notice_entries(store, outline, named), sender=sender, contact=contact), len(named)
    query = selection.query
    why = nothing_to_notice(store, work=query.get("work"), site=query.get("site"), page=query.get("page"),
                            include_excerpts=include_excerpts, include_how=include_how)
    return notice_text([], empty=why), 0


def _picture_files(store: Store, key: str, n: int, warnings: list[str]) -> list[tuple[str, bytes]]:
    """A chapter posted as pictures: each picture as it was served, and the text read from them
    (pictures/NNN/text.txt: the page's picture text, then each line's picture, box and offsets)."""
    try:
        page = store.get_page(key)
    except NotFound:
        return []
    if not is_picture_page(page):
        return []
    where = line_map(page)
    out = []
    names: dict[str, str] = {}
    for k, picture in enumerate(dict.fromkeys(line["picture"] for line in where), 1):
        try:
            image = store.get_page_image(picture)
        except (NotFound, StoreError) as err:
            warnings.append(f"page {n}: picture {k} cannot be read: {err}")
            continue
        ext = {"image/png": ".png", "image/gif": ".gif", "image/webp": ".webp", "image/bmp": ".bmp"}.get(
            image.media_type, ".jpg")
        names[picture] = f"pictures/{n:03d}/{k:02d}-{image.sha256[:16]}{ext}"
        out.append((names[picture], image.data))
    lines = [f"# The text read from the pictures of {page.url or key} (OCR), then where each line was read.", "",
             page.text, "", "# line\tpicture file\tpicture URL\tbox (left, top, right, bottom; pixels)\t"
             "start-end in the text above"]
    for i, line in enumerate(where, 1):
        lines.append(f"{i}\t{names.get(line['picture'], '(not stored)')}\t{line['picture']}\t"
                     f"{','.join(str(v) for v in line['box'])}\t{line['start']}-{line['end']}")
    out.append((f"pictures/{n:03d}/text.txt", ("\n".join(lines) + "\n").encode("utf-8")))
    return out


def build_package(store: Store, outline: Outline, selection: Selection, out: IO[bytes], *, pdf: bool | None = True,
                  sender: str = "", contact: str = "", include_excerpts: bool = False,
                  include_how: str = "add --include-excerpts", created_at: datetime | None = None,
                  seal: Any = None) -> Packed:
    """Write the package of `selection` to `out`. pdf: True (a PDF or PdfError), None (a PDF
    when a browser can make one, else a warning), False (none). The notice names the confirmed
    matches of the selection, excerpts only with include_excerpts; with none, notice.txt says why
    (include_how: how the caller includes excerpts, for that message)."""
    created_at = created_at or now()
    warnings: list[str] = []
    files: list[tuple[str, bytes]] = []
    pages = []
    for n, key in enumerate(selection.pages, 1):
        try:
            url = store.get_page(key).url or key
        except NotFound:
            url = key
        entry: dict[str, Any] = {"n": n, "key": key, "url": url, "files": []}
        for e in store.evidence(key):
            name = f"pages/{n:03d}/{e.sha256[:16]}{'.warc.gz' if e.kind == 'warc' else '.png'}"
            try:
                data = store.evidence_data(key, e.sha256)
            except (NotFound, StoreError) as err:
                warnings.append(f"page {n}: a file of its evidence cannot be read: {err}")
                continue
            f = {"name": name, "kind": e.kind, "sha256": e.sha256, "fetched_at": e.fetched_at, "url": e.url,
                 "truncated": e.truncated, "records": []}
            if e.kind == "warc":
                try:
                    f["records"] = _records(data)
                except WarcError as err:
                    warnings.append(f"page {n}: its WARC file does not read back: {err}")
            files.append((name, data))
            entry["files"].append(f)
        files.extend(_picture_files(store, key, n, warnings))
        if not entry["files"]:
            warnings.append(f"page {n} ({url}): no capture is kept")
        pages.append(entry)
    evidence = [match_evidence(store, outline, m.page, m.chapter, embed=True) for m in selection.matches]
    template = _environment().get_template("evidence/report.html")
    context = {"title": selection.title, "created_at": created_at, "version": _version(), "pages": pages,
               "matches": evidence}
    if pdf is not False and not cjk_font_installed():
        warnings.append(f"report.pdf: {NO_FONT}")
    html = template.render(**context, warnings=warnings)
    files.append(("report.html", html.encode("utf-8")))
    if pdf is not False:
        try:
            files.append(("report.pdf", html_to_pdf(html)))
        except PdfError as e:
            if pdf:
                raise
            warnings.append(f"no report.pdf: {e}")
    notice, named = _notice(store, outline, selection, sender, contact, include_excerpts, include_how)
    if not named:
        warnings.append("notice.txt names no copy: " + notice.removeprefix("No notice: ").rstrip(".\n"))
    files.append(("notice.txt", notice.encode("utf-8")))
    info = {"selection": selection.query, "generator": f"fptrack {_version()}",
            "pages": [{"n": p["n"], "key": p["key"], "url": p["url"], "files": [f["name"] for f in p["files"]]}
                      for p in pages],
            "matches": [{"page": m.page, "chapter": m.chapter, "work": m.work, "site": m.site, "verdict": m.verdict,
                         "containment": m.containment, "page_share": m.page_share, "similarity": m.similarity,
                         "status": m.status} for m in selection.matches],
            "warnings": warnings}
    sha = write_package(out, files, info, created_at, seal=seal)  # seal: tracker.evidence.signing.Seal
    return Packed(sha, [n for n, _ in files] + ["manifest.json"], warnings)
