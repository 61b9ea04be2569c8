"""Site names from the admin and the API: the same safe-slug rule as the command line, refused
with the rule and a valid name, nothing stored."""
from __future__ import annotations

from tracker.safe_names import SITE_FORM

from .conftest import csrf_token, login
from .test_manage_sites import BASIC, add, api, app, home_store, site  # noqa: F401 - fixtures


def test_the_api_refuses_a_site_name_that_is_not_a_slug(api, home_store, site):
    for bad, suggested in (("bad name/../", "bad-name"), ("../../etc", "etc"), ("a\x1b]0;x\x07", "a-0-x")):
        r = add(api, site, name=bad)
        assert r.status_code == 400, bad
        message = r.get_json()["message"]
        assert SITE_FORM in message and f"e.g. {suggested!r}" in message and "\x1b" not in message
    assert home_store.sites() == []
    r = add(api, site, name="bad-name")
    assert r.status_code == 201 and [s.name for s in home_store.sites()] == ["bad-name"]


def test_the_admin_form_refuses_a_site_name_that_is_not_a_slug(app, home_store, site):
    admin = app.test_client()
    login(admin, "admin")
    r = admin.post("/sites/", data={"url": site.url + "/book/1/", "name": "bad name/../",
                                    "csrf_token": csrf_token(admin, "/sites/")})
    assert r.status_code == 400 and "e.g. &#39;bad-name&#39;" in r.get_data(as_text=True)
    assert home_store.sites() == []
