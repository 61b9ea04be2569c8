"""scrub: lone surrogates out of outside text, counted; everything else untouched."""
from hypothesis import given
from hypothesis import strategies as st

from pagetext.scrub import scrub, scrub_value


def test_lone_surrogates_become_replacement_characters_and_are_counted():
    assert scrub("山城\ud800旧事\udfff") == ("山城\ufffd旧事\ufffd", 2)
    assert scrub("a\udcff") == ("a\ufffd", 1)  # a byte undecodable under surrogateescape


def test_a_split_pair_is_joined_back_not_replaced():
    assert scrub("\ud83d\ude00!") == ("\U0001F600!", 0)
    assert scrub("\ude00\ud83d") == ("\ufffd\ufffd", 2)  # the wrong order is two lone halves


def test_clean_text_is_returned_as_it_is():
    text = "话说天下大势\ufffd, 𠀋 and \U0001F600"
    out, n = scrub(text)
    assert out is text and n == 0


def test_values_are_scrubbed_all_the_way_down():
    value = {"k\ud800": ["\udc80", 1, {"x": "ok", "y": ("\ud801",)}], "n": None}
    assert scrub_value(value) == ({"k\ufffd": ["\ufffd", 1, {"x": "ok", "y": ("\ufffd",)}], "n": None}, 3)


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)))
def test_the_result_always_encodes(text):
    out, n = scrub(text)
    out.encode("utf-8")  # never raises
    assert (out == text) == (n == 0 and len(out) == len(text))
