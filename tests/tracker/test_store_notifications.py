"""The follow-up part of the store contract, run against both backends: SQLite, and
MongoDB through mongomock."""
from __future__ import annotations

import mongomock
import pytest

from tracker.store.mongo import MongoStore
from tracker.store.sqlite import SQLiteStore

from .store_contract_notifications import NotificationsContract


@pytest.fixture(params=["sqlite", "mongo"])
def store(request, tmp_path):
    s = (SQLiteStore(tmp_path / "store.sqlite3") if request.param == "sqlite"
         else MongoStore(client=mongomock.MongoClient(), db="fptrack_test"))
    yield s
    s.close()


class TestFollowUpStore(NotificationsContract):
    pass
