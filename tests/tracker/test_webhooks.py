"""Webhook signatures: what a receiver checks holds for the exact body and secret, and for
nothing else; the back-off doubles and is capped."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracker.followup.webhooks import MAX_BACKOFF, deliver, signature, verify


@given(secret=st.text(min_size=1, max_size=40), body=st.binary(max_size=300), flip=st.integers(0, 10_000))
def test_a_signature_holds_for_its_body_and_secret_only(secret, body, flip):
    header = signature(secret, body)
    assert header.startswith("sha256=") and len(header) == 7 + 64
    assert verify(secret, body, header)
    assert not verify(secret + "x", body, header)
    if body:
        i = flip % len(body)
        changed = body[:i] + bytes([body[i] ^ 1]) + body[i + 1:]
        assert not verify(secret, changed, header)
    assert not verify(secret, body + b" ", header)


def test_retries_back_off_exponentially_up_to_a_cap(monkeypatch):
    import tracker.followup.webhooks as webhooks

    answers = iter([(503, "HTTP 503"), (0, "no answer: timed out"), (429, "HTTP 429"), (500, "HTTP 500"),
                    (200, "HTTP 200")])
    monkeypatch.setattr(webhooks, "post", lambda *a, **k: next(answers))
    waits, tries = [], []
    ok, detail = deliver("https://h.example/", "k", b"{}", attempts=5, backoff=20, sleep=waits.append,
                         on_attempt=lambda ok, d: tries.append((ok, d)))
    assert ok and detail == "HTTP 200" and waits == [20, 40, MAX_BACKOFF, MAX_BACKOFF]
    assert [t[0] for t in tries] == [False, False, False, False, True]


def test_a_refusal_is_not_retried_now(monkeypatch):
    import tracker.followup.webhooks as webhooks

    calls = []
    monkeypatch.setattr(webhooks, "post", lambda *a, **k: calls.append(1) or (404, "HTTP 404 Not Found"))
    assert deliver("https://h.example/", "k", b"{}", attempts=4, sleep=lambda s: None) == (False, "HTTP 404 Not Found")
    assert len(calls) == 1
