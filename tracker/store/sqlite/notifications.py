"""SQLite: notification subscriptions, events, deliveries with their log, and the re-checks
of pages whose takedown was sent."""
from __future__ import annotations

import sqlite3
from datetime import datetime

from ..followup import EVENT_KINDS, RECHECK_OUTCOMES, Delivery, Event, Recheck, Subscription, check_subscription
from ..records import NotFound, now
from ..values import check_status, check_window, to_text
from .connection import SQLiteBase, _guarded, _where, dumps, from_text, loads

SCHEMA = """
CREATE TABLE IF NOT EXISTS subscriptions (
    id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    target TEXT NOT NULL,
    work TEXT NOT NULL,
    site TEXT NOT NULL,
    secret TEXT NOT NULL,
    kinds TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    work TEXT NOT NULL,
    site TEXT NOT NULL,
    page TEXT NOT NULL,
    chapter TEXT NOT NULL,
    summary TEXT NOT NULL,
    data TEXT NOT NULL,
    routed INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_at ON events (at DESC, id);
-- the unrouted events, and the routed ones past their days in time order (purge_events)
DROP INDEX IF EXISTS events_routed;
CREATE INDEX IF NOT EXISTS events_routed_at ON events (routed, at, id);
CREATE TABLE IF NOT EXISTS deliveries (
    event TEXT NOT NULL,
    subscription TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    log TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT,
    PRIMARY KEY (event, subscription)
);
CREATE INDEX IF NOT EXISTS deliveries_subscription ON deliveries (subscription, status, created_at);
CREATE INDEX IF NOT EXISTS deliveries_status ON deliveries (status, created_at);
CREATE TABLE IF NOT EXISTS rechecks (
    page TEXT PRIMARY KEY,
    site TEXT NOT NULL,
    url TEXT NOT NULL,
    outcome TEXT NOT NULL,
    checked_at TEXT NOT NULL,
    http_status INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rechecks_site ON rechecks (site, page);
"""


def _subscription(r: sqlite3.Row) -> Subscription:
    return Subscription(id=r["id"], channel=r["channel"], target=r["target"], work=r["work"], site=r["site"],
                        secret=r["secret"], kinds=loads(r["kinds"]), created_at=from_text(r["created_at"]))


def _event(r: sqlite3.Row) -> Event:
    return Event(id=r["id"], kind=r["kind"], at=from_text(r["at"]), work=r["work"], site=r["site"], page=r["page"],
                 chapter=r["chapter"], summary=r["summary"], data=loads(r["data"]), routed=bool(r["routed"]))


def _delivery(r: sqlite3.Row) -> Delivery:
    return Delivery(event=r["event"], subscription=r["subscription"], status=r["status"], attempts=r["attempts"],
                    log=loads(r["log"]), created_at=from_text(r["created_at"]),
                    sent_at=from_text(r["sent_at"]) if r["sent_at"] else None)


def _recheck(r: sqlite3.Row) -> Recheck:
    return Recheck(page=r["page"], site=r["site"], url=r["url"], outcome=r["outcome"],
                   checked_at=from_text(r["checked_at"]), http_status=r["http_status"], reason=r["reason"])


class NotificationsSQL(SQLiteBase):
    """Subscriptions, events, deliveries and re-checks in SQLite."""

    # ---- subscriptions -------------------------------------------------------------

    @_guarded
    def upsert_subscription(self, sub: Subscription) -> Subscription:
        check_subscription(sub)
        with self._write() as c:
            c.execute("INSERT INTO subscriptions (id, channel, target, work, site, secret, kinds, created_at) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET channel = excluded.channel, "
                      "target = excluded.target, work = excluded.work, site = excluded.site, "
                      "secret = excluded.secret, kinds = excluded.kinds",
                      (sub.id, sub.channel, sub.target, sub.work, sub.site, sub.secret, dumps(list(sub.kinds)),
                       to_text(sub.created_at)))
            return _subscription(c.execute("SELECT * FROM subscriptions WHERE id = ?", (sub.id,)).fetchone())

    @_guarded
    def get_subscription(self, sub_id: str) -> Subscription:
        return _subscription(self._one("SELECT * FROM subscriptions WHERE id = ?", (sub_id,),
                                       f"no subscription {sub_id!r}"))

    @_guarded
    def subscriptions(self) -> list[Subscription]:
        return [_subscription(r) for r in self._read("SELECT * FROM subscriptions ORDER BY created_at, id")]

    @_guarded
    def delete_subscription(self, sub_id: str) -> None:
        with self._write() as c:
            if c.execute("DELETE FROM subscriptions WHERE id = ?", (sub_id,)).rowcount == 0:
                raise NotFound(f"no subscription {sub_id!r}")
            c.execute("DELETE FROM deliveries WHERE subscription = ? AND status = 'pending'", (sub_id,))

    # ---- events --------------------------------------------------------------------

    @_guarded
    def add_event(self, event: Event) -> tuple[Event, bool]:
        check_status(event.kind, EVENT_KINDS, "event kind")
        with self._write() as c:
            new = c.execute(
                "INSERT OR IGNORE INTO events (id, kind, at, work, site, page, chapter, summary, data, routed) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (event.id, event.kind, to_text(event.at), event.work, event.site, event.page, event.chapter,
                 event.summary, dumps(event.data), int(event.routed))).rowcount == 1
            return _event(c.execute("SELECT * FROM events WHERE id = ?", (event.id,)).fetchone()), new

    @_guarded
    def get_event(self, event_id: str) -> Event:
        return _event(self._one("SELECT * FROM events WHERE id = ?", (event_id,), f"no event {event_id!r}"))

    @_guarded
    def events(self, *, kind: str | None = None, routed: bool | None = None, site: str | None = None,
               limit: int | None = 50) -> list[Event]:
        check_window(limit)
        if kind is not None:
            check_status(kind, EVENT_KINDS, "event kind")
        cond, args = _where((("kind", kind), ("routed", None if routed is None else int(routed)), ("site", site)))
        rows = self._read(f"SELECT * FROM events {cond} ORDER BY at DESC, id LIMIT ?",
                          [*args, -1 if limit is None else limit])
        return [_event(r) for r in rows]

    @_guarded
    def set_event_routed(self, event_id: str) -> None:
        with self._write() as c:
            if c.execute("UPDATE events SET routed = 1 WHERE id = ?", (event_id,)).rowcount == 0:
                raise NotFound(f"no event {event_id!r}")

    @_guarded
    def purge_events(self, before: datetime, *, batch: int = 500, dry_run: bool = False) -> tuple[int, int]:
        if batch < 1:
            raise ValueError(f"batch must be 1 or more events, not {batch}")
        cutoff, events, deliveries = to_text(before), 0, 0
        after: tuple[str, str] = ("", "")
        while True:
            # One transaction per batch: the write lock is held for `batch` events at most.
            with self._write() as c:
                rows = c.execute("SELECT id, at FROM events WHERE routed = 1 AND at < ? AND (at, id) > (?, ?) "
                                 "ORDER BY at, id LIMIT ?", (cutoff, *after, batch)).fetchall()
                ids = [r["id"] for r in rows]
                marks = ",".join("?" * len(ids))
                # `+status`: look the batch's events up by key, not every pending delivery by status.
                busy = {r["event"] for r in c.execute(
                    f"SELECT DISTINCT event FROM deliveries WHERE event IN ({marks}) AND +status = 'pending'", ids)}
                done = [i for i in ids if i not in busy]
                if done:
                    marks = ",".join("?" * len(done))
                    if dry_run:
                        deliveries += c.execute(f"SELECT COUNT(*) FROM deliveries WHERE event IN ({marks})",
                                                done).fetchone()[0]
                        events += len(done)
                    else:
                        deliveries += c.execute(f"DELETE FROM deliveries WHERE event IN ({marks})", done).rowcount
                        events += c.execute(f"DELETE FROM events WHERE id IN ({marks})", done).rowcount
            if len(rows) < batch:
                return events, deliveries
            after = (rows[-1]["at"], rows[-1]["id"])  # past the events kept for their pending deliveries

    # ---- deliveries ----------------------------------------------------------------

    @_guarded
    def add_delivery(self, delivery: Delivery) -> tuple[Delivery, bool]:
        with self._write() as c:
            new = c.execute(
                "INSERT OR IGNORE INTO deliveries (event, subscription, status, attempts, log, created_at, sent_at) "
                "VALUES (?, ?, 'pending', 0, '[]', ?, NULL)",
                (delivery.event, delivery.subscription, to_text(delivery.created_at))).rowcount == 1
            row = c.execute("SELECT * FROM deliveries WHERE event = ? AND subscription = ?",
                            (delivery.event, delivery.subscription)).fetchone()
        return _delivery(row), new

    @_guarded
    def deliveries(self, *, subscription: str | None = None, status: str | None = None, event: str | None = None,
                   limit: int | None = None) -> list[Delivery]:
        check_window(limit)
        if status is not None:
            check_status(status, ("pending", "sent"), "delivery status")
        cond, args = _where((("subscription", subscription), ("status", status), ("event", event)))
        rows = self._read(f"SELECT * FROM deliveries {cond} ORDER BY created_at, event, subscription LIMIT ?",
                          [*args, -1 if limit is None else limit])
        return [_delivery(r) for r in rows]

    @_guarded
    def record_delivery(self, event: str, subscription: str, ok: bool, detail: str = "",
                        at: datetime | None = None) -> Delivery:
        at = at or now()
        with self._write() as c:
            row = c.execute("SELECT * FROM deliveries WHERE event = ? AND subscription = ?",
                            (event, subscription)).fetchone()
            if row is None:
                raise NotFound(f"no delivery of event {event!r} to subscription {subscription!r}")
            log = loads(row["log"])
            log.append({"at": to_text(at), "ok": bool(ok), "detail": detail})
            if ok:
                c.execute("UPDATE deliveries SET status = 'sent', attempts = attempts + 1, log = ?, sent_at = ? "
                          "WHERE event = ? AND subscription = ?", (dumps(log), to_text(at), event, subscription))
            else:
                c.execute("UPDATE deliveries SET attempts = attempts + 1, log = ? WHERE event = ? AND subscription = ?",
                          (dumps(log), event, subscription))
            row = c.execute("SELECT * FROM deliveries WHERE event = ? AND subscription = ?",
                            (event, subscription)).fetchone()
        return _delivery(row)

    # ---- re-checks -----------------------------------------------------------------

    @_guarded
    def put_recheck(self, recheck: Recheck) -> Recheck:
        check_status(recheck.outcome, RECHECK_OUTCOMES, "re-check outcome")
        with self._write() as c:
            c.execute("INSERT INTO rechecks (page, site, url, outcome, checked_at, http_status, reason) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (page) DO UPDATE SET site = excluded.site, "
                      "url = excluded.url, outcome = excluded.outcome, checked_at = excluded.checked_at, "
                      "http_status = excluded.http_status, reason = excluded.reason",
                      (recheck.page, recheck.site, recheck.url, recheck.outcome, to_text(recheck.checked_at),
                       int(recheck.http_status), recheck.reason))
            return _recheck(c.execute("SELECT * FROM rechecks WHERE page = ?", (recheck.page,)).fetchone())

    @_guarded
    def get_recheck(self, page: str) -> Recheck:
        return _recheck(self._one("SELECT * FROM rechecks WHERE page = ?", (page,), f"no re-check of {page!r}"))

    @_guarded
    def rechecks(self, *, site: str | None = None) -> list[Recheck]:
        cond, args = _where((("site", site),))
        return [_recheck(r) for r in self._read(f"SELECT * FROM rechecks {cond} ORDER BY page", args)]
