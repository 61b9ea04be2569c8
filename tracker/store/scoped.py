"""One organisation's view of the store.

`ScopedStore(store, org)` answers like the store, but only with what the organisation
owns: its works (and their chapters, images and matches), its sites, its users and
tokens, and the pages of the sites it owns or where its works were found. Anything else
is NotFound, as if it did not exist, so a caller cannot tell another organisation's id
from a wrong one. New works and sites written through it belong to the organisation.

The admin and the API use one per request (web.tenancy.scope), so no view has to filter by
itself. The methods declared in tracker.store.unscoped concern no organisation's data
(sessions, the fingerprints the matcher loads, the chapter outline of the catalog) and go
to the store as they are; any other method not redefined here raises UnscopedMethod.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Any

from .base import Store
from .records import (
    MATCH_STATUSES,
    PAGE_STATUSES,
    Chapter,
    CrawlRun,
    ImageMatch,
    MatchRecord,
    NotFound,
    Page,
    Site,
    User,
    Work,
    WorkImage,
)
from .tenancy import DEFAULT_ORG, ApiToken
from .unscoped import UNSCOPED, UnscopedMethod

#: An organisation with this many sites or fewer has its latest crawl runs read site by site.
SITES_ASKED_ONE_BY_ONE = 50


class ScopedStore:
    def __init__(self, store: Store, org: str):
        self.inner, self.org = store, org
        self._seen_sites: dict[str, bool] = {}

    def __getattr__(self, name: str) -> Any:
        """Only the methods declared organisation-free reach the store as they are; any other
        name fails, so a store method added without a scope can never leak across organisations."""
        if name in UNSCOPED:
            return getattr(self.inner, name)
        raise UnscopedMethod(name)

    # ---- what the organisation owns (read once per scoped store: one per request) -------

    def _owned(self, kind: str, keys: Sequence[str]) -> list[str]:
        owners = self.inner.owners(kind)
        return [k for k in keys if owners.get(k, DEFAULT_ORG) == self.org]

    @cached_property
    def work_ids(self) -> list[str]:
        return self._owned("work", [w.id for w in self.inner.works()])

    @cached_property
    def _work_set(self) -> frozenset[str]:
        return frozenset(self.work_ids)

    @cached_property
    def _owned_sites(self) -> frozenset[str]:
        """The configured sites it owns. A site no one configured (pages ingested or found by
        discovery) belongs to no organisation: each sees it through its own matches there."""
        owners = self.inner.owners("site")
        return frozenset(s.name for s in self.inner.sites() if owners.get(s.name, DEFAULT_ORG) == self.org)

    @cached_property
    def site_names(self) -> frozenset[str]:
        """The sites whose pages it sees: those it owns and those its works were found on."""
        if not self.work_ids:
            return self._owned_sites
        found = {r["site"] for r in self.inner.match_totals(["site"], work=self.work_ids)}
        return self._owned_sites | found

    def hides_work(self, work_id: str) -> bool:
        return work_id not in self._work_set


    def sees_site(self, name: str) -> bool:
        """Whether its pages on this one site are visible (the same rule as site_names, in two
        look-ups instead of every site's: what one page or one record asks)."""
        if "site_names" in self.__dict__:
            return name in self.site_names
        seen = self._seen_sites.get(name)
        if seen is None:
            seen = self._owns_site(name) or bool(
                self.work_ids and self.inner.match_totals(["site"], work=self.work_ids, site=name))
            self._seen_sites[name] = seen
        return seen

    def _owns_site(self, name: str) -> bool:
        if "_owned_sites" in self.__dict__:
            return name in self._owned_sites
        if self.inner.owner("site", name) != self.org:
            return False
        try:
            self.inner.get_site(name)
        except NotFound:
            return False
        return True

    def _work_arg(self, work: str | list[str] | None) -> list[str] | None:
        """The works a query may touch: the given one(s) it owns, else all it owns; None: none."""
        wanted = self.work_ids if work is None else [work] if isinstance(work, str) else list(work)
        mine = [w for w in wanted if w in self._work_set]
        return mine or None

    def _site_arg(self, site: str | list[str] | None) -> list[str] | None:
        if site is None:
            mine = sorted(self.site_names)
        else:
            mine = [s for s in ([site] if isinstance(site, str) else list(site)) if self.sees_site(s)]
        return mine or None

    # ---- works and chapters --------------------------------------------------------------

    def works(self) -> list[Work]:
        return [w for w in self.inner.works() if w.id in self._work_set]

    def get_work(self, work_id: str) -> Work:
        if self.hides_work(work_id):
            raise NotFound(f"no work {work_id!r}")
        return self.inner.get_work(work_id)

    def upsert_work(self, work: Work) -> Work:
        if self.inner.owner("work", work.id) != self.org:
            try:
                self.inner.get_work(work.id)
            except NotFound:
                pass
            else:
                raise ValueError(f"the work id {work.id!r} is taken; choose another")
        self.inner.set_owner("work", work.id, self.org)
        self.__dict__.pop("work_ids", None)
        self.__dict__.pop("_work_set", None)
        self._seen_sites.clear()
        return self.inner.upsert_work(work)

    def delete_work(self, work_id: str) -> Any:
        self.get_work(work_id)
        return self.inner.delete_work(work_id)

    def _writable_work(self, work_id: str) -> None:
        """A work it may write chapters and images to: one of its own, or one an upload of its own
        has claimed and not yet recorded (the work's record is written last: tracker.uploads.novels)."""
        if work_id in self._work_set or self.inner.owner("work", work_id) == self.org:
            return
        raise NotFound(f"no work {work_id!r}")

    def upsert_chapter(self, chapter: Chapter) -> tuple[Chapter, bool]:
        self._writable_work(chapter.work)
        return self.inner.upsert_chapter(chapter)

    def get_chapter(self, key: str) -> Chapter:
        ch = self.inner.get_chapter(key)
        if self.hides_work(ch.work):
            raise NotFound(f"no chapter {key!r}")
        return ch

    def delete_chapter(self, key: str) -> None:
        self.get_chapter(key)
        self.inner.delete_chapter(key)

    def chapters(self, work: str | None = None) -> Iterator[Chapter]:
        if work is not None:
            return iter(()) if self.hides_work(work) else self.inner.chapters(work)
        return (c for c in self.inner.chapters() if c.work in self._work_set)

    # ---- matches ---------------------------------------------------------------------------

    def get_match(self, page: str, chapter: str) -> MatchRecord:
        m = self.inner.get_match(page, chapter)
        if self.hides_work(m.work):
            raise NotFound(f"no match of page {page!r} with chapter {chapter!r}")
        return m

    def matches(self, *, work: Any = None, **kw: Any) -> list[MatchRecord]:
        works = self._work_arg(work)
        return [] if works is None else self.inner.matches(work=works, **kw)

    def count_matches(self, *, work: Any = None, **kw: Any) -> int:
        works = self._work_arg(work)
        return 0 if works is None else self.inner.count_matches(work=works, **kw)

    def match_summary(self, by: Sequence[str], *, work: Any = None, **kw: Any) -> list[dict[str, Any]]:
        works = self._work_arg(work)
        return [] if works is None else self.inner.match_summary(by, work=works, **kw)

    def match_totals(self, by: Sequence[str], *, work: Any = None, **kw: Any) -> list[dict[str, Any]]:
        works = self._work_arg(work)
        return [] if works is None else self.inner.match_totals(by, work=works, **kw)

    def set_match_status(self, page: str, chapter: str, status: str, by: str = "") -> MatchRecord:
        self.get_match(page, chapter)
        return self.inner.set_match_status(page, chapter, status, by=by)

    # ---- images ----------------------------------------------------------------------------

    def get_work_image(self, key: str) -> WorkImage:
        image = self.inner.get_work_image(key)
        if self.hides_work(image.work):
            raise NotFound(f"no registered image {key!r}")
        return image

    def work_images(self, work: str | None = None, *, with_data: bool = False) -> list[WorkImage]:
        if work is not None and self.hides_work(work):
            return []
        return [i for i in self.inner.work_images(work, with_data=with_data) if i.work in self._work_set]

    def count_work_images(self, work: str | None = None) -> int:
        if work is not None:
            return 0 if self.hides_work(work) else self.inner.count_work_images(work)
        return sum(self.inner.count_work_images(w) for w in self.work_ids)

    def upsert_work_image(self, image: WorkImage) -> tuple[WorkImage, bool]:
        self._writable_work(image.work)
        return self.inner.upsert_work_image(image)

    def delete_work_image(self, key: str) -> None:
        self.get_work_image(key)
        self.inner.delete_work_image(key)

    def get_image_match(self, image: str, work_image: str) -> ImageMatch:
        m = self.inner.get_image_match(image, work_image)
        if self.hides_work(m.work):
            raise NotFound(f"no match of image {image!r} with {work_image!r}")
        return m

    def image_matches(self, *, work: Any = None, **kw: Any) -> list[ImageMatch]:
        works = self._work_arg(work)
        return [] if works is None else self.inner.image_matches(work=works, **kw)

    def count_image_matches(self, *, work: Any = None, **kw: Any) -> int:
        works = self._work_arg(work)
        return 0 if works is None else self.inner.count_image_matches(work=works, **kw)

    def set_image_match_status(self, image: str, work_image: str, status: str, by: str = "") -> ImageMatch:
        self.get_image_match(image, work_image)
        return self.inner.set_image_match_status(image, work_image, status, by=by)

    def sees_page_image(self, image: Any) -> bool:
        """An image found on a site it owns, or elsewhere one its works' images were matched with
        (as with pages: another organisation's finds on a site both track stay its own)."""
        if self._owns_site(image.site):
            return True
        return bool(self.work_ids) and self.inner.count_image_matches(image=image.key, work=self.work_ids) > 0

    def get_page_image(self, key: str) -> Any:
        image = self.inner.get_page_image(key)
        if not self.sees_page_image(image):
            raise NotFound(f"no page image {key!r}")
        return image

    def page_images(self, *, site: str | None = None, **kw: Any) -> list[Any]:
        if site is not None and not self.sees_site(site):
            return []
        return [i for i in self.inner.page_images(site=site, **kw)
                if i.site in self.site_names and self.sees_page_image(i)]

    # ---- sites and pages -------------------------------------------------------------------

    def sites(self) -> list[Site]:
        return [s for s in self.inner.sites() if s.name in self._owned_sites]

    def get_site(self, name: str) -> Site:
        if name not in self._owned_sites:
            raise NotFound(f"no site {name!r}")
        return self.inner.get_site(name)

    def upsert_site(self, site: Site) -> Site:
        if site.name not in self._owned_sites and self.inner.owner("site", site.name) != self.org:
            try:
                self.inner.get_site(site.name)
            except NotFound:
                pass
            else:
                raise ValueError(f"the site name {site.name!r} is taken; choose another")
        self.inner.set_owner("site", site.name, self.org)
        for name in ("_owned_sites", "site_names"):
            self.__dict__.pop(name, None)
        self._seen_sites.clear()
        return self.inner.upsert_site(site)

    def delete_site(self, name: str) -> None:
        self.get_site(name)
        self.inner.delete_site(name)

    def crawl_runs(self, *, site: str | None = None, limit: int | None = 50) -> list[CrawlRun]:
        if site is not None:
            return [] if site not in self._owned_sites else self.inner.crawl_runs(site=site, limit=limit)
        if limit is not None and len(self._owned_sites) <= SITES_ASKED_ONE_BY_ONE:
            # The latest `limit` runs of each of its sites hold its latest `limit` (the dashboard
            # asks on every view): never every run of every organisation.
            runs = [r for s in self._owned_sites for r in self.inner.crawl_runs(site=s, limit=limit)]
            runs.sort(key=lambda r: (r.started_at, r.id), reverse=True)
            return runs[:limit]
        runs = [r for r in self.inner.crawl_runs(site=None, limit=None) if r.site in self._owned_sites]
        return runs if limit is None else runs[:limit]

    @cached_property
    def _page_scope(self) -> tuple[list[str], list[str]]:
        """(its sites, its works): the pages it sees are every page of a site it owns, and elsewhere
        only the pages where its works were found. Another organisation's pages on a site both
        track, or on a site no one configured, stay that organisation's."""
        return sorted(self._owned_sites), list(self.work_ids)

    def sees_page(self, page: Page) -> bool:
        if self._owns_site(page.site):
            return True
        return bool(self.work_ids) and self.inner.count_matches(page=page.key, work=self.work_ids) > 0

    def get_page(self, key: str) -> Page:
        page = self.inner.get_page(key)
        if not self.sees_page(page):
            raise NotFound(f"no page {key!r}")
        return page

    def pages(self, *, site: str | None = None, **kw: Any) -> Iterator[Page]:
        if site is not None and not self.sees_site(site):
            return iter(())
        return (p for p in self.inner.pages(site=site, **kw) if p.site in self.site_names and self.sees_page(p))

    def find_pages(self, *, site: Any = None, **kw: Any) -> list[Page]:
        sites = self._site_arg(site)
        return [] if sites is None else self.inner.find_pages(site=sites, seen_by=self._page_scope, **kw)

    def count_pages(self, *, site: Any = None, **kw: Any) -> int:
        sites = self._site_arg(site)
        return 0 if sites is None else self.inner.count_pages(site=sites, seen_by=self._page_scope, **kw)

    def page_summary(self, by: Sequence[str], **kw: Any) -> list[dict[str, Any]]:
        return self.inner.page_summary(by, seen_by=self._page_scope)

    def failures(self, limit: int = 50) -> list[Page]:
        return self.find_pages(status="failed", limit=limit)

    def evidence(self, page: str) -> list[Any]:
        self.get_page(page)
        return self.inner.evidence(page)

    def evidence_data(self, page: str, sha256: str) -> bytes:
        self.get_page(page)
        return self.inner.evidence_data(page, sha256)

    # ---- follow-up -------------------------------------------------------------------------

    def _sees(self, work: str, site: str) -> bool:
        """An event or subscription about a work or site: its organisation's; about neither: the default's."""
        if work:
            return work in self._work_set
        if site:
            return site in self._owned_sites
        return self.org == DEFAULT_ORG

    def get_event(self, event_id: str) -> Any:
        e = self.inner.get_event(event_id)
        if not self._sees(e.work, e.site):
            raise NotFound(f"no event {event_id!r}")
        return e

    def get_subscription(self, sub_id: str) -> Any:
        sub = self.inner.get_subscription(sub_id)
        if not self._sees(sub.work, sub.site):
            raise NotFound(f"no subscription {sub_id!r}")
        return sub

    def upsert_subscription(self, sub: Any) -> Any:
        if not sub.work and not sub.site and self.org != DEFAULT_ORG:
            raise ValueError("name a work or a site: a subscription to every event is for the default organisation")
        if not self._sees(sub.work, sub.site):
            raise NotFound(f"no work {sub.work!r}" if sub.work else f"no site {sub.site!r}")
        if sub.work and sub.site and not self.sees_site(sub.site):  # its work on another's site: not its to watch
            raise NotFound(f"no site {sub.site!r}")
        return self.inner.upsert_subscription(sub)

    def delete_subscription(self, sub_id: str) -> None:
        self.get_subscription(sub_id)
        self.inner.delete_subscription(sub_id)

    def get_recheck(self, page: str) -> Any:
        r = self.inner.get_recheck(page)
        if not self.sees_site(r.site):
            raise NotFound(f"no re-check of {page!r}")
        return r

    def events(self, **kw: Any) -> list[Any]:
        return [e for e in self.inner.events(**kw) if self._sees(e.work, e.site)]

    def subscriptions(self) -> list[Any]:
        return [s for s in self.inner.subscriptions() if self._sees(s.work, s.site)]

    def deliveries(self, **kw: Any) -> list[Any]:
        mine = {s.id for s in self.subscriptions()}
        return [d for d in self.inner.deliveries(**kw) if d.subscription in mine]

    def rechecks(self, *, site: str | None = None) -> list[Any]:
        return [r for r in self.inner.rechecks(site=site) if r.site in self.site_names]

    # ---- users and tokens ------------------------------------------------------------------

    def _user_org(self, name: str) -> str:
        return self.inner.owner("user", name)

    def get_user(self, name: str) -> User:
        if self._user_org(name) != self.org:
            raise NotFound(f"no user {name!r}")
        return self.inner.get_user(name)

    def upsert_user(self, user: User) -> User:
        """A new user joins the organisation; another's cannot be changed."""
        try:
            self.inner.get_user(user.name)
        except NotFound:
            self.inner.set_owner("user", user.name, self.org)
        else:
            self.get_user(user.name)
        return self.inner.upsert_user(user)

    def delete_user(self, name: str) -> None:
        self.get_user(name)
        self.inner.delete_user(name)

    def users(self) -> list[User]:
        owners = self.inner.owners("user")
        return [u for u in self.inner.users() if owners.get(u.name, DEFAULT_ORG) == self.org]

    def tokens(self, org: str | None = None) -> list[ApiToken]:
        return [] if org not in (None, self.org) else self.inner.tokens(self.org)

    def add_token(self, token: ApiToken) -> ApiToken:
        token.org = self.org
        return self.inner.add_token(token)

    def delete_token(self, token_id: str) -> None:
        if token_id not in {t.id for t in self.tokens()}:
            raise NotFound(f"no token {token_id!r}")
        self.inner.delete_token(token_id)

    # ---- the key that signs its evidence packages ------------------------------------------

    def signing_key(self, org: str) -> Any:
        if org != self.org:
            raise NotFound(f"no signing key for organisation {org!r}")
        return self.inner.signing_key(org)

    def add_signing_key(self, key: Any) -> Any:
        if key.org != self.org:
            raise NotFound(f"no organisation {key.org!r}")
        return self.inner.add_signing_key(key)

    # ---- discovery -------------------------------------------------------------------------

    def discovery_runs(self, *, work: str | None = None, limit: int | None = 50) -> list[Any]:
        if work is not None:
            return [] if self.hides_work(work) else self.inner.discovery_runs(work=work, limit=limit)
        runs = [r for r in self.inner.discovery_runs(limit=None) if r.work in self._work_set]
        return runs if limit is None else runs[:limit]

    def get_discovery_run(self, run_id: int) -> Any:
        run = self.inner.get_discovery_run(run_id)
        if self.hides_work(run.work):
            raise NotFound(f"no discovery run {run_id}")
        return run

    def discovery_queries(self, run_id: int) -> list[Any]:
        self.get_discovery_run(run_id)
        return self.inner.discovery_queries(run_id)

    # ---- totals ----------------------------------------------------------------------------

    def counts(self) -> dict[str, Any]:
        found = self.page_images()
        return {"works": len(self.work_ids),
                "chapters": sum(self.inner.count_chapters(w) for w in self.work_ids),
                "pages": {s: self.count_pages(status=s) for s in PAGE_STATUSES},
                "matches": {s: self.count_matches(status=s) for s in MATCH_STATUSES},
                "images": {"registered": self.count_work_images(),
                           "found": {s: sum(1 for i in found if i.status == s) for s in PAGE_STATUSES},
                           "matches": {s: self.count_image_matches(status=s) for s in MATCH_STATUSES}}}


def assign_to(store: Store, org_name: str, **keys: tuple[str, ...]) -> str:
    """Set the owner of each named record, after checking they all exist (none moves if one is wrong)."""
    getters = {"work": store.get_work, "site": store.get_site, "user": store.get_user}
    for kind, names in keys.items():
        for key in names:
            getters[kind](key)
    for kind, names in keys.items():
        for key in names:
            store.set_owner(kind, key, org_name)
    return ", ".join(f"{len(v)} {k}{'s' if len(v) != 1 else ''}" for k, v in keys.items() if v)
