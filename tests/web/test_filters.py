"""Template helpers that build links: the same URLs url_for builds, for any value."""
from __future__ import annotations

from flask import url_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from web.filters import with_query

values = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # the app is only read
@given(page=values, chapter=values)
def test_with_query_builds_what_url_for_builds(app, page, chapter):
    with app.test_request_context():
        base = url_for("matches.detail")
        assert with_query(base, page_key=page, chapter=chapter) == url_for("matches.detail", page_key=page,
                                                                           chapter=chapter)


def test_hostile_values_stay_inside_their_parameter(app):
    with app.test_request_context():
        url = with_query(url_for("sites.report"), name='x&admin=1#"><script>')
    assert url == "/sites/view?name=x%26admin%3D1%23%22%3E%3Cscript%3E"
