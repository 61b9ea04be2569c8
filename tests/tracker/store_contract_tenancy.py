"""The tenancy part of the store contract (tracker.store.base.TenancyStore), for every
backend: organisations, owners with the default for what has none, and API tokens."""
from __future__ import annotations

import pytest

from tracker.store import NotFound
from tracker.store.tenancy import DEFAULT_ORG, ApiToken, Organisation

from .store_contract import T0, at


def token(token_id: str = "t1", **kw) -> ApiToken:
    kw.setdefault("hash", "h-" + token_id)
    kw.setdefault("org", "north")
    kw.setdefault("scope", "read")
    kw.setdefault("created_at", T0)
    return ApiToken(id=token_id, **kw)


class TenancyContract:
    def test_organisations_are_added_once_and_listed_by_name(self, store):
        first = store.upsert_org(Organisation("north", created_at=T0))
        again = store.upsert_org(Organisation("north", created_at=at(5)))
        store.upsert_org(Organisation("east", created_at=at(1)))
        assert first == again == store.get_org("north") and again.created_at == T0
        assert [o.name for o in store.orgs()] == ["east", "north"]
        with pytest.raises(NotFound):
            store.get_org("west")
        with pytest.raises(ValueError):
            store.upsert_org(Organisation("two words"))

    def test_what_has_no_owner_belongs_to_the_default_organisation(self, store):
        assert store.owner("work", "山城旧事") == DEFAULT_ORG
        store.set_owner("work", "山城旧事", "north")
        store.set_owner("site", "biquge", "north")
        store.set_owner("work", "山城旧事", "east")  # moved, not duplicated
        assert store.owner("work", "山城旧事") == "east"
        assert store.owners("work") == {"山城旧事": "east"}
        assert store.owners("site") == {"biquge": "north"}
        assert store.owners("user") == {}
        with pytest.raises(ValueError):
            store.set_owner("page", "x", "north")

    def test_tokens_are_found_by_hash_listed_touched_and_revoked(self, store):
        a = store.add_token(token("t1", name="ci"))
        b = store.add_token(token("t2", org="east", scope="write", created_at=at(1)))
        assert store.token_by_hash("h-t1") == a and a.last_used is None and a.name == "ci"
        assert [t.id for t in store.tokens()] == ["t1", "t2"]
        assert store.tokens("east") == [b]
        store.touch_token("t1", at(3))
        assert store.token_by_hash("h-t1").last_used == at(3)
        store.delete_token("t1")
        with pytest.raises(NotFound):
            store.token_by_hash("h-t1")
        with pytest.raises(NotFound):
            store.delete_token("t1")
        store.touch_token("t1", at(4))  # a revoked token is not made again
        assert [t.id for t in store.tokens()] == ["t2"]
        with pytest.raises(ValueError):
            store.add_token(token("t3", scope="admin"))
