import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fingerprint.postings import Postings


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sets(st.integers(0, 50), max_size=20), min_size=1, max_size=10), st.sets(st.integers(0, 50)))
def test_hits_count_shared_hashes_like_a_scan(doc_sets, query):
    p = Postings()
    for i, s in enumerate(doc_sets):
        p.add(i, np.array(sorted(s), dtype=np.uint64))
    docs, counts = p.hits(np.array(sorted(query), dtype=np.uint64))
    got = dict(zip(docs.tolist(), counts.tolist()))
    want = {i: len(s & query) for i, s in enumerate(doc_sets) if s & query}
    assert got == want
    assert list(counts) == sorted(counts, reverse=True)


def test_max_df_ignores_hashes_many_documents_share():
    p = Postings()
    for i in range(5):
        p.add(i, np.array([1, 100 + i], dtype=np.uint64))
    docs, counts = p.hits(np.array([1, 102], dtype=np.uint64), max_df=3)
    assert docs.tolist() == [2] and counts.tolist() == [1]
    assert p.document_frequency(np.array([1, 102, 7], dtype=np.uint64)).tolist() == [5, 1, 0]


def test_removed_documents_stop_matching():
    p = Postings()
    p.add(0, np.array([5], dtype=np.uint64))
    p.add(1, np.array([5], dtype=np.uint64))
    p.remove(0)
    assert p.hits(np.array([5], dtype=np.uint64))[0].tolist() == [1]


def test_a_document_removed_then_added_again_keeps_its_new_postings():
    p = Postings()
    p.add(0, np.array([1, 2], dtype=np.uint64))
    p.remove(0)
    p.add(0, np.array([2, 3], dtype=np.uint64))
    docs, counts = p.hits(np.array([1, 2, 3], dtype=np.uint64))
    assert docs.tolist() == [0] and counts.tolist() == [2]
