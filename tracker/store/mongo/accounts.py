"""MongoDB: the admin's users and their signed-in sessions."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, ReturnDocument

from ..records import ROLES, NotFound, User, UserSession, now
from ..values import check_role, utc
from .connection import NO_ID, MongoBase, _guarded, _query, aware

INDEXES = {
    "users": [([("name", ASCENDING)], True)],
    "sessions": [
        ([("id", ASCENDING)], True),
        ([("user", ASCENDING), ("created_at", ASCENDING)], False),
        ([("last_seen", ASCENDING)], False),
        ([("created_at", ASCENDING)], False),
    ],
}


def _user(d: dict[str, Any]) -> User:
    return User(name=d["name"], password_hash=d["password_hash"], role=d["role"],
                failed_logins=int(d["failed_logins"]), locked_until=aware(d.get("locked_until")),
                created_at=aware(d["created_at"]), last_login=aware(d.get("last_login")))


def _session(d: dict[str, Any]) -> UserSession:
    return UserSession(id=d["id"], user=d["user"], created_at=aware(d["created_at"]),
                       last_seen=aware(d["last_seen"]), stamp=d.get("stamp", ""))


class AccountsMongo(MongoBase):
    """Users and sessions in MongoDB."""

    # ---- users -----------------------------------------------------------------------

    @_guarded
    def upsert_user(self, user: User) -> User:
        check_role(user.role, ROLES)
        d = self._upsert(self._users, {"name": user.name},
                         {"$set": {"password_hash": user.password_hash, "role": user.role,
                                   "failed_logins": int(user.failed_logins),
                                   "locked_until": utc(user.locked_until) if user.locked_until else None},
                          "$setOnInsert": {"created_at": utc(user.created_at),
                                           "last_login": utc(user.last_login) if user.last_login else None}},
                         "user")
        return _user(d)

    @_guarded
    def get_user(self, name: str) -> User:
        d = self._users.find_one({"name": name}, NO_ID)
        if d is None:
            raise NotFound(f"no user {name!r}")
        return _user(d)

    @_guarded
    def users(self) -> list[User]:
        return [_user(d) for d in self._users.find({}, NO_ID).sort("name", ASCENDING)]

    @_guarded
    def delete_user(self, name: str) -> None:
        if self._users.delete_one({"name": name}).deleted_count == 0:
            raise NotFound(f"no user {name!r}")

    @_guarded
    def record_login(self, name: str, ok: bool, *, max_failures: int, lock_for: timedelta,
                     at: datetime | None = None) -> User:
        at = at or now()
        if ok:
            d = self._users.find_one_and_update({"name": name}, {"$set": {"failed_logins": 0, "locked_until": None,
                                                                          "last_login": utc(at)}},
                                                projection=NO_ID, return_document=ReturnDocument.AFTER)
        else:  # the increment is atomic, so every max_failures-th failure is seen by exactly one caller
            d = self._users.find_one_and_update({"name": name}, {"$inc": {"failed_logins": 1}}, projection=NO_ID,
                                                return_document=ReturnDocument.AFTER)
            if d is not None and int(d["failed_logins"]) % max_failures == 0:
                d = self._users.find_one_and_update({"name": name}, {"$set": {"locked_until": utc(at + lock_for)}},
                                                    projection=NO_ID, return_document=ReturnDocument.AFTER)
        if d is None:
            raise NotFound(f"no user {name!r}")
        return _user(d)

    # ---- sessions --------------------------------------------------------------------

    @_guarded
    def add_session(self, session: UserSession) -> UserSession:
        doc = {"id": session.id, "user": session.user, "created_at": utc(session.created_at),
               "last_seen": utc(session.last_seen), "stamp": session.stamp}
        self._sessions.replace_one({"id": session.id}, doc, upsert=True)
        return _session(doc)

    @_guarded
    def get_session(self, session_id: str) -> UserSession:
        d = self._sessions.find_one({"id": session_id}, NO_ID)
        if d is None:
            raise NotFound("no such session")
        return _session(d)

    @_guarded
    def sessions(self, user: str | None = None) -> list[UserSession]:
        cursor = self._sessions.find(_query((("user", user),)), NO_ID).sort([("created_at", ASCENDING),
                                                                              ("id", ASCENDING)])
        return [_session(d) for d in cursor]

    @_guarded
    def touch_session(self, session_id: str, at: datetime) -> None:
        self._sessions.update_one({"id": session_id}, {"$set": {"last_seen": utc(at)}})  # no upsert

    @_guarded
    def delete_session(self, session_id: str) -> None:
        self._sessions.delete_one({"id": session_id})

    @_guarded
    def delete_sessions(self, user: str) -> int:
        return self._sessions.delete_many({"user": user}).deleted_count

    @_guarded
    def purge_sessions(self, *, seen_before: datetime, created_before: datetime) -> int:
        return self._sessions.delete_many({"$or": [{"last_seen": {"$lt": utc(seen_before)}},
                                                   {"created_at": {"$lt": utc(created_before)}}]}).deleted_count
