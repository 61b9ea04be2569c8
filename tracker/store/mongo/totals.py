"""MongoDB: the running totals of matches (tracker/store/totals.py), kept by the writes.

Every write that adds, moves or removes a match updates its groups with atomic $inc, $min
and $max, so two workers recording matches of one group at once both count. When a
match that held its group's earliest or latest time leaves it, the group's times are read
again from its matches (through an index that leads with the chapter or the site).

A single MongoDB server has no transaction across the match and its totals: a process
killed between the two writes leaves a group off by one. `rebuild_totals` computes them
all again from the matches (the daily run calls it, and a store whose totals are missing
gets them when it is opened).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, DESCENDING
from pymongo.errors import PyMongoError

from ..totals import MATCH_TOTALS, RETIRED_TOTALS
from .connection import MongoBase, _guarded

INDEXES: dict[str, list] = {name: [([(f, ASCENDING) for f in keys], False)] for name, keys in MATCH_TOTALS}
#: Fields that find a group's matches again, in the order an index of matches leads with them.
_GROUP_QUERY = ("chapter", "site", "work", "status", "verdict")


def _day(first_seen: datetime) -> str:
    return first_seen.strftime("%Y-%m-%d")


def _values(m: dict[str, Any]) -> dict[str, Any]:
    return {"work": m["work"], "site": m["site"], "chapter": m["chapter"], "status": m["status"],
            "verdict": m["verdict"], "day": _day(m["first_seen"])}


def _group_id(keys: tuple[str, ...], values: dict[str, Any]) -> str:
    return "\x1f".join(values[k] for k in keys)


class TotalsMongo(MongoBase):
    """Running totals of matches in MongoDB."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        try:
            self._fill_missing_totals()
        except PyMongoError as e:
            raise self._error(e) from e

    def _totals(self, name: str) -> Any:
        return self._db[name]

    def _count_in(self, m: dict[str, Any]) -> None:
        """A match (as stored) joins its groups."""
        values = _values(m)
        for name, keys in MATCH_TOTALS:
            self._totals(name).update_one(
                {"_id": _group_id(keys, values)},
                {"$inc": {"n": 1}, "$min": {"first_seen": m["first_seen"]}, "$max": {"last_seen": m["last_seen"]},
                 "$setOnInsert": {k: values[k] for k in keys}}, upsert=True)

    def _count_out(self, m: dict[str, Any]) -> None:
        """A match (as it was stored) leaves its groups."""
        values = _values(m)
        for name, keys in MATCH_TOTALS:
            totals, gid = self._totals(name), _group_id(keys, values)
            g = totals.find_one_and_update({"_id": gid}, {"$inc": {"n": -1}}, return_document=True)
            if g is None:
                continue
            if g["n"] <= 0:
                totals.delete_one({"_id": gid, "n": {"$lte": 0}})
            elif g["first_seen"] == m["first_seen"] or g["last_seen"] == m["last_seen"]:
                self._read_times_again(name, keys, values)

    def _read_times_again(self, name: str, keys: tuple[str, ...], values: dict[str, Any]) -> None:
        query = {k: values[k] for k in _GROUP_QUERY if k in keys}
        if "day" in keys:
            day = datetime.strptime(values["day"], "%Y-%m-%d")
            query["first_seen"] = {"$gte": day, "$lt": day + timedelta(days=1)}
        first = self._matches.find_one(query, {"first_seen": True}, sort=[("first_seen", ASCENDING)])
        last = self._matches.find_one(query, {"last_seen": True}, sort=[("last_seen", DESCENDING)])
        if first is not None and last is not None:
            self._totals(name).update_one({"_id": _group_id(keys, values)},
                                          {"$set": {"first_seen": first["first_seen"],
                                                    "last_seen": last["last_seen"]}})

    def _count_change(self, before: dict[str, Any] | None, after: dict[str, Any]) -> None:
        """A match written: new (`before` None), moved to other groups, or seen at other times."""
        if before is None:
            self._count_in(after)
        elif _values(before) != _values(after):
            self._count_out(before)
            self._count_in(after)
        elif before["first_seen"] != after["first_seen"] or before["last_seen"] != after["last_seen"]:
            # the same groups: times that only widen theirs (last_seen only moves forward)
            self._count_out(before)
            self._count_in(after)

    def _forget_work_totals(self, work: str) -> None:
        for name, _ in MATCH_TOTALS:
            self._totals(name).delete_many({"work": work})

    @_guarded
    def rebuild_totals(self) -> int:
        """Compute every running total again from the matches; returns the number of groups."""
        made = 0
        for name, keys in MATCH_TOTALS:
            group_id = {k: ({"$dateToString": {"format": "%Y-%m-%d", "date": "$first_seen"}} if k == "day"
                            else f"${k}") for k in keys}
            rows = list(self._matches.aggregate([{"$group": {
                "_id": group_id, "n": {"$sum": 1}, "first_seen": {"$min": "$first_seen"},
                "last_seen": {"$max": "$last_seen"}}}], allowDiskUse=True))
            totals = self._totals(name)
            totals.delete_many({})
            docs = [{"_id": _group_id(keys, r["_id"]), **r["_id"], "n": r["n"], "first_seen": r["first_seen"],
                     "last_seen": r["last_seen"]} for r in rows]
            for i in range(0, len(docs), 1000):
                totals.insert_many(docs[i:i + 1000], ordered=False)
            made += len(docs)
        return made

    def _fill_missing_totals(self) -> None:
        """A store written before the totals (or before one of them): compute them once; totals
        of an earlier version are dropped."""
        names = set(self._db.list_collection_names())
        for name in RETIRED_TOTALS:
            if name in names:
                self._db.drop_collection(name)
        if any(self._totals(name).find_one({}, {"_id": True}) is None for name, _ in MATCH_TOTALS) and (
                self._matches.find_one({}, {"_id": True})):
            self.rebuild_totals()
