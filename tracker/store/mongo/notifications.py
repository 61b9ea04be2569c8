"""MongoDB: notification subscriptions, events, deliveries with their log, and the re-checks
of pages whose takedown was sent."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, ReturnDocument

from ..followup import EVENT_KINDS, RECHECK_OUTCOMES, Delivery, Event, Recheck, Subscription, check_subscription
from ..records import NotFound, now
from ..values import check_status, check_window, to_text, utc
from .connection import NO_ID, MongoBase, _guarded, _query, aware, storable

INDEXES = {
    "subscriptions": [([("id", ASCENDING)], True), ([("created_at", ASCENDING), ("id", ASCENDING)], False)],
    "events": [
        ([("id", ASCENDING)], True),
        ([("at", DESCENDING), ("id", ASCENDING)], False),
        # the unrouted events, and the routed ones past their days in time order (purge_events)
        ([("routed", ASCENDING), ("at", ASCENDING), ("id", ASCENDING)], False),
    ],
    "deliveries": [
        ([("event", ASCENDING), ("subscription", ASCENDING)], True),
        ([("subscription", ASCENDING), ("status", ASCENDING), ("created_at", ASCENDING)], False),
        ([("status", ASCENDING), ("created_at", ASCENDING)], False),
    ],
    "rechecks": [([("page", ASCENDING)], True), ([("site", ASCENDING), ("page", ASCENDING)], False)],
}


def _subscription(d: dict[str, Any]) -> Subscription:
    return Subscription(id=d["id"], channel=d["channel"], target=d["target"], work=d["work"], site=d["site"],
                        secret=d.get("secret", ""), kinds=list(d["kinds"]), created_at=aware(d["created_at"]))


def _event(d: dict[str, Any]) -> Event:
    return Event(id=d["id"], kind=d["kind"], at=aware(d["at"]), work=d["work"], site=d["site"], page=d["page"],
                 chapter=d["chapter"], summary=d["summary"], data=aware(d.get("data") or {}),
                 routed=bool(d["routed"]))


def _delivery(d: dict[str, Any]) -> Delivery:
    return Delivery(event=d["event"], subscription=d["subscription"], status=d["status"], attempts=int(d["attempts"]),
                    log=list(d.get("log") or []), created_at=aware(d["created_at"]),
                    sent_at=aware(d["sent_at"]) if d.get("sent_at") else None)


def _recheck(d: dict[str, Any]) -> Recheck:
    return Recheck(page=d["page"], site=d["site"], url=d["url"], outcome=d["outcome"],
                   checked_at=aware(d["checked_at"]), http_status=int(d["http_status"]), reason=d["reason"])


class NotificationsMongo(MongoBase):
    """Subscriptions, events, deliveries and re-checks in MongoDB."""

    # ---- subscriptions -------------------------------------------------------------

    @_guarded
    def upsert_subscription(self, sub: Subscription) -> Subscription:
        check_subscription(sub)
        return _subscription(self._upsert(
            self._subscriptions, {"id": sub.id},
            {"$set": {"channel": sub.channel, "target": sub.target, "work": sub.work, "site": sub.site,
                      "secret": sub.secret, "kinds": list(sub.kinds)},
             "$setOnInsert": {"created_at": utc(sub.created_at)}}, "subscription"))

    @_guarded
    def get_subscription(self, sub_id: str) -> Subscription:
        d = self._subscriptions.find_one({"id": sub_id}, NO_ID)
        if d is None:
            raise NotFound(f"no subscription {sub_id!r}")
        return _subscription(d)

    @_guarded
    def subscriptions(self) -> list[Subscription]:
        return [_subscription(d) for d in
                self._subscriptions.find({}, NO_ID).sort([("created_at", ASCENDING), ("id", ASCENDING)])]

    @_guarded
    def delete_subscription(self, sub_id: str) -> None:
        if self._subscriptions.delete_one({"id": sub_id}).deleted_count == 0:
            raise NotFound(f"no subscription {sub_id!r}")
        self._deliveries.delete_many({"subscription": sub_id, "status": "pending"})

    # ---- events --------------------------------------------------------------------

    @_guarded
    def add_event(self, event: Event) -> tuple[Event, bool]:
        check_status(event.kind, EVENT_KINDS, "event kind")
        doc = {"kind": event.kind, "at": utc(event.at), "work": event.work, "site": event.site, "page": event.page,
               "chapter": event.chapter, "summary": event.summary, "data": storable(event.data),
               "routed": bool(event.routed)}
        before = self._upsert(self._events, {"id": event.id}, {"$setOnInsert": doc}, "event", before=True)
        return self.get_event(event.id), before is None

    @_guarded
    def get_event(self, event_id: str) -> Event:
        d = self._events.find_one({"id": event_id}, NO_ID)
        if d is None:
            raise NotFound(f"no event {event_id!r}")
        return _event(d)

    @_guarded
    def events(self, *, kind: str | None = None, routed: bool | None = None, site: str | None = None,
               limit: int | None = 50) -> list[Event]:
        check_window(limit)
        if kind is not None:
            check_status(kind, EVENT_KINDS, "event kind")
        if limit == 0:
            return []
        cursor = self._events.find(_query((("kind", kind), ("routed", routed), ("site", site))), NO_ID).sort(
            [("at", DESCENDING), ("id", ASCENDING)])
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_event(d) for d in cursor]

    @_guarded
    def set_event_routed(self, event_id: str) -> None:
        if self._events.update_one({"id": event_id}, {"$set": {"routed": True}}).matched_count == 0:
            raise NotFound(f"no event {event_id!r}")

    @_guarded
    def purge_events(self, before: datetime, *, batch: int = 500, dry_run: bool = False) -> tuple[int, int]:
        if batch < 1:
            raise ValueError(f"batch must be 1 or more events, not {batch}")
        old: dict[str, Any] = {"$lt": utc(before)}
        query: dict[str, Any] = {"routed": True, "at": old}
        events = deliveries = 0
        while True:
            docs = list(self._events.find(query, {"_id": 0, "id": 1, "at": 1})
                        .sort([("routed", ASCENDING), ("at", ASCENDING), ("id", ASCENDING)]).limit(batch))
            ids = [d["id"] for d in docs]
            busy = set(self._deliveries.distinct("event", {"event": {"$in": ids}, "status": "pending"}) if ids else [])
            done = [i for i in ids if i not in busy]
            if done and dry_run:
                deliveries += self._deliveries.count_documents({"event": {"$in": done}})
                events += len(done)
            elif done:
                # Deliveries first: an interrupted purge leaves events without deliveries (taken next
                # time), never deliveries without their event. No delivery is made for a routed event.
                deliveries += self._deliveries.delete_many({"event": {"$in": done}, "status": {"$ne": "pending"}}
                                                           ).deleted_count
                events += self._events.delete_many({"id": {"$in": done}, "routed": True}).deleted_count
            if len(docs) < batch:
                return events, deliveries
            last = docs[-1]  # past the events kept for their pending deliveries
            query = {"routed": True, "$or": [{"at": {"$gt": last["at"], **old}},
                                             {"at": last["at"], "id": {"$gt": last["id"]}}]}

    # ---- deliveries ----------------------------------------------------------------

    @_guarded
    def add_delivery(self, delivery: Delivery) -> tuple[Delivery, bool]:
        key = {"event": delivery.event, "subscription": delivery.subscription}
        before = self._upsert(self._deliveries, key,
                              {"$setOnInsert": {"status": "pending", "attempts": 0, "log": [],
                                                "created_at": utc(delivery.created_at), "sent_at": None}},
                              "delivery", before=True)
        return _delivery(self._deliveries.find_one(key, NO_ID)), before is None

    @_guarded
    def deliveries(self, *, subscription: str | None = None, status: str | None = None, event: str | None = None,
                   limit: int | None = None) -> list[Delivery]:
        check_window(limit)
        if status is not None:
            check_status(status, ("pending", "sent"), "delivery status")
        if limit == 0:
            return []
        cursor = self._deliveries.find(_query((("subscription", subscription), ("status", status), ("event", event))),
                                       NO_ID).sort([("created_at", ASCENDING), ("event", ASCENDING),
                                                    ("subscription", ASCENDING)])
        if limit is not None:
            cursor = cursor.limit(limit)
        return [_delivery(d) for d in cursor]

    @_guarded
    def record_delivery(self, event: str, subscription: str, ok: bool, detail: str = "",
                        at: datetime | None = None) -> Delivery:
        at = utc(at or now())
        update: dict[str, Any] = {"$inc": {"attempts": 1},
                                  "$push": {"log": {"at": to_text(at), "ok": bool(ok), "detail": detail}}}
        if ok:
            update["$set"] = {"status": "sent", "sent_at": at}
        d = self._deliveries.find_one_and_update({"event": event, "subscription": subscription}, update,
                                                 projection=NO_ID, return_document=ReturnDocument.AFTER)
        if d is None:
            raise NotFound(f"no delivery of event {event!r} to subscription {subscription!r}")
        return _delivery(d)

    # ---- re-checks -----------------------------------------------------------------

    @_guarded
    def put_recheck(self, recheck: Recheck) -> Recheck:
        check_status(recheck.outcome, RECHECK_OUTCOMES, "re-check outcome")
        return _recheck(self._upsert(
            self._rechecks, {"page": recheck.page},
            {"$set": {"site": recheck.site, "url": recheck.url, "outcome": recheck.outcome,
                      "checked_at": utc(recheck.checked_at), "http_status": int(recheck.http_status),
                      "reason": recheck.reason}}, "re-check"))

    @_guarded
    def get_recheck(self, page: str) -> Recheck:
        d = self._rechecks.find_one({"page": page}, NO_ID)
        if d is None:
            raise NotFound(f"no re-check of {page!r}")
        return _recheck(d)

    @_guarded
    def rechecks(self, *, site: str | None = None) -> list[Recheck]:
        return [_recheck(d) for d in
                self._rechecks.find(_query((("site", site),)), NO_ID).sort("page", ASCENDING)]
