"""cells: CSV cells a spreadsheet will not run, and text a terminal will not obey."""
import json

import pytest

from clikit.cells import defuse, json_text, printable


@pytest.mark.parametrize("bad", ["=HYPERLINK(\"http://evil\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx"])
def test_formula_cells_get_a_leading_quote(bad):
    assert defuse(bad) == "'" + bad


@pytest.mark.parametrize("fine", ["plain", "山城旧事", "", " =not first", "x=1", "'quoted"])
def test_other_cells_pass_unchanged(fine):
    assert defuse(fine) == fine


def test_control_characters_are_shown_as_escapes():
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("\x9b31m\x07\x7f") == "\\x9b31m\\x07\\x7f"  # C1 CSI, BEL, DEL
    assert printable("abc\u202edcba\u2066x\u2069") == "abc\\u202edcba\\u2066x\\u2069"
    assert printable("line\nnext\tcol\r") == "line\\nnext\\tcol\\r"
    assert printable("\ud800") == "\\ud800"  # cannot be written at all


def test_printable_text_is_unchanged():
    text = "山城旧事 第一章「雨夜」— ok, 100% (é)"
    assert printable(text) == text


def test_json_text_is_exact_and_has_no_raw_control_character():
    value = {"site": "x\x1b[31m\x9b\u202e\x7f\ud800", "t": "山城"}
    out = json_text(value)
    assert json.loads(out) == value
    assert all(c not in out for c in "\x1b\x9b\u202e\x7f\ud800") and "山城" in out
