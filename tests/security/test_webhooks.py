"""Webhooks under the egress policy: a receiver on a loopback port is refused (no connection is
made, so "Send a test" scans nothing), a receiver that cuts its answer short or trickles it is
one failed delivery with its reason, and the other receivers still get theirs."""
from __future__ import annotations

import threading
import time

import pytest

from tracker.followup import notify, webhooks
from tracker.followup.notify import NotifyError, send_pending, subscribe
from tracker.settings import Settings
from tracker.store.followup import Event
from tracker.store.sqlite import SQLiteStore

from .conftest import bearer
from .servers import AdminServer, answer, cut_chunked, trickle


def connections_to(server) -> int:
    return len(server.requests)


def test_a_webhook_written_with_a_loopback_address_is_not_accepted(serve, store):
    redis_like = serve(answer(b"-ERR"))
    for url in (f"http://127.0.0.1:{redis_like.port}/", f"http://2130706433:{redis_like.port}/",
                f"http://[::ffff:127.0.0.1]:{redis_like.port}/", f"http://0x7f.1:{redis_like.port}/"):
        with pytest.raises(NotifyError) as e:
            subscribe(store, "webhook", url, secret="k", site="biquge")
        assert "loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.1/32" in str(e.value)
    assert connections_to(redis_like) == 0


def test_send_a_test_to_a_loopback_port_connects_nowhere_and_says_why(serve, client, store, tokens):
    redis_like = serve(answer(b"-ERR"))
    # A name is accepted when the subscription is made and checked when it is resolved, at each send.
    sub = subscribe(store, "webhook", f"http://localhost:{redis_like.port}/hook", secret="k", site="biquge")
    r = client.post(f"/api/subscriptions/{sub.id}/test", headers=bearer(tokens["write"]))
    assert r.status_code == 200, r.data
    assert r.json["delivered"] is False
    assert r.json["detail"].startswith("refused to fetch http://localhost")
    assert r.json["detail"].endswith(": 127.0.0.1 is a loopback address; allow it with FPT_FETCH_ALLOW=127.0.0.1/32")
    assert "/hook" not in r.json["detail"]  # a webhook's path (its secret, often) is never shown
    assert connections_to(redis_like) == 0


def test_a_refused_webhook_is_not_retried(serve, monkeypatch):
    redis_like = serve(answer(b"-ERR"))
    tries = []
    ok, detail = webhooks.deliver(f"http://localhost:{redis_like.port}/secret-path", "k", b"{}", attempts=4, backoff=0,
                                  sleep=tries.append)
    assert not ok and tries == [] and connections_to(redis_like) == 0
    assert detail == (f"refused to fetch http://localhost:{redis_like.port}/: 127.0.0.1 is a loopback address; "
                      "allow it with FPT_FETCH_ALLOW=127.0.0.1/32")


def test_a_receiver_that_cuts_its_answer_is_a_failed_test_not_a_500(serve, client, store, tokens, monkeypatch):
    cutter = serve(cut_chunked(b'{"ok": tr'))
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    sub = subscribe(store, "webhook", cutter.url + "/hook", secret="k", site="biquge")
    r = client.post(f"/api/subscriptions/{sub.id}/test", headers=bearer(tokens["write"]))
    assert r.status_code == 200, r.data
    assert (r.json["delivered"], r.json["detail"]) == (False, "no answer: incomplete answer")


def _two_receivers(store, first_handler, serve, monkeypatch):
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    bad, good = serve(first_handler), serve(answer(b"{}"))
    subscribe(store, "webhook", bad.url + "/a", secret="k", site="east-site")
    subscribe(store, "webhook", good.url + "/b", secret="k", site="west-site")
    for site in ("east-site", "west-site"):
        notify.record(store, Event(id=f"new-match:{site}", kind="new-match", site=site, summary="a copy"))
    return bad, good


def test_notify_send_goes_on_after_a_receiver_cuts_its_answer(tmp_path, serve, monkeypatch):
    store = SQLiteStore(tmp_path / "s.db")
    bad, good = _two_receivers(store, cut_chunked(), serve, monkeypatch)
    report = send_pending(store, Settings.load({"FPT_HOME": str(tmp_path)}), attempts=2, backoff=0,
                          sleep=lambda s: None)
    assert report.webhooks == 1 and report.waiting == 1
    assert any("incomplete answer" in p for p in report.problems)
    by_event = {d.event: d for d in store.deliveries()}
    assert by_event["new-match:west-site"].status == "sent"
    assert by_event["new-match:east-site"].status == "pending"
    assert by_event["new-match:east-site"].log[-1]["detail"] == "no answer: incomplete answer"
    assert connections_to(good) == 1 and connections_to(bad) == 2  # retried, as a failed answer is
    store.close()


def test_notify_send_on_the_command_line_goes_on_and_says_why_in_one_line(tmp_path, serve, monkeypatch):
    from click.testing import CliRunner

    from fptrack.cli import main
    from tracker.context import Context

    monkeypatch.setenv("FPT_HOME", str(tmp_path))
    ctx = Context(Settings.load({"FPT_HOME": str(tmp_path)}))
    bad, good = _two_receivers(ctx.store, cut_chunked(), serve, monkeypatch)
    ctx.store.close()
    r = CliRunner().invoke(main, ["notify", "send", "--attempts", "1"])
    assert "Traceback" not in r.output and (r.exception is None or isinstance(r.exception, SystemExit)), r.output
    assert "incomplete answer" in r.output
    assert connections_to(good) == 1


def test_a_trickling_receiver_is_cut_at_the_deadline(serve, monkeypatch):
    slow = serve(trickle(every=0.5, total=200))
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    start = time.monotonic()
    status, detail = webhooks.post(slow.url, "k", b"{}", timeout=1.5)
    took = time.monotonic() - start
    assert (status, detail) == (0, "no answer: timed out after 1.5 s")
    assert took < 2.5


def test_send_a_test_is_bounded_and_healthz_stays_fast_while_four_trickle(serve, app, store, tokens, monkeypatch):
    import web.manage.subscriptions

    slow = serve(trickle(every=1.0, total=200))
    monkeypatch.setenv("FPT_FETCH_ALLOW", "127.0.0.1/32")
    monkeypatch.setattr(web.manage.subscriptions, "TEST_TIMEOUT", 2.0)
    sub = subscribe(store, "webhook", slow.url + "/hook", secret="k", site="biquge")
    server = AdminServer(app)
    base = f"http://127.0.0.1:{server.port}"
    import http.client
    import json

    def call(method: str, path: str, headers: dict) -> tuple[int, bytes, float]:
        start = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request(method, path, headers=headers)
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, body, time.monotonic() - start

    results: list = []
    threads = [threading.Thread(target=lambda: results.append(
        call("POST", f"/api/subscriptions/{sub.id}/test", bearer(tokens["write"])))) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        time.sleep(0.3)
        status, _, healthz = call("GET", "/healthz", {})
        for t in threads:
            t.join(30)
    finally:
        server.close()
    assert status == 200 and healthz < 3.0, base  # at most one test's deadline, not a trickle's 200 s
    assert len(results) == 4
    for code, body, took in results:
        answer_ = json.loads(body)
        assert code == 200 and answer_["delivered"] is False and answer_["detail"] == "no answer: timed out after 2 s"
        assert took < 3.5
