"""The OpenAPI description at /api/openapi.json and the app's /api routes agree both ways:
every /api rule and method is described, every described operation exists; operations that
change something ask for a write token; the description is valid OpenAPI 3.1."""
from __future__ import annotations

import pytest

from web.api.openapi import OPERATIONS, openapi_path

from .test_routes import rules
from .test_tokens import bearer, tokens  # noqa: F401  (a fixture)

IGNORED = {"HEAD", "OPTIONS"}


def api_operations() -> set[tuple[str, str]]:
    return {(openapi_path(r.rule), m.lower()) for r in rules() if r.rule.startswith("/api/")
            for m in r.methods - IGNORED}


def described(doc) -> set[tuple[str, str]]:
    return {(path, method) for path, ops in doc["paths"].items() for method in ops}


def test_every_api_route_is_described_and_every_description_is_a_route(client, tokens):
    r = client.get("/api/openapi.json", headers=bearer(tokens["read"]))
    assert r.status_code == 200
    doc = r.get_json()
    routes, documented = api_operations(), described(doc)
    assert not routes - documented, f"describe these in web/api/openapi.py: {sorted(routes - documented)}"
    assert not documented - routes, f"described but no such route: {sorted(documented - routes)}"


def test_the_description_needs_credentials_like_the_rest_of_the_api(client):
    assert client.get("/api/openapi.json").status_code == 401


def test_scopes_follow_what_the_view_does(app):
    """A POST, PATCH or DELETE needs a write token unless its view only reads (marked reads_only)."""
    with app.test_request_context():
        from web.api.openapi import description

        doc = description()
    views = {(openapi_path(r.rule), m.lower()): app.view_functions[r.endpoint]
             for r in app.url_map.iter_rules() if r.rule.startswith("/api/") for m in r.methods - IGNORED}
    for (path, method), view in views.items():
        op = doc["paths"][path][method]
        writes = method != "get" and not getattr(view, "reads_only", False)
        assert op["x-scope"] == ("write" if writes else "read"), (path, method)
        assert op["security"][0] == {"token": [op["x-scope"]]}
        params = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
        assert params == set(path.replace("}", "{").split("{")[1::2]), (path, method)
        assert "200" in op["responses"] or "201" in op["responses"] or "202" in op["responses"]


def test_the_description_is_valid_openapi_3_1(app):
    validator = pytest.importorskip("openapi_spec_validator")
    with app.test_request_context():
        from web.api.openapi import description

        validator.validate(description())


def test_a_read_token_is_refused_every_write_operation(client, tokens):
    """What the description says a read token may not do, it may not do: 403 before the view runs."""
    for (path, method), spec in OPERATIONS.items():
        if method == "get" or spec.get("reads"):
            continue
        url = path.replace("{work_id}", "山城旧事").replace("{name}", "biquge")
        r = client.open(url, method=method.upper(), json={}, headers=bearer(tokens["read"]))
        assert r.status_code == 403, (path, method, r.status_code)
