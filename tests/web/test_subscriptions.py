"""Who is told, managed on the Follow-up page and in the API: an admin adds an e-mail address or
a webhook and removes one, a viewer and a read token only read, bad input is a 400 that says
what to fix, another organisation's subscription is a 404, and a webhook's URL is never shown
past its host once added."""
from __future__ import annotations

import json
import re

import pytest

from tracker.followup.notify import subscribe
from tracker.store.followup import EVENT_KINDS
from tracker.tenancy.tokens import create_token

from .conftest import csrf_token, post
from .test_orgs import east, signed_in  # noqa: F401  (a fixture)
from .test_tokens import bearer, tokens  # noqa: F401  (a fixture)

HOOK = "https://hooks.chat.example/services/T0/B0/xoxb-secret"
EMAIL = {"channel": "email", "target": "rights@example.com", "work": "山城旧事", "kinds": ["new-match", "removed"]}
WEBHOOK = {"channel": "webhook", "target": HOOK, "site": "biquge", "secret": "s3cret", "kinds": list(EVENT_KINDS)}


def api_post(client, body, **headers):
    return client.post("/api/subscriptions", json=body, headers=headers or {"X-CSRFToken": csrf_token(client, "/")})


def api_delete(client, sub_id, **headers):
    return client.delete(f"/api/subscriptions/{sub_id}", headers=headers or {"X-CSRFToken": csrf_token(client, "/")})


# ---- the Follow-up page -------------------------------------------------------------------------


def test_an_admin_adds_an_email_subscription_on_the_page(admin, store):
    r = post(admin, "/followup/subscriptions", EMAIL, token_from="/followup/")
    assert r.status_code == 302 and r.headers["Location"].endswith("/followup/#who-is-told")
    [sub] = store.subscriptions()
    assert (sub.channel, sub.target, sub.work, sub.site, sub.kinds) == (
        "email", "rights@example.com", "山城旧事", "", ["new-match", "removed"])
    html = admin.get("/followup/").get_data(as_text=True)
    assert "Added: e-mail to rights@example.com for work 山城旧事 (new-match, removed)." in html
    assert f'id="subscription-{sub.id}"' in html
    r = post(admin, "/followup/subscriptions", {**EMAIL, "kinds": ["copy-back"]}, token_from="/followup/")
    assert r.status_code == 302 and [s.kinds for s in store.subscriptions()] == [["copy-back"]]
    assert "Updated: e-mail to rights@example.com" in admin.get("/followup/").get_data(as_text=True)


def test_a_webhook_is_shown_as_its_scheme_and_host_only(admin, store):
    r = post(admin, "/followup/subscriptions", WEBHOOK, token_from="/followup/")
    assert r.status_code == 302
    [sub] = store.subscriptions()
    assert (sub.target, sub.secret, sub.site) == (HOOK, "s3cret", "biquge")  # kept whole, to be used
    html = admin.get("/followup/").get_data(as_text=True)
    assert "Added: webhook https://hooks.chat.example/… for site biquge" in html
    for shown in (html, admin.get("/api/followup").get_data(as_text=True),
                  admin.get("/api/subscriptions").get_data(as_text=True),
                  api_post(admin, WEBHOOK).get_data(as_text=True)):
        assert "hooks.chat.example" in shown
        assert "xoxb-secret" not in shown and "services/T0" not in shown and "s3cret" not in shown
    r = post(admin, f"/followup/subscriptions/{sub.id}/remove", {}, token_from="/followup/")
    html = admin.get(r.headers["Location"]).get_data(as_text=True)
    assert "Removed: webhook https://hooks.chat.example/… for site biquge" in html and "xoxb-secret" not in html


@pytest.mark.parametrize("form, message", [
    ({**EMAIL, "target": "rights at example"}, "&#39;rights at example&#39; is not an e-mail address; give one like "
                                               "rights@example.com."),
    ({**WEBHOOK, "target": "ftp://hooks.example.com/T0/xoxb-secret"},
     "The URL given is not a webhook URL: it must start with https:// (recommended) or http://, not ftp://; "
     "give one like https://hooks.example.com/fptrack."),
    ({**WEBHOOK, "target": "hooks.example.com/T0/xoxb-secret"}, "The URL given is not a webhook URL"),
    ({**WEBHOOK, "secret": ""}, "A webhook needs a secret to sign its events with"),
    ({**EMAIL, "work": "没有的书"}, "No work &#39;没有的书&#39;; registered works: 山城旧事."),
    ({**EMAIL, "site": "nosuchsite"}, "No site &#39;nosuchsite&#39; in this organisation; choose one of its sites: "),
    ({**EMAIL, "kinds": []}, "Name at least one event kind: new-match, copy-back, removed, crawl-failed."),
    ({**EMAIL, "kinds": ["new-match", "gossip"]}, "Unknown event kind &#39;gossip&#39;; use some of: new-match"),
    ({**EMAIL, "channel": "pigeon"}, "Choose how to tell: channel must be one of email, webhook."),
    ({**EMAIL, "target": ""}, "Give the e-mail address to write to."),
])
def test_bad_input_is_a_400_that_says_what_to_fix(admin, store, form, message):
    r = post(admin, "/followup/subscriptions", form, token_from="/followup/")
    html = r.get_data(as_text=True)
    error = re.search(r'<p class="flash error" role="alert">(.*?)</p>', html).group(1)
    assert r.status_code == 400 and message in error, error
    assert "xoxb-secret" not in error  # the message never repeats a webhook's URL
    assert store.subscriptions() == []
    assert 'id="new-subscription-form"' in html  # the form again, to correct


def test_a_refused_form_keeps_its_values_but_not_the_secret(admin):
    r = post(admin, "/followup/subscriptions", {**WEBHOOK, "target": "ftp://x.example/", "kinds": ["removed"]},
             token_from="/followup/")
    html = r.get_data(as_text=True)
    assert r.status_code == 400 and 'value="ftp://x.example/"' in html and "s3cret" not in html
    assert 'value="removed" checked' in html and 'value="new-match" checked' not in html
    assert '<option value="webhook" selected>' in html and "<option selected>biquge</option>" in html


def test_a_viewer_sees_the_list_without_the_forms_and_cannot_change_it(viewer, store):
    sub = subscribe(store, "email", "rights@example.com", work="山城旧事")
    html = viewer.get("/followup/").get_data(as_text=True)
    assert "rights@example.com" in html and f'id="subscription-{sub.id}"' in html
    assert "new-subscription-form" not in html and "/remove" not in html
    assert post(viewer, "/followup/subscriptions", EMAIL).status_code == 403
    assert post(viewer, f"/followup/subscriptions/{sub.id}/remove", {}).status_code == 403
    assert api_post(viewer, EMAIL).status_code == 403 and api_delete(viewer, sub.id).status_code == 403
    assert store.subscriptions() == [sub]
    assert viewer.get("/api/subscriptions").get_json()["subscriptions"][0]["id"] == sub.id


def test_removing_an_unknown_subscription_is_a_404(admin):
    assert post(admin, "/followup/subscriptions/nosuch/remove", {}).status_code == 404


def test_the_forms_need_the_csrf_token(admin, store):
    sub = subscribe(store, "email", "rights@example.com", work="山城旧事")
    assert admin.post("/followup/subscriptions", data=dict(EMAIL.items())).status_code == 400
    assert admin.post(f"/followup/subscriptions/{sub.id}/remove").status_code == 400
    assert store.subscriptions() == [sub]


# ---- the JSON API ---------------------------------------------------------------------------------


def test_the_api_adds_lists_and_removes(admin, store):
    r = api_post(admin, EMAIL)
    assert r.status_code == 201
    d = r.get_json()
    assert d["updated"] is False and d["subscription"]["target"] == "rights@example.com"
    assert d["subscription"]["kinds"] == ["new-match", "removed"]
    assert api_post(admin, {**EMAIL, "kinds": ["copy-back"]}).get_json()["updated"] is True
    listed = admin.get("/api/subscriptions").get_json()
    assert [s["id"] for s in listed["subscriptions"]] == [d["subscription"]["id"]]
    assert listed["kinds"] == list(EVENT_KINDS) and listed["channels"] == ["email", "webhook"]
    sub_id = d["subscription"]["id"]
    r = api_delete(admin, sub_id)
    assert r.status_code == 200 and r.get_json()["removed"]["id"] == sub_id and store.subscriptions() == []
    r = api_delete(admin, sub_id)
    assert r.status_code == 404 and "GET /api/subscriptions lists them" in r.get_json()["message"]


def test_without_kinds_the_api_subscribes_to_every_kind(admin):
    body = {k: v for k, v in EMAIL.items() if k != "kinds"}
    assert api_post(admin, body).get_json()["subscription"]["kinds"] == list(EVENT_KINDS)


@pytest.mark.parametrize("body, message", [
    ({**EMAIL, "target": "nobody"}, "'nobody' is not an e-mail address; give one like rights@example.com"),
    ({**WEBHOOK, "target": "ftp://hooks.example.com/T0/xoxb-secret"}, "the URL given is not a webhook URL"),
    ({**EMAIL, "work": "没有的书"}, "no work '没有的书'; registered works: 山城旧事"),
    ({**EMAIL, "site": "nosuchsite"}, "no site 'nosuchsite' in this organisation"),
    ({**EMAIL, "kinds": ["gossip"]}, "unknown event kind 'gossip'"),
    ({**EMAIL, "kinds": "new-match"}, '"kinds" must be a list of event kinds'),
    ({**EMAIL, "work": 3}, '"work" must be text'),
    ({"target": "rights@example.com"}, "channel must be one of email, webhook"),
])
def test_bad_api_input_is_a_400_with_the_fix(admin, store, body, message):
    r = api_post(admin, body)
    assert r.status_code == 400 and message in r.get_json()["message"], r.get_json()
    assert "xoxb-secret" not in r.get_data(as_text=True) and store.subscriptions() == []


def test_the_api_wants_json(admin):
    r = admin.post("/api/subscriptions", data=EMAIL, headers={"X-CSRFToken": csrf_token(admin, "/")})
    assert r.status_code == 400 and "JSON" in r.get_json()["message"]


def test_a_read_token_reads_and_a_write_token_writes(client, store, tokens):
    sub = subscribe(store, "email", "rights@example.com", work="山城旧事")
    read, write = bearer(tokens["read"]), bearer(tokens["write"])
    assert client.get("/api/subscriptions", headers=read).status_code == 200
    r = client.post("/api/subscriptions", json=WEBHOOK, headers=read)
    assert r.status_code == 403 and "use a write token" in r.get_json()["message"]
    assert client.delete(f"/api/subscriptions/{sub.id}", headers=read).status_code == 403
    assert store.subscriptions() == [sub]
    assert client.post("/api/subscriptions", json=WEBHOOK, headers=write).status_code == 201
    assert client.delete(f"/api/subscriptions/{sub.id}", headers=write).status_code == 200
    assert [s.channel for s in store.subscriptions()] == ["webhook"]


# ---- organisations -------------------------------------------------------------------------------


def test_another_organisations_subscription_is_404_and_not_listed(app, east):
    ours = subscribe(east, "email", "rights@example.com", work="山城旧事")
    eve = signed_in(app, "eve")
    assert eve.get("/api/subscriptions").get_json()["subscriptions"] == []
    html = eve.get("/followup/").get_data(as_text=True)
    assert "rights@example.com" not in html and "山城旧事" not in html and "biquge" not in html
    assert post(eve, f"/followup/subscriptions/{ours.id}/remove", {}).status_code == 404
    assert api_delete(eve, ours.id).status_code == 404
    _, token = create_token(east, "east", "write")
    assert api_delete(app.test_client(), ours.id, **bearer(token)).status_code == 404
    assert east.subscriptions() == [ours]


def test_an_organisation_subscribes_only_to_its_own_works_and_sites(app, east):
    eve = signed_in(app, "eve")
    r = api_post(eve, {**EMAIL, "work": "山城旧事"})
    assert r.status_code == 400 and r.get_json()["message"] == "no work '山城旧事'; registered works: 东城"
    r = api_post(eve, {**WEBHOOK, "site": "biquge"})
    assert r.status_code == 400 and "no site 'biquge' in this organisation; choose one of its sites: dongcheng" \
        in r.get_json()["message"]
    r = api_post(eve, {"channel": "email", "target": "e@east.example"})
    assert r.status_code == 400 and "name a work or a site" in r.get_json()["message"]
    assert east.subscriptions() == []
    assert api_post(eve, {"channel": "email", "target": "e@east.example", "work": "东城"}).status_code == 201
    assert api_post(eve, {**WEBHOOK, "site": "dongcheng"}).status_code == 201
    mine = eve.get("/api/subscriptions").get_json()["subscriptions"]
    assert sorted((s["work"], s["site"]) for s in mine) == [("", "dongcheng"), ("东城", "")]
    # the default organisation sees none of them, and its form offers none of east's works and sites
    admin = signed_in(app, "admin")
    assert admin.get("/api/subscriptions").get_json()["subscriptions"] == []
    html = admin.get("/followup/").get_data(as_text=True)
    assert "东城" not in html and "dongcheng" not in html


def test_the_form_offers_the_organisations_works_and_sites(app, east):
    html = signed_in(app, "eve").get("/followup/").get_data(as_text=True)
    assert '<option value="东城">东城</option>' in html and "<option>dongcheng</option>" in html
    assert "山城旧事" not in html and "biquge" not in html


# ---- a test sent now ----------------------------------------------------------------------------


def with_smtp(app, settings, url: str) -> None:
    import dataclasses

    app.extensions["fptrack"].settings = dataclasses.replace(settings, smtp_url=url)


def test_a_test_reaches_a_real_webhook_signed_once_and_nothing_is_stored(client, store, tokens):
    from tests.tracker.fixture_site import webhook_receiver
    from tracker.followup import webhooks

    with webhook_receiver() as hook:
        sub = subscribe(store, "webhook", hook.url, site="biquge", secret="s3cret")
        r = client.post(f"/api/subscriptions/{sub.id}/test", headers=bearer(tokens["write"]))
        assert r.status_code == 200, r.data
        assert r.json["delivered"] is True and r.json["detail"] == "HTTP 200"
        assert r.json["subscription"]["target"] == "http://127.0.0.1/…"
    [(headers, body)] = hook.received
    assert headers["x-fptrack-event"] == "test" and webhooks.verify("s3cret", body, headers["x-fptrack-signature"])
    sent = json.loads(body)
    assert (sent["kind"], sent["site"], sent["data"]["subscription"]) == ("test", "biquge", sub.id)
    assert store.events() == [] and store.deliveries() == []  # a test is not an event of the record
    assert client.post(f"/api/subscriptions/{sub.id}/test", headers=bearer(tokens["read"])).status_code == 403


def test_a_webhook_that_refuses_is_tried_once_and_its_url_stays_hidden(admin, store):
    from tests.tracker.fixture_site import webhook_receiver

    with webhook_receiver(fail_first=5) as hook:
        sub = subscribe(store, "webhook", hook.url, secret="k", work="山城旧事")
        r = post(admin, f"/followup/subscriptions/{sub.id}/test", {}, token_from="/followup/")
        assert r.status_code == 302
        html = admin.get("/followup/").get_data(as_text=True)
    assert hook.answers == [503]  # once: a test that fails says so instead of waiting through retries
    assert "The test did not reach http://127.0.0.1/…: HTTP 503" in html and "/hooks/fptrack" not in html


def test_a_test_e_mail_reaches_a_real_smtp_server(app, admin, store, settings):
    from tests.tracker.test_notify import SMTPServer, free_port

    sub = subscribe(store, "email", "rights@example.com", work="山城旧事")
    r = post(admin, f"/followup/subscriptions/{sub.id}/test", {}, token_from="/followup/")
    html = admin.get("/followup/").get_data(as_text=True)
    assert r.status_code == 302 and "FPT_SMTP_URL is not set" in html  # no mail server: why, at once
    with SMTPServer(free_port()) as smtp:
        with_smtp(app, settings, smtp.url)
        post(admin, f"/followup/subscriptions/{sub.id}/test", {}, token_from="/followup/")
        html = admin.get("/followup/").get_data(as_text=True)
    [(_, to, msg)] = smtp.inbox.messages
    assert to == ["rights@example.com"] and msg["Subject"] == "fptrack: 1 test"
    assert "A test from fptrack: this subscription is set up and reachable." in msg.get_content()
    assert "Test sent: e-mail to rights@example.com for work 山城旧事" in html


def test_another_organisations_subscription_cannot_be_tested(app, east, store):
    sub = subscribe(store, "email", "rights@example.com", work="山城旧事")
    eve = signed_in(app, "eve")
    assert post(eve, f"/followup/subscriptions/{sub.id}/test", {}, token_from="/followup/").status_code == 404
    r = eve.post(f"/api/subscriptions/{sub.id}/test", headers={"X-CSRFToken": csrf_token(eve, "/")})
    assert r.status_code == 404
