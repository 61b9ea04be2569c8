"""The big tables are rendered once per shared summary, and never show one person's view to another."""
from __future__ import annotations

from urllib.parse import quote

from web.reports.fragments import Fragments

from .conftest import login, post


def empty_report(scope: str):
    """The context of works/_report_tables.html for a work with no copies, counting the calls."""
    calls.append(scope)
    return {"work": {"work": "w"}, "scope": scope, "sites": [], "chapters": [], "matrix_sites": [],
            "sites_chart": "", "more_sites": 0}


calls: list[str] = []


def test_one_render_per_summary_object_and_arguments(app):
    calls.clear()
    f = Fragments(size=2)
    a, b = {"n": 1}, {"n": 1}
    with app.test_request_context():
        html = f.render("works/_report_tables.html", a, lambda: empty_report("active"))
        assert "No copies found (active)" in html
        assert f.render("works/_report_tables.html", a, lambda: empty_report("never")) == html  # kept
        assert calls == ["active"]
        # an equal but other summary object (a newer snapshot) renders again
        assert "(confirmed)" in f.render("works/_report_tables.html", b, lambda: empty_report("confirmed"))
        # other arguments: another fragment of the same summary
        assert "(new)" in f.render("works/_report_tables.html", a, lambda: empty_report("new"), admin=True)
        assert calls == ["active", "confirmed", "new"]
        assert "(again)" in f.render("works/_report_tables.html", a, lambda: empty_report("again"))
        assert calls == ["active", "confirmed", "new", "again"]  # the oldest went: at most 2 are kept


def test_a_viewer_never_gets_the_admins_table_of_sites(app):
    admin, viewer = app.test_client(), app.test_client()
    assert login(admin, "admin").status_code == 302 and login(viewer, "viewer").status_code == 302
    first = admin.get("/sites/").get_data(as_text=True)
    assert "/sites/manage?name=" in first
    shown = viewer.get("/sites/").get_data(as_text=True)  # the same shared summary, the viewer's table
    assert "/sites/manage?name=" not in shown and "<table" in shown
    assert "/sites/manage?name=" in admin.get("/sites/").get_data(as_text=True)


def test_a_change_through_the_admin_shows_in_the_work_report_at_once(admin, store):
    work = store.works()[0].id
    before = admin.get(f"/works/{quote(work)}?scope=confirmed").get_data(as_text=True)
    m = store.matches(work=work, status="new")[0]
    r = post(admin, "/matches/status", {"match": f'["{m.page}", "{m.chapter}"]', "status": "confirmed"})
    assert r.status_code in (200, 302)
    after = admin.get(f"/works/{quote(work)}?scope=confirmed").get_data(as_text=True)
    assert after != before and m.site in after
