"""Matches in words: the kind of copy and the sentence people read in the admin, the report and the notice."""
from hypothesis import given
from hypothesis import strategies as st

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


TRANSLATED = {"translation": 0.92, "translation_page": 0.97, "aligned_sentences": 212, "chapter_sentences": 230,
              "page_sentences_aligned": 240, "page_sentences": 250, "anchor_pairs": 90, "alignment_score": 6.1}


def test_a_translation_is_told_in_aligned_sentences_with_its_language_in_words():
    from tracker.wording import is_translation

    assert is_translation(TRANSLATED) and not is_translation({"winnow": 0.9}) and not is_translation(None)
    assert copy_summary("duplicate", 0.92, 0.97, scores=TRANSLATED, language="en") == (
        "Full copy: English translation of this chapter, 212 of 230 sentences aligned (92% of the chapter); "
        "the page is 97% this chapter.")
    assert copy_summary("part", 0.5, 0.4, [span(0, 10)], "text", scores=TRANSLATED, language="zh") == (
        "Part: Chinese translation of this chapter, 212 of 230 sentences aligned (50% of the chapter); "
        "the text is 40% this chapter.")
    # a page whose language cannot be told is still a translation, never a code
    assert copy_sentence(0.3, 0.3, scores=TRANSLATED).startswith("Translation of this chapter, 212 of 230")
    # a same-language copy's scores keep the passage sentence
    assert copy_sentence(0.5, 0.5, scores={"winnow": 0.5}) == (
        "50% of the chapter appears on this page; the page is 50% this chapter.")


def test_the_notice_sentence_names_the_chapter_the_work_and_the_article_agrees():
    from tracker.wording import notice_translation

    assert notice_translation(TRANSLATED, 0.92, 0.97, "en", "第3章", "山城旧事") == (
        "the page is an English translation of 第3章 (《山城旧事》): 212 of 230 sentences aligned "
        "(92% of the chapter); 97% of the page is this chapter.")
    assert notice_translation(TRANSLATED, 0.92, 0.97, "zh", "Chapter 3", "Hills").startswith(
        "the page is a Chinese translation of Chapter 3 (《Hills》)")


def test_the_line_under_a_cut_table_counts_what_is_left_out():
    from tracker.wording import more_pairs

    assert more_pairs(200, 512) == ("The first 200 of 512 aligned pairs are shown; the other 312 are in the "
                                    "evidence report of the downloadable evidence package.")
    assert "the other 1 is in" in more_pairs(200, 201)


def test_the_page_language_is_the_pages_own_or_the_other_of_the_chapters():
    from bench.translation_corpus import pairs
    from tracker.wording import page_language

    pair = pairs("liaozhai")[0]
    assert page_language(pair.en_text) == "en" and page_language(pair.zh_text) == "zh"
    assert page_language("", pair.zh_text) == "en" and page_language(None, pair.en_text) == "zh"
    assert page_language("", None) == ""


def test_every_score_of_a_translated_match_has_a_line_of_help():
    from bench.translation_corpus import pairs
    from fingerprint.engine import judge, prepare

    pair = pairs("liaozhai")[0]
    m = judge(prepare("page", pair.en_text), prepare("chapter", pair.zh_text)).match
    assert "chapter_sentences" in m.scores
    assert set(m.scores) <= set(SCORE_HELP), set(m.scores) - set(SCORE_HELP)
