"""One organisation's view of the store (tracker.store.scoped): what it owns and nothing
else, NotFound for another's records, new records its own, and every store method either
scoped or named as one that needs no scope. On both backends."""
from __future__ import annotations

import inspect
from datetime import UTC

import pytest

from tracker.store import NotFound, Site, User, Work
from tracker.store.base import Store
from tracker.store.scoped import ScopedStore
from tracker.store.sqlite import SQLiteStore
from tracker.store.tenancy import DEFAULT_ORG, Organisation
from tracker.store.unscoped import UNSCOPED, UnscopedMethod

from .store_contract import chapter, match, page


@pytest.fixture(params=["sqlite", "mongo"])
def store(request, tmp_path):
    if request.param == "mongo":
        import mongomock

        from tracker.store.mongo import MongoStore

        s = MongoStore(client=mongomock.MongoClient(), db="fptrack_test")
    else:
        s = SQLiteStore(tmp_path / "store.sqlite3")
    s.upsert_org(Organisation("east"))
    for work, org in (("山城旧事", None), ("东城", "east")):
        s.upsert_work(Work(id=work, title=work))
        if org:
            s.set_owner("work", work, org)
        s.upsert_chapter(chapter(f"{work}/1", work=work))
    s.upsert_site(Site(name="biquge", start_urls=["https://biquge.example/"]))
    s.upsert_site(Site(name="dc", start_urls=["https://dc.example/"]))
    s.set_owner("site", "dc", "east")
    for key, site, ch in (("https://biquge.example/1", "biquge", "山城旧事/1"), ("https://dc.example/1", "dc", "东城/1"),
                          ("https://shared.example/1", "shared", "东城/1")):
        s.upsert_page(page(key, site=site))
        s.upsert_match(match(key, ch, work=ch.split("/")[0], site=site))
    yield s
    s.close()


def test_every_store_method_is_scoped_or_named_as_needing_no_scope():
    methods = {n for n, _ in inspect.getmembers(Store, inspect.isfunction) if not n.startswith("_")}
    redefined = set(vars(ScopedStore))
    assert not methods - redefined - UNSCOPED, "scope these in tracker/store/scoped.py or add them to UNSCOPED"
    assert not UNSCOPED & redefined and UNSCOPED <= methods


def test_a_method_neither_scoped_nor_declared_is_refused(store):
    """The view fails closed: a backend's method that tracker/store/scoped.py does not redefine and
    tracker/store/unscoped.py does not declare raises, naming both places, instead of answering
    with every organisation's records."""
    store.every_page_anywhere = lambda: list(store.pages())  # a method added to a backend, not to the view
    east = ScopedStore(store, "east")
    with pytest.raises(UnscopedMethod, match=r"every_page_anywhere .*scoped\.py.*unscoped\.py"):
        east.every_page_anywhere()
    assert not hasattr(east, "every_page_anywhere")  # an AttributeError, so feature checks see no method
    assert east.count_chapters() == store.count_chapters()  # a declared one still goes to the store


def test_each_organisation_sees_its_works_matches_sites_and_pages(store):
    default, east = ScopedStore(store, DEFAULT_ORG), ScopedStore(store, "east")
    assert [w.id for w in default.works()] == ["山城旧事"] and [w.id for w in east.works()] == ["东城"]
    assert {m.work for m in east.matches()} == {"东城"} and east.count_matches() == 2
    assert default.count_matches(work="东城") == 0 and default.matches(work="东城") == []
    assert [r["work"] for r in default.match_summary(["work"])] == ["山城旧事"]
    assert [s.name for s in east.sites()] == ["dc"]
    # pages: of its sites, and of the sites its works were found on (an unconfigured "shared")
    assert east.count_pages() == 2 and {p.site for p in east.find_pages()} == {"dc", "shared"}
    assert [p.site for p in default.find_pages()] == ["biquge"]
    assert {r["site"] for r in east.page_summary(["site", "status"])} == {"dc", "shared"}
    assert east.counts()["works"] == 1 and east.counts()["matches"]["new"] == 2
    for call in (lambda: default.get_work("东城"), lambda: default.get_chapter("东城/1"),
                 lambda: default.get_match("https://dc.example/1", "东城/1"), lambda: default.get_site("dc"),
                 lambda: default.get_page("https://dc.example/1"),
                 lambda: default.set_match_status("https://dc.example/1", "东城/1", "confirmed"),
                 lambda: east.delete_work("山城旧事"), lambda: east.delete_site("biquge")):
        with pytest.raises(NotFound):
            call()
    assert store.get_match("https://dc.example/1", "东城/1").status == "new"
    assert default.crawl_runs(site="dc") == []


def test_one_site_look_up_agrees_with_the_set_of_visible_sites(store):
    store.upsert_site(Site(name="unowned-config", start_urls=["https://u.example/"]))  # the default org's
    names = ["biquge", "dc", "shared", "unowned-config", "nowhere", ""]
    for org in (DEFAULT_ORG, "east", "nobody"):
        one_by_one = ScopedStore(store, org)
        seen = {n for n in names if one_by_one.sees_site(n)}
        assert seen == set(names) & ScopedStore(store, org).site_names, org
        assert "site_names" not in vars(one_by_one)  # answered without listing every site
    east = ScopedStore(store, "east")
    assert not east.sees_site("biquge")
    store.upsert_match(match("https://biquge.example/1", "东城/1", work="东城", site="biquge"))
    assert not east.sees_site("biquge")  # kept for the request, like site_names
    assert ScopedStore(store, "east").sees_site("biquge")  # the next request sees its new match there
    assert ScopedStore(store, "east").get_page("https://biquge.example/1").site == "biquge"


def test_what_it_writes_is_its_own_and_anothers_ids_are_refused(store):
    east = ScopedStore(store, "east")
    east.upsert_work(Work(id="新书", title="新书"))
    assert store.owner("work", "新书") == "east" and "新书" in [w.id for w in east.works()]
    east.upsert_chapter(chapter("新书/1", work="新书"))
    east.upsert_site(Site(name="newsite", start_urls=["https://new.example/"]))
    assert store.owner("site", "newsite") == "east" and "newsite" in [s.name for s in east.sites()]
    with pytest.raises(ValueError):
        east.upsert_work(Work(id="山城旧事", title="mine now"))
    with pytest.raises(ValueError):
        east.upsert_site(Site(name="biquge", start_urls=["https://biquge.example/"]))
    with pytest.raises(NotFound):
        east.upsert_chapter(chapter("山城旧事/9", work="山城旧事"))
    assert store.get_work("山城旧事").title == "山城旧事" and store.owner("work", "山城旧事") == DEFAULT_ORG
    east.upsert_user(User(name="eve", password_hash="x"))
    assert store.owner("user", "eve") == "east" and [u.name for u in east.users()] == ["eve"]
    store.upsert_user(User(name="alice", password_hash="x"))
    with pytest.raises(NotFound):
        east.upsert_user(User(name="alice", password_hash="y", role="admin"))
    assert store.get_user("alice").role == "viewer"


def test_a_subscription_to_its_work_on_anothers_site_is_refused(store):
    from tracker.store.followup import Subscription, subscription_id

    def sub(work: str, site: str) -> Subscription:
        return Subscription(id=subscription_id("email", "a@example.com", work, site), channel="email",
                            target="a@example.com", work=work, site=site)

    east = ScopedStore(store, "east")
    with pytest.raises(NotFound, match="no site 'biquge'"):
        east.upsert_subscription(sub("东城", "biquge"))  # the default organisation's site, none of its copies
    assert east.upsert_subscription(sub("东城", "shared")).site == "shared"  # where its work was found
    assert east.upsert_subscription(sub("东城", "dc")).site == "dc"  # its own site
    with pytest.raises(NotFound, match="no work"):
        east.upsert_subscription(sub("山城旧事", "dc"))
    assert {s.site for s in store.subscriptions()} == {"shared", "dc"}


def test_an_organisation_reads_and_adds_only_its_own_signing_key(store):
    from .store_contract_keys import signing_key

    store.add_signing_key(signing_key("default"))
    east = ScopedStore(store, "east")
    with pytest.raises(NotFound):
        east.signing_key("default")
    with pytest.raises(NotFound):
        east.add_signing_key(signing_key("default", bytes(32)))
    assert store.signing_key("default").public_key == bytes(range(32))
    kept = east.add_signing_key(signing_key("east", bytes(32)))
    assert east.signing_key("east") == kept == store.signing_key("east")


def test_an_organisations_latest_crawls_are_read_site_by_site_newest_first(store, monkeypatch):
    """The dashboard asks for an organisation's latest crawls on every view: read site by site
    with the limit, never every run of every organisation, in the store's order."""
    from datetime import datetime, timedelta

    from tracker.store import CrawlRun

    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    store.upsert_site(Site(name="dc2", start_urls=["https://dc2.example/"]))
    store.set_owner("site", "dc2", "east")
    for i, site in enumerate(["dc", "biquge", "dc2", "dc", "biquge", "dc2", "dc"]):
        store.add_crawl_run(CrawlRun(site=site, started_at=t0 + timedelta(hours=i), finished_at=t0 + timedelta(
            hours=i, minutes=5), outcome="finished", counts={"fetched": i}))
    asked = []
    inner = store.crawl_runs
    monkeypatch.setattr(store, "crawl_runs", lambda **kw: asked.append(kw) or inner(**kw))
    east = ScopedStore(store, "east")
    want = [r for r in inner(limit=None) if r.site in ("dc", "dc2")]
    assert [r.counts["fetched"] for r in east.crawl_runs(limit=3)] == [r.counts["fetched"] for r in want[:3]] == [
        6, 5, 3]
    assert all(kw["limit"] == 3 and kw["site"] in ("dc", "dc2") for kw in asked) and len(asked) == 2
    assert [r.counts["fetched"] for r in east.crawl_runs(limit=None)] == [6, 5, 3, 2, 0]

