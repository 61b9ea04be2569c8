"""A site's crawl schedule in the admin's site page and in the API: shown with the next
scheduled crawl, edited (hour, every N days, paused), and a bad value a 400 naming it."""
from __future__ import annotations

import base64

import pytest

from .conftest import PASSWORD, csrf_token

BASIC = {"Authorization": "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()}
VIEWER = {"Authorization": "Basic " + base64.b64encode(f"viewer:{PASSWORD}".encode()).decode()}


@pytest.fixture
def api(client):
    r = client.post("/api/sites", json={"url": "https://sched.example/book/1/", "name": "sched"}, headers=BASIC)
    assert r.status_code == 201
    return client


def patch(api, body, headers=BASIC):
    return api.patch("/api/sites/sched", json=body, headers=headers)


def test_a_new_site_is_daily_at_the_deployments_hour(api, store):
    got = api.get("/api/sites/sched/crawl", headers=BASIC)  # the site exists
    assert got.status_code == 200
    schedule = patch(api, {}).get_json()["schedule"]
    assert {k: schedule[k] for k in ("hour", "default_hour", "every", "paused", "text", "last")} == {
        "hour": 3, "default_hour": True, "every": 1, "paused": False, "text": "daily at 03:00 UTC", "last": None}
    assert schedule["next"]  # the first 03:00 after it was added
    s = store.get_site("sched")
    assert (s.hour, s.every, s.recrawl) == (None, 1, True)


def test_the_api_adds_a_site_with_a_schedule_and_changes_it(api, store):
    r = api.post("/api/sites", json={"url": "https://other.example/", "name": "other",
                                     "schedule": {"hour": 22, "every": 2}}, headers=BASIC)
    assert r.status_code == 201
    assert (r.get_json()["schedule"]["hour"], r.get_json()["schedule"]["every"]) == (22, 2)
    assert "22:00" in r.get_json()["schedule"]["next"]
    r = patch(api, {"hour": 4, "every": 7})
    assert r.status_code == 200 and r.get_json()["schedule"]["text"] == "every 7 days at 04:00 UTC"
    assert (store.get_site("sched").hour, store.get_site("sched").every) == (4, 7)
    r = patch(api, {"schedule": {"paused": True}})
    assert r.get_json()["schedule"]["paused"] is True and r.get_json()["recrawl"] is False
    assert r.get_json()["schedule"]["next"] is None and store.get_site("sched").hour == 4  # the rest kept
    r = patch(api, {"schedule": {"paused": False, "hour": None}})
    assert r.get_json()["schedule"]["hour"] == 3 and r.get_json()["schedule"]["default_hour"] is True
    assert store.get_site("sched").recrawl is True and store.get_site("sched").every == 7
    r = patch(api, {"rules": {"content": "#text"}})  # other rules leave the schedule as it is
    assert r.get_json()["schedule"]["every"] == 7 and r.get_json()["rules"] == {"content": "#text"}


@pytest.mark.parametrize("body, message", [
    ({"hour": 25}, "hour must be 0-23, got 25"),
    ({"hour": "4"}, "hour must be 0-23, got '4'"),
    ({"every": 0}, "every must be 1-30 (days between scheduled crawls), got 0"),
    ({"schedule": {"every": 31}}, "every must be 1-30"),
    ({"schedule": {"hour": -1}}, "hour must be 0-23, got -1"),
    ({"schedule": {"paused": "yes"}}, '"paused" must be true or false'),
    ({"schedule": {"at": 4}}, '"schedule" must be an object with any of: "hour"'),
    ({"schedule": [4]}, '"schedule" must be an object'),
])
def test_a_bad_schedule_is_a_400_naming_it_and_changes_nothing(api, store, body, message):
    r = patch(api, body)
    assert r.status_code == 400 and message in r.get_json()["message"]
    s = store.get_site("sched")
    assert (s.hour, s.every, s.recrawl) == (None, 1, True)


def test_a_bad_schedule_refuses_a_new_site_too(api, store):
    r = api.post("/api/sites", json={"url": "https://other.example/", "schedule": {"hour": 24}}, headers=BASIC)
    assert r.status_code == 400 and "hour must be 0-23, got 24" in r.get_json()["message"]
    assert "other.example" not in [s.name for s in store.sites()]


def test_a_viewer_cannot_change_a_schedule(api):
    assert patch(api, {"hour": 5}, headers=VIEWER).status_code == 403


# ---- the admin's page ---------------------------------------------------------------------

def save(admin, **fields):
    form = {"flags": "1", "recrawl": "on", "start_urls": "https://sched.example/book/1/", "action": "save",
            "csrf_token": csrf_token(admin, "/sites/manage?name=sched"), **fields}
    return admin.post("/sites/manage?name=sched", data=form)


def test_the_site_page_shows_and_edits_the_schedule(api, admin, store):
    page = admin.get("/sites/manage?name=sched").get_data(as_text=True)
    assert 'id="schedule">daily at 03:00 UTC' in page and "Next scheduled crawl" in page
    assert 'name="hour"' in page and 'name="every"' in page and "Crawled on its schedule" in page
    r = save(admin, hour="5", every="3")
    assert r.status_code == 302
    assert (store.get_site("sched").hour, store.get_site("sched").every) == (5, 3)
    page = admin.get("/sites/manage?name=sched").get_data(as_text=True)
    assert "every 3 days at 05:00 UTC" in page and 'name="hour" inputmode="numeric" value="5"' in page
    assert save(admin, hour="", every="").status_code == 302  # empty: the defaults
    assert (store.get_site("sched").hour, store.get_site("sched").every) == (None, 1)


def test_unchecking_the_schedule_pauses_it(api, admin, store):
    assert save(admin, recrawl="").status_code == 302
    assert store.get_site("sched").recrawl is False
    page = admin.get("/sites/manage?name=sched").get_data(as_text=True)
    assert 'id="schedule">paused' in page and "none: the schedule is paused" in page


@pytest.mark.parametrize("fields, message", [
    ({"hour": "25"}, "Site &#39;sched&#39;: hour must be 0-23, got 25"),
    ({"hour": "four"}, "hour must be 0-23, got &#39;four&#39;"),
    ({"delay": "soon"}, "delay must be a number of seconds"),
    ({"every": "45"}, "every must be 1-30 (days between scheduled crawls), got 45"),
])
def test_a_bad_schedule_in_the_form_is_a_400_on_the_page(api, admin, store, fields, message):
    r = save(admin, **fields)
    assert r.status_code == 400 and message in r.get_data(as_text=True)
    assert (store.get_site("sched").hour, store.get_site("sched").every) == (None, 1)
