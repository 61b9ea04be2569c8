"""Matches in words: the kind of copy and the sentence people read in the admin, the report and the notice."""
from hypothesis import given, strategies as st

from fingerprint.engine import VERDICTS
from tracker.wording import SCORE_HELP, copied_chars, copy_kind, copy_sentence, copy_summary, score_lines, share


def span(o_start: int, o_end: int) -> dict[str, int]:
    return {"page_start": o_start + 10, "page_end": o_end + 10, "original_start": o_start, "original_end": o_end}


def test_the_sentence_says_how_much_of_the_chapter_in_how_many_passages_and_how_much_of_the_page():
    assert copy_sentence(0.97, 1.0, [span(0, 4760)]) == (
        "97% of the chapter appears on this page, in 1 passage of 4,760 characters; the page is 100% this chapter.")
    assert copy_sentence(0.15, 0.08, [span(0, 300), span(900, 1200), span(5000, 5001)]) == (
        "15% of the chapter appears on this page, in 3 passages of 601 characters in all; the page is 8% this chapter.")
    assert copy_sentence(0.5, 0.5) == "50% of the chapter appears on this page; the page is 50% this chapter."
    assert copy_sentence(0.5, 0.25, place="text") == (
        "50% of the chapter appears in this text; the text is 25% this chapter.")


def test_overlapping_passages_count_their_characters_once():
    assert copied_chars([span(0, 100), span(50, 150), span(140, 145), span(200, 210)]) == 160
    assert copied_chars([]) == 0


@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 400)), max_size=30))
def test_copied_characters_are_the_union_of_the_passages(pairs):
    spans = [span(a, a + n) for a, n in pairs]
    assert copied_chars(spans) == len({i for a, n in pairs for i in range(a, a + n)})


def test_shares_never_round_to_all_or_nothing():
    assert share(1.0) == "100%" and share(0.9995) == "99%" and share(0.004) == "under 1%" and share(0.0) == "0%"
    assert share(0.154) == "15%"


def test_kinds_use_the_three_names_for_every_stored_verdict():
    kinds = {v: copy_kind(v) for v in VERDICTS if v != "different"}
    assert kinds == {"duplicate": "full copy", "contains": "full copy", "part": "part", "excerpt": "excerpt"}
    assert copy_summary("contains", 1.0, 0.4).startswith("Full copy: 100% of the chapter appears on this page")
    assert copy_summary("excerpt", 0.15, 0.2).startswith("Excerpt: 15% of the chapter")


def test_score_lines_explain_each_score_and_keep_unknown_ones():
    lines = score_lines({"winnow": 0.9, "zeta": 1.0, "longest_run": 4070, "simhash_distance": 2})
    assert [line["name"] for line in lines] == ["longest_run", "simhash_distance", "winnow", "zeta"]
    assert all(line["help"] for line in lines[:3]) and lines[3]["help"] == ""
    assert lines[0]["value"] == 4070
    assert set(SCORE_HELP) >= {"candidate_channels", "minhash_containment", "winnow_page", "pinyin", "simhash"}
