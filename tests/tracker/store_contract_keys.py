"""The signing-key part of the store contract (tracker.store.base.KeysStore), for every
backend: one key per organisation, kept as first stored, bytes back as they went in."""
from __future__ import annotations

import pytest

from tracker.store import NotFound
from tracker.store.signing_keys import SigningKey

from .store_contract import T0, at

PEM = b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGj\x00\xff\n-----END ENCRYPTED PRIVATE KEY-----\n"


def signing_key(org: str = "north", public: bytes = bytes(range(32)), **kw) -> SigningKey:
    kw.setdefault("private_key", PEM)
    kw.setdefault("created_at", T0)
    return SigningKey(org=org, public_key=public, **kw)


class KeysContract:
    def test_a_key_is_kept_per_organisation_and_read_back_byte_for_byte(self, store):
        kept = store.add_signing_key(signing_key("north"))
        store.add_signing_key(signing_key("east", bytes(32), private_key=PEM + b"east", created_at=at(1)))
        assert kept == store.signing_key("north") == signing_key("north")
        east = store.signing_key("east")
        assert (east.public_key, east.private_key, east.created_at) == (bytes(32), PEM + b"east", at(1))
        with pytest.raises(NotFound):
            store.signing_key("west")

    def test_the_first_key_stored_stays_so_every_signed_package_stays_checkable(self, store):
        first = store.add_signing_key(signing_key("north"))
        second = store.add_signing_key(signing_key("north", bytes(32), created_at=at(5)))
        assert second == first == store.signing_key("north")
        assert store.signing_key("north").public_key == bytes(range(32))

    def test_a_bad_key_is_refused(self, store):
        with pytest.raises(ValueError):
            store.add_signing_key(signing_key("north", b"short"))
        with pytest.raises(ValueError):
            store.add_signing_key(signing_key("north", private_key=b"-----BEGIN PRIVATE KEY-----\n"))
        with pytest.raises(ValueError):
            store.add_signing_key(signing_key("north", algorithm="rsa"))
        with pytest.raises(NotFound):
            store.signing_key("north")
