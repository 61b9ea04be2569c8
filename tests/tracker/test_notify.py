"""Notifications against real servers on 127.0.0.1: an SMTP server (aiosmtpd) receives the
digest of everything since the last one; a webhook receiver (http.server) checks the HMAC
of each event and fails the first delivery, which is retried; SMTP down, a bad address or
URL: one line, the event kept and sent later. And the `fptrack notify` commands."""
from __future__ import annotations

import email
import hashlib
import hmac
import json
import socket
from datetime import timedelta
from email import policy

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from fptrack.cli import main
from tracker.followup.notify import send_pending
from tracker.pipeline import process_page
from tracker.registry import register_work
from tracker.store import CrawlRun, Page, now

from ..conftest import need
from .conftest import SAMPLES
from .fixture_site import webhook_receiver

WORK = "山城旧事"
CHAPTER = f"{WORK}/山城旧事-第二章"
TEXT = (SAMPLES / "originals" / "山城旧事-第二章.txt").read_text(encoding="utf-8")
MAIL_FROM = "alerts@fptrack.test"


def run(*args, env):
    r = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert "Traceback" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Inbox:
    """An aiosmtpd handler that keeps every message it is given."""

    def __init__(self):
        self.messages: list[tuple[str, list[str], email.message.EmailMessage]] = []

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=policy.default)
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), msg))
        return "250 Message accepted for delivery"


class SMTPServer:
    def __init__(self, port: int):
        need(_has_aiosmtpd(), "aiosmtpd is not installed: pip install -e '.[test]'")
        from aiosmtpd.controller import Controller

        self.inbox = Inbox()
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=port)
        self.url = f"smtp://127.0.0.1:{port}"

    def __enter__(self) -> SMTPServer:
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.controller.stop()


def _has_aiosmtpd() -> bool:
    import importlib.util

    return importlib.util.find_spec("aiosmtpd") is not None


@pytest.fixture
def env(settings, ctx):
    register_work(ctx, WORK, SAMPLES / "originals", author="林岚")
    return {"FPT_HOME": str(settings.home), "FPT_MAIL_FROM": MAIL_FROM}


def copy_found(ctx, url: str, site: str = "pirate") -> None:
    ctx.store.upsert_page(Page(key=url, url=url, site=site, text=TEXT))
    assert process_page(ctx, url).status == "done"


def test_the_digest_reaches_a_real_smtp_server_with_everything_since_the_last(ctx, env):
    assert run("notify", "add", "--email", "rights@example.com", "--work", WORK, env=env).exit_code == 0
    copy_found(ctx, "https://pirate.example/2.html")
    copy_found(ctx, "https://other.example/2.html", site="other")
    with SMTPServer(free_port()) as smtp:
        env = {**env, "FPT_SMTP_URL": smtp.url}
        r = run("notify", "send", env=env)
        assert r.exit_code == 0 and r.stdout.startswith("1 digest and 0 webhook events sent (2 deliveries)"), r.output
        [(sender, to, msg)] = smtp.inbox.messages
        assert sender == MAIL_FROM and to == ["rights@example.com"]
        assert msg["Subject"] == "fptrack: 2 new copies" and msg["From"] == MAIL_FROM
        body = msg.get_content()
        assert "New copies (2)" in body
        assert "https://pirate.example/2.html" in body and "https://other.example/2.html" in body

        # Sent once: a second send has nothing; the next digest holds only what came since.
        assert run("notify", "send", env=env).stdout.startswith("0 digests")
        ctx.store.set_match_status("https://pirate.example/2.html", CHAPTER, "removed")
        process_page(ctx, "https://pirate.example/2.html")  # the copy is back
        assert run("notify", "send", env=env).exit_code == 0
        assert len(smtp.inbox.messages) == 2
        msg = smtp.inbox.messages[1][2]
        assert msg["Subject"] == "fptrack: 1 copy back"
        assert "https://pirate.example/2.html" in msg.get_content()
        assert "other.example" not in msg.get_content()


def test_smtp_down_is_one_line_and_the_digest_goes_out_when_it_is_back(ctx, env):
    run("notify", "add", "--email", "rights@example.com", "--all", env=env)
    copy_found(ctx, "https://pirate.example/2.html")
    port = free_port()
    env = {**env, "FPT_SMTP_URL": f"smtp://127.0.0.1:{port}"}
    r = run("notify", "send", env=env)
    assert r.exit_code == 1 and "cannot reach the SMTP server at 127.0.0.1:" in r.output and "1 waiting" in r.output
    [d] = ctx.store.deliveries()
    assert d.status == "pending" and d.attempts == 1 and not d.log[0]["ok"]
    with SMTPServer(port) as smtp:
        assert run("notify", "send", env=env).exit_code == 0
        assert len(smtp.inbox.messages) == 1
    [d] = ctx.store.deliveries()
    assert d.status == "sent" and [entry["ok"] for entry in d.log] == [False, True]
    log = run("notify", "log", "--format", "jsonl", env=env).stdout
    assert json.loads(log.splitlines()[0])["attempts"] == 2


def test_without_smtp_url_the_digest_waits(ctx, env):
    run("notify", "add", "--email", "rights@example.com", "--all", env=env)
    copy_found(ctx, "https://pirate.example/2.html")
    r = run("notify", "send", env=env)
    assert r.exit_code == 1 and "FPT_SMTP_URL is not set" in r.output
    assert [d.status for d in ctx.store.deliveries()] == ["pending"]


def test_a_webhook_gets_each_event_signed_and_a_failed_delivery_is_retried(ctx, env):
    secret = "s3cret-key"
    with webhook_receiver(fail_first=1) as hook:
        r = run("notify", "add", "--webhook", hook.url, "--secret", secret, "--site", "pirate", env=env)
        assert r.exit_code == 0, r.output
        copy_found(ctx, "https://pirate.example/2.html")
        copy_found(ctx, "https://other.example/2.html", site="other")  # another site: not for this hook
        r = run("notify", "send", env=env)
        assert r.exit_code == 0 and "1 webhook event sent" in r.stdout, r.output
    assert hook.answers == [503, 200]
    for headers, body in hook.received:
        expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(headers["x-fptrack-signature"], expected)
        assert headers["content-type"].startswith("application/json") and headers["x-fptrack-event"] == "new-match"
    assert hook.received[0][1] == hook.received[1][1]  # the retry is the same event
    event = json.loads(hook.received[1][1])
    assert (event["kind"], event["page"], event["chapter"], event["site"]) == (
        "new-match", "https://pirate.example/2.html", CHAPTER, "pirate")
    assert event["data"]["url"] == "https://pirate.example/2.html" and event["id"] == hook.received[1][0][
        "x-fptrack-delivery"]
    [d] = ctx.store.deliveries()
    assert d.status == "sent" and [(e["ok"], e["detail"]) for e in d.log] == [
        (False, "HTTP 503 Service Unavailable"), (True, "HTTP 200")]


def test_a_webhook_that_never_answers_keeps_the_event(ctx, env):
    url = f"http://127.0.0.1:{free_port()}/hook"
    run("notify", "add", "--webhook", url, "--secret", "k", "--all", env=env)
    copy_found(ctx, "https://pirate.example/2.html")
    copy_found(ctx, "https://other.example/2.html")
    waits = []
    report = send_pending(ctx.store, ctx.settings, attempts=3, backoff=0.5, sleep=waits.append)
    # Backed off twice on the first event; the second waits for the next send, untried.
    assert waits == [0.5, 1.0] and report.waiting == 2 and report.problems[0].startswith(f"webhook {url}")
    first, second = ctx.store.deliveries()
    assert first.status == "pending" and first.attempts == 3 and first.log[-1]["detail"].startswith("no answer")
    assert second.status == "pending" and second.attempts == 0


def test_failed_crawls_reach_the_site_subscribers(ctx, env):
    with webhook_receiver() as hook:
        run("notify", "add", "--webhook", hook.url, "--secret", "k", "--site", "biquge", env=env)
        t = now()
        ctx.store.add_crawl_run(CrawlRun(site="biquge", started_at=t, finished_at=t + timedelta(minutes=1),
                                         outcome="finished", counts={"fetched": 10, "failed": 3},
                                         failed={"http 503": 3}))
        ctx.store.add_crawl_run(CrawlRun(site="biquge", started_at=t, finished_at=t + timedelta(minutes=2),
                                         outcome="finished", counts={"fetched": 10, "stored": 10}))
        ctx.store.add_crawl_run(CrawlRun(site="other", started_at=t, finished_at=t + timedelta(minutes=2),
                                         outcome="finished", counts={}))
        assert run("notify", "send", env=env).exit_code == 0
        assert run("notify", "send", env=env).exit_code == 0  # each failure is told once
    [(headers, body)] = hook.received
    event = json.loads(body)
    assert event["kind"] == "crawl-failed" and event["site"] == "biquge" and "3 pages failed: http 503 (3)" in event[
        "summary"]
    assert {e.site for e in ctx.store.events(kind="crawl-failed")} == {"biquge", "other"}


def test_subscriptions_are_listed_and_removed(ctx, env):
    run("notify", "add", "--email", "Rights@Example.com", "--work", WORK, env=env)
    run("notify", "add", "--email", "rights@example.com", "--work", WORK, "--kind", "copy-back", env=env)  # updates
    run("notify", "add", "--webhook", "https://hooks.example/x", "--secret", "k", "--site", "biquge", env=env)
    rows = [json.loads(line) for line in run("notify", "list", "--format", "jsonl", env=env).stdout.splitlines()]
    assert sorted((r["channel"], r["work"], r["site"], r["kinds"], r["secret"]) for r in rows) == [
        ("email", WORK, "", "copy-back", ""), ("webhook", "", "biquge", "new-match,copy-back,removed,crawl-failed",
                                               "set")]
    assert "k" not in {r["secret"] for r in rows}
    r = run("notify", "remove", "rights@example.com", env=env)
    assert r.exit_code == 0 and "removed" in r.stdout
    r = run("notify", "remove", "rights@example.com", env=env)
    assert r.exit_code == 1 and "no subscription" in r.output
    assert len(ctx.store.subscriptions()) == 1


def _events_of_age(store, days_old: dict[str, int], pending: set[str] = frozenset()) -> None:
    """Events routed to one subscription, `days_old[id]` days back; sent unless in `pending`."""
    from tracker.store.followup import Delivery, Event

    for event_id, days in days_old.items():
        at = now() - timedelta(days=days)
        store.add_event(Event(id=event_id, kind="crawl-failed", at=at, site="biquge"))
        store.add_delivery(Delivery(event=event_id, subscription="s1", created_at=at))
        if event_id not in pending:
            store.record_delivery(event_id, "s1", True, "250 ok", at=at)
        store.set_event_routed(event_id)


def test_notify_purge_removes_old_delivered_events_and_says_how_many(ctx, env):
    _events_of_age(ctx.store, {"old": 200, "old-pending": 300, "month": 40, "new": 1}, pending={"old-pending"})
    r = run("notify", "purge", "--dry-run", env=env)
    assert r.exit_code == 0 and r.stdout == ("would remove 1 event and 1 delivery older than 180 days "
                                             "(--dry-run: nothing removed)\n")
    assert len(ctx.store.events(limit=None)) == 4
    r = run("notify", "purge", env=env)
    assert r.exit_code == 0 and r.stdout == "removed 1 event and 1 delivery older than 180 days\n"
    assert run("notify", "purge", "--days", "30", env=env).stdout.startswith("removed 1 event and 1 delivery")
    assert sorted(e.id for e in ctx.store.events(limit=None)) == ["new", "old-pending"]
    assert [d.event for d in ctx.store.deliveries()] == ["old-pending", "new"]


def test_notify_purge_keeps_everything_when_the_setting_says_0(ctx, env):
    _events_of_age(ctx.store, {"old": 900})
    r = run("notify", "purge", env={**env, "FPT_EVENTS_DAYS": "0"})
    assert r.exit_code == 0 and "kept for ever" in r.stdout and len(ctx.store.events(limit=None)) == 1
    r = run("notify", "purge", "--days", "0", env=env)
    assert r.exit_code == 2 and "--days" in r.output
    r = run("notify", "purge", env={**env, "FPT_EVENTS_DAYS": "-3"})
    assert r.exit_code == 1 and "FPT_EVENTS_DAYS must be 0" in r.output
    assert len(ctx.store.events(limit=None)) == 1


def test_expire_events_keeps_every_event_for_0_days(ctx):
    from tracker.followup.notify import Purged, expire_events

    _events_of_age(ctx.store, {"old": 900})
    assert expire_events(ctx.store, 0) == Purged(0, 0)
    assert expire_events(ctx.store, 900, at=now() - timedelta(minutes=1)) == Purged(0, 0)  # 900 days less a minute
    assert expire_events(ctx.store, 899) == Purged(1, 1)
    with pytest.raises(ValueError):
        expire_events(ctx.store, -1)


@pytest.mark.parametrize("args, says", [
    (["--email", "not-an-address", "--all"], "is not an e-mail address"),
    (["--webhook", "ftp://hooks.example/x", "--secret", "k", "--all"], "is not a webhook URL"),
    (["--webhook", "https://hooks.example:99999/x", "--secret", "k", "--all"], "is not a webhook URL"),
    (["--webhook", "https://hooks.example/x", "--all"], "needs a secret"),
    (["--email", "a@b.example", "--work", "没有这本书"], "no work '没有这本书'"),
    (["--email", "a@b.example"], "give --work TITLE, --site NAME"),
    (["--email", "a@b.example", "--webhook", "https://h.example/", "--all"], "give one of --email"),
    (["--email", "a@b.example", "--all", "--site", "x"], "leave out --work and --site"),
    (["--email", "a@b.example", "--all", "--kind", "gossip"], "Invalid value for '--kind'"),
])
def test_a_mistake_is_one_line_and_adds_nothing(ctx, env, args, says):
    r = run("notify", "add", *args, env=env)
    assert r.exit_code in (1, 2) and says in r.output, r.output
    assert ctx.store.subscriptions() == []


@hyp_settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.text(max_size=60), secret=st.text(max_size=20), site=st.text(max_size=20),
       channel=st.sampled_from(["--email", "--webhook"]))
def test_any_input_to_notify_add_is_taken_or_refused_in_one_line(env, target, secret, site, channel):
    args = ["notify", "add", channel, target, "--site", site or "s"]
    if secret:
        args += ["--secret", secret]
    r = CliRunner().invoke(main, args, env=env)
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 1, 2)
    if r.exit_code:
        assert r.output.strip().splitlines()[-1].startswith("Error"), r.output
