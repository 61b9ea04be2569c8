"""Bad filter, sort and paging values are a 400 with a message, in HTML and JSON."""
import pytest


@pytest.mark.parametrize("query,says", [
    ("page=0", "page must be a whole number"),
    ("page=abc", "page must be a whole number"),
    ("per_page=501", "per_page must be a whole number from 1 to 500"),
    ("per_page=-1", "per_page must be a whole number"),
    ("sort=price", "sort must be one of"),
    ("sort=--containment", "sort must be one of"),
    ("status=stolen", "status must be one of"),
    ("work=" + "x" * 501, "work is longer than 500 characters"),
])
def test_bad_list_params_are_400_with_the_reason(admin, query, says):
    r = admin.get(f"/matches/?{query}")
    assert r.status_code == 400
    html = r.get_data(as_text=True)
    assert says in html and "Traceback" not in html
    r = admin.get(f"/api/matches?{query}")
    assert r.status_code == 400 and says in r.json["message"]


def test_bad_scope_is_400(admin):
    r = admin.get("/works/?scope=everything")
    assert r.status_code == 400 and b"scope must be one of" in r.data


def test_page_past_the_end_is_empty_not_an_error(admin):
    r = admin.get("/api/matches?page=99")
    assert r.status_code == 200 and r.json["matches"] == [] and r.json["paging"]["total"] == 3


def test_every_sort_is_accepted(admin):
    from tracker.store import MATCH_SORTS

    for s in MATCH_SORTS:
        for order in (s, "-" + s):
            assert admin.get(f"/api/matches?sort={order}").status_code == 200, order
