"""The evidence part of the store contract (tracker.store.base.EvidenceStore), for every
backend: the files of a page's evidence, their bytes checked on the way out, and their
removal when the page has been gone long enough."""
from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from tracker.store import NotFound, StoreError
from tracker.store.evidence import Evidence

from .store_contract import T0, at, page

WARC = b"\x1f\x8b\x08\x00" + bytes(range(256)) * 8
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 300


def evidence(page_key: str = "https://example.com/book/1.html", data: bytes = WARC, kind: str = "warc",
             **kw) -> Evidence:
    kw.setdefault("url", page_key)
    kw.setdefault("fetched_at", T0)
    return Evidence(page=page_key, kind=kind, data=data, **kw)


class EvidenceContract:
    def test_put_then_list_without_bytes_and_read_the_bytes(self, store):
        stored, new = store.put_evidence(evidence())
        assert new and stored.data == b"" and stored.sha256 == hashlib.sha256(WARC).hexdigest()
        assert stored.size == len(WARC) and stored.fetched_at == T0 and stored.gone_since is None
        shot, _ = store.put_evidence(evidence(data=PNG, kind="screenshot", fetched_at=at(1)))
        listed = store.evidence("https://example.com/book/1.html")
        assert [(e.kind, e.sha256) for e in listed] == [("warc", stored.sha256), ("screenshot", shot.sha256)]
        assert all(e.data == b"" for e in listed)
        assert store.evidence_data("https://example.com/book/1.html", stored.sha256) == WARC
        assert store.evidence_data("https://example.com/book/1.html", shot.sha256) == PNG

    def test_large_files_come_back_whole(self, store):
        data = bytes(range(251)) * 4000  # ~1 MB: several chunks where the backend splits files
        stored, _ = store.put_evidence(evidence(data=data))
        assert store.evidence_data("https://example.com/book/1.html", stored.sha256) == data

    def test_the_same_bytes_twice_are_kept_once(self, store):
        first, new = store.put_evidence(evidence(truncated=True))
        again, new_again = store.put_evidence(evidence(fetched_at=at(5)))
        assert new and not new_again
        assert again.fetched_at == T0 and again.truncated  # the first capture stands
        assert len(store.evidence("https://example.com/book/1.html")) == 1

    def test_pages_with_the_same_bytes_keep_them_apart(self, store):
        a, _ = store.put_evidence(evidence("https://example.com/all.html#chapter-1"))
        store.put_evidence(evidence("https://example.com/all.html#chapter-2"))
        assert store.delete_evidence("https://example.com/all.html#chapter-1") == 1
        assert store.evidence("https://example.com/all.html#chapter-1") == []
        assert store.evidence_data("https://example.com/all.html#chapter-2", a.sha256) == WARC
        with pytest.raises(NotFound):
            store.evidence_data("https://example.com/all.html#chapter-1", a.sha256)

    def test_unknown_evidence_and_bad_records(self, store):
        with pytest.raises(NotFound):
            store.evidence_data("https://example.com/none", "0" * 64)
        with pytest.raises(NotFound):
            store.evidence_data("https://example.com/none", "../../etc/passwd")
        with pytest.raises(ValueError):
            store.put_evidence(evidence(kind="video"))
        with pytest.raises(ValueError):
            store.put_evidence(evidence(data=b""))
        assert store.evidence("https://example.com/none") == []
        assert store.delete_evidence("https://example.com/none") == 0

    def test_a_url_never_becomes_a_path(self, store):
        key = "../../../../tmp/fpt-evidence-escape/x?a=/../..\\..%2f"
        stored, _ = store.put_evidence(evidence(key))
        assert store.evidence_data(key, stored.sha256) == WARC
        assert store.delete_evidence(key) == 1

    def test_evidence_of_a_gone_page_is_marked_then_purged(self, store):
        store.upsert_page(page("https://example.com/stays"))
        store.upsert_page(page("https://example.com/goes"))
        store.put_evidence(evidence("https://example.com/stays"))
        store.put_evidence(evidence("https://example.com/goes", data=PNG, kind="screenshot"))
        store.put_evidence(evidence("https://example.com/never-stored", data=b"other bytes"))
        assert store.delete_page("https://example.com/goes")
        assert store.mark_evidence_gone(at(10)) == 2  # the deleted page and the one never stored
        assert store.mark_evidence_gone(at(20)) == 0  # marked once: the first date stays
        (goes,) = store.evidence("https://example.com/goes")
        assert goes.gone_since == at(10)
        assert store.evidence("https://example.com/stays")[0].gone_since is None
        assert store.purge_evidence(at(9)) == 0
        assert store.purge_evidence(at(10)) == 2
        assert store.evidence("https://example.com/goes") == []
        assert [e.page for e in store.evidence("https://example.com/stays")] == ["https://example.com/stays"]

    def test_a_page_stored_again_is_unmarked(self, store):
        store.put_evidence(evidence("https://example.com/back"))
        assert store.mark_evidence_gone(at(1)) == 1
        store.upsert_page(page("https://example.com/back"))
        store.mark_evidence_gone(at(2))
        assert store.evidence("https://example.com/back")[0].gone_since is None
        assert store.purge_evidence(at(30) + timedelta(days=1)) == 0


class FileEvidenceContract:
    """For backends whose bytes can be changed behind the store's back (files)."""

    def test_a_changed_file_is_refused(self, store, tmp_path):
        stored, _ = store.put_evidence(evidence())
        (path,) = list(tmp_path.rglob("*.warc.gz"))
        path.write_bytes(WARC[:-1] + b"!")
        with pytest.raises(StoreError, match="changed outside fptrack"):
            store.evidence_data("https://example.com/book/1.html", stored.sha256)
        path.unlink()
        with pytest.raises(StoreError, match="missing"):
            store.evidence_data("https://example.com/book/1.html", stored.sha256)
        store.put_evidence(evidence())  # the same capture again puts the lost file back
        assert store.evidence_data("https://example.com/book/1.html", stored.sha256) == WARC
