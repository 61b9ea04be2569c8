"""Organisations: a user of one sees nothing of another's works, sites, matches and images.
Every route of the app (the samples of test_routes, which name the default organisation's
records) is requested by an admin of another organisation: a record it names is a 404,
never a 403 and never its data; a list shows none of it; a change changes nothing."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from werkzeug.security import generate_password_hash

from fptrack.cli import main
from tracker.store import Chapter, MatchRecord, Page, Site, User, Work
from tracker.store.tenancy import DEFAULT_ORG, Organisation

from .conftest import PASSWORD, csrf_token, login
from .test_routes import CHANGES, GET, OPERATOR_POSTS, change, fill_path

# What only the default organisation's data shows. A 404 may repeat the ids asked for (the asker
# knows them already), never more: its author and its chapters' text.
MARKERS = ("林岚", "biquge.example", "陈守义", "第1章", "cover.png")
DATA = ("林岚", "陈守义", "挑夫")
# Rules that name one record of the default organisation: another organisation gets a 404.
NAMED = {"/works/<work_id>", "/sites/view", "/matches/view", "/images/view", "/images/file/<kind>",
         "/evidence/package", "/works/<work_id>/chapters", "/works/<work_id>/remove", "/api/works/<work_id>",
         "/api/sites/view", "/api/matches/view", "/api/images/view", "/api/works/<work_id>/chapters"}
EAST_TEXT = "东城的风吹了一整夜，码头上的灯一盏一盏熄灭，只剩下守夜人的咳嗽声。" * 4


def add_user(store, name: str, role: str, org: str) -> None:
    store.upsert_user(User(name=name, password_hash=generate_password_hash(PASSWORD, "pbkdf2:sha256:1000"),
                           role=role))
    store.set_owner("user", name, org)


@pytest.fixture
def east(store):
    """A second organisation with its own admin, viewer, work, site, page and match."""
    store.upsert_org(Organisation("east"))
    add_user(store, "eve", "admin", "east")
    add_user(store, "ed", "viewer", "east")
    add_user(store, "root", "operator", DEFAULT_ORG)
    store.upsert_work(Work(id="东城", title="东城", author="周原"))
    store.set_owner("work", "东城", "east")
    store.upsert_chapter(Chapter(key="东城/1", work="东城", title="一", text=EAST_TEXT, number=1))
    store.upsert_site(Site(name="dongcheng", start_urls=["https://dc.example/"]))
    store.set_owner("site", "dongcheng", "east")
    store.upsert_page(Page(key="https://dc.example/1", url="https://dc.example/1", site="dongcheng", text=EAST_TEXT))
    store.upsert_match(MatchRecord(page="https://dc.example/1", chapter="东城/1", work="东城", site="dongcheng",
                                   similarity=0.9, containment=0.95, page_share=0.9, verdict="duplicate"))
    return store


def signed_in(app, name: str):
    c = app.test_client()
    assert login(c, name).status_code == 302
    return c


@pytest.mark.parametrize("rule", sorted(GET))
def test_another_organisations_records_are_404_and_its_lists_show_none_of_them(app, east, rule):
    eve = signed_in(app, "eve")
    path, query = fill_path(rule, GET[rule])
    r = eve.get(path, query_string=query)
    body = r.get_data(as_text=True)
    if rule in NAMED:
        assert r.status_code == 404, (rule, r.status_code, body[:300])
    else:
        assert r.status_code in (200, 404), (rule, r.status_code, body[:300])
    leaked = [m for m in (DATA if r.status_code == 404 else MARKERS) if m in body]
    assert not leaked, (rule, leaked, body[:500])


@pytest.mark.parametrize("rule", sorted(CHANGES))
def test_another_organisations_records_cannot_be_changed(app, east, rule):
    before = ([w.id for w in east.works()], east.matches(), east.image_matches())
    eve = signed_in(app, "eve")
    r = change(eve, rule)
    assert r.status_code in (404, 400, 200, 201, 302), (rule, r.status_code, r.get_data(as_text=True)[:300])
    if r.status_code in (201, 302) and rule in ("/works/", "/api/works"):
        new = {w.id for w in east.works()} - set(before[0])
        assert new and all(east.owner("work", w) == "east" for w in new)  # an upload belongs to its uploader's
    else:
        assert (east.matches(), east.image_matches()) == before[1:]
    assert "山城旧事" in [w.id for w in east.works()]


def test_each_organisation_sees_its_own(app, east):
    eve = signed_in(app, "eve")
    works = eve.get("/api/works").get_json()["works"]
    assert [w["work"] for w in works] == ["东城"]
    assert eve.get("/api/works/东城").status_code == 200
    assert [m["work"] for m in eve.get("/api/matches").get_json()["matches"]] == ["东城"]
    assert [s["site"] for s in eve.get("/api/sites").get_json()["sites"]] == ["dongcheng"]
    assert eve.get("/api/dashboard").get_json()["counts"]["works"] == 1
    admin = signed_in(app, "admin")
    assert [w["work"] for w in admin.get("/api/works").get_json()["works"]] == ["山城旧事"]
    assert admin.get("/api/works/东城").status_code == 404
    assert admin.get("/api/sites/view", query_string={"name": "dongcheng"}).status_code == 404
    assert admin.get("/api/matches/view", query_string={"page_key": "https://dc.example/1",
                                                         "chapter": "东城/1"}).status_code == 404
    root = signed_in(app, "root")  # an operator sees every organisation
    assert {w["work"] for w in root.get("/api/works").get_json()["works"]} == {"山城旧事", "东城"}


def test_checking_a_text_finds_only_the_organisations_own_chapters(app, east, settings):
    from tracker.context import Context
    from tracker.registry import register_work

    from ..conftest import ROOT

    register_work(Context(settings, store=east), "山城旧事", ROOT / "samples" / "originals", author="林岚")
    text = (ROOT / "samples" / "originals" / "山城旧事-第一章.txt").read_text(encoding="utf-8")
    eve, admin = signed_in(app, "eve"), signed_in(app, "admin")
    found = lambda c: [m["chapter"] for m in c.post("/api/check", json={"text": text},  # noqa: E731
                                                     headers={"X-CSRFToken": csrf_token(c, "/")}).get_json()["matches"]]
    assert found(admin) == ["山城旧事/山城旧事-第一章"]
    assert found(eve) == []


def test_a_viewer_of_another_organisation_gets_404_not_403_for_a_change(app, east):
    ed = signed_in(app, "ed")
    r = ed.get("/api/matches/view", query_string={"page_key": "https://biquge.example/1.html",
                                                  "chapter": "山城旧事/第1章"})
    assert r.status_code == 404


def test_summaries_are_kept_apart_per_organisation(app, east):
    admin, eve = signed_in(app, "admin"), signed_in(app, "eve")
    assert [w["work"] for w in admin.get("/api/works").get_json()["works"]] == ["山城旧事"]
    assert [w["work"] for w in eve.get("/api/works").get_json()["works"]] == ["东城"]  # not the one kept for admin


@pytest.mark.parametrize("rule", sorted(OPERATOR_POSTS))
def test_only_an_operator_manages_organisations(app, east, rule):
    before = ([o.name for o in east.orgs()], east.owners("work"))
    for name in ("viewer", "admin", "eve", "ed"):
        c = signed_in(app, name)
        r = c.post(rule, data={**OPERATOR_POSTS[rule], "csrf_token": csrf_token(c, "/")})
        assert r.status_code == 403, name
    assert ([o.name for o in east.orgs()], east.owners("work")) == before
    root = signed_in(app, "root")
    r = root.post(rule, data={**OPERATOR_POSTS[rule], "csrf_token": csrf_token(root, "/")})
    assert r.status_code == 302


def test_an_operator_adds_organisations_and_moves_records_between_them(app, east):
    root = signed_in(app, "root")
    r = root.post("/orgs/", data={"name": "west", "csrf_token": csrf_token(root, "/")})
    assert r.status_code == 302 and {o.name for o in east.orgs()} == {"east", "west"}
    page = root.get("/orgs/").get_data(as_text=True)
    assert "east" in page and "west" in page and DEFAULT_ORG in page and "eve" in page
    r = root.post("/orgs/", data={"name": "two words", "csrf_token": csrf_token(root, "/")}, follow_redirects=True)
    assert "no spaces" in r.get_data(as_text=True)
    eve = signed_in(app, "eve")
    assert eve.get("/api/works/山城旧事").status_code == 404
    r = root.post("/orgs/assign", data={"kind": "work", "key": "山城旧事", "org": "east",
                                        "csrf_token": csrf_token(root, "/")})
    assert r.status_code == 302 and east.owner("work", "山城旧事") == "east"
    assert eve.get("/api/works/山城旧事").status_code == 200  # with its matches
    assert eve.get("/api/matches/view", query_string={"page_key": "https://biquge.example/1.html",
                                                      "chapter": "山城旧事/第1章"}).status_code == 200
    for bad, status in (({"kind": "work", "key": "nothing", "org": "east"}, 404),
                        ({"kind": "page", "key": "x", "org": "east"}, 400),
                        ({"kind": "user", "key": "eve", "org": "nowhere"}, 400)):
        assert root.post("/orgs/assign", data={**bad, "csrf_token": csrf_token(root, "/")}).status_code == status


def test_a_single_team_deployment_reads_as_before(admin, store):
    assert store.orgs() == []
    assert [w["work"] for w in admin.get("/api/works").get_json()["works"]] == ["山城旧事"]


def test_org_commands(settings):
    runner = CliRunner()
    r = runner.invoke(main, ["org", "add", "north"])
    assert r.exit_code == 0 and "organisation north" in r.output
    assert runner.invoke(main, ["org", "add", "north"]).exit_code == 0  # again: no change
    r = runner.invoke(main, ["org", "list"])
    assert r.output.split() == [DEFAULT_ORG, "north"]
    r = runner.invoke(main, ["org", "add", "a b"])
    assert r.exit_code != 0 and "no spaces" in r.output
    r = runner.invoke(main, ["user", "add", "nina", "--org", "north", "--password-stdin"], input=PASSWORD + "\n")
    assert r.exit_code == 0 and "added nina (viewer) to north" in r.output
    listed = runner.invoke(main, ["user", "list"]).output.splitlines()
    assert any(line.split()[:3] == ["nina", "viewer", "north"] for line in listed)
    r = runner.invoke(main, ["org", "assign", "north", "--user", "nina", "--user", "nobody"])
    assert r.exit_code != 0 and "nobody" in r.output
    r = runner.invoke(main, ["user", "add", "olga", "--password-stdin"], input=PASSWORD + "\n")
    r = runner.invoke(main, ["org", "assign", "north", "--user", "olga"])
    assert r.exit_code == 0 and "moved to north: 1 user" in r.output
    assert "olga" in [line.split()[0] for line in runner.invoke(main, ["user", "list"]).output.splitlines()
                      if line.split()[2:3] == ["north"]]
    r = runner.invoke(main, ["user", "add", "x", "--org", "nowhere", "--password-stdin"], input=PASSWORD + "\n")
    assert r.exit_code != 0 and "nowhere" in r.output
    for args in (["org", "--help"], ["org", "add", "--help"], ["org", "list", "--help"], ["org", "assign", "--help"]):
        assert "Example:" in runner.invoke(main, args).output
