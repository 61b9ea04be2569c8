"""Choose the store: MongoDB when a URL is configured, else the embedded SQLite file,
so that fptrack works out of the box with no server and scales out with one."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .base import Store
from .records import StoreError

if TYPE_CHECKING:
    from ..settings import Settings

SQLITE_NAME = "fptrack.sqlite3"


def open_store(settings: Settings) -> Store:
    """The store the settings name: MongoDB at FPT_MONGO_URL (database FPT_MONGO_DB), else the
    embedded SQLite file in FPT_HOME. Every program opens its store through this."""
    return store_at(settings.mongo_url or None, settings.home, db=settings.mongo_db)


def store_at(mongo_url: str | None, home: Path, *, db: str = "fptrack") -> Store:
    """A MongoStore for `mongo_url` (database `db`), or, when it is None or empty, a
    SQLiteStore at home / "fptrack.sqlite3" (the folder is created)."""
    if mongo_url:
        from .mongo import MongoStore

        return MongoStore(mongo_url, db)
    from .sqlite import SQLiteStore

    home = Path(home).expanduser()
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the store folder {home}: {e}; set FPT_HOME to a writable folder") from e
    return SQLiteStore(home / SQLITE_NAME)
