import re

from markupsafe import Markup, escape

from web.review.highlight import excerpt, highlight, merge_spans, segments, side_spans


def test_spans_at_both_edges_mark_the_whole_text_pieces():
    assert highlight("abcdef", [(0, 2), (4, 6)]) == "<mark>ab</mark>cd<mark>ef</mark>"


def test_overlapping_and_touching_spans_merge_into_one_mark():
    assert merge_spans([(3, 6), (1, 4), (6, 8)], 10) == [(1, 8)]
    assert highlight("0123456789", [(3, 6), (1, 4)]) == "0<mark>12345</mark>6789"


def test_out_of_range_spans_are_clamped_and_empty_ones_dropped():
    assert merge_spans([(-5, 2), (8, 99), (5, 5), (7, 3)], 10) == [(0, 2), (8, 10)]
    assert highlight("abc", [(2, 50)]) == "ab<mark>c</mark>"
    assert highlight("abc", [(10, 20)]) == "abc"
    assert highlight("", [(0, 3)]) == ""


def test_segments_join_back_to_the_text():
    text = "甲乙丙丁戊己庚"
    segs = segments(text, [(1, 3), (5, 6)])
    assert "".join(p for p, _ in segs) == text
    assert segs == [("甲", False), ("乙丙", True), ("丁戊", False), ("己", True), ("庚", False)]


def test_every_segment_is_escaped_inside_and_outside_marks():
    text = '<script>alert(1)</script>"><img src=x onerror=alert(1)>'
    html = highlight(text, [(0, 8), (30, 40)])
    assert isinstance(html, Markup)
    assert "<script>" not in html and "<img" not in html
    assert html.startswith("<mark>&lt;script&gt;</mark>")
    assert html.count("<mark>") == 2
    bare = re.sub("</?mark>", "", html)
    assert "<" not in bare and '"' not in bare and ">" not in bare
    assert bare == str(escape(text))


def test_side_spans_and_excerpt():
    spans = [{"page_start": 1, "page_end": 4, "original_start": 10, "original_end": 13}]
    assert side_spans(spans, "page") == [(1, 4)]
    assert side_spans(spans, "original") == [(10, 13)]
    assert excerpt("a\n b   c", 0, 8) == "a b c"
    assert excerpt("x" * 50, 0, 50, limit=10) == "x" * 9 + "…"
    assert excerpt("abc", -3, 99) == "abc"
