"""ocr.lookalike: shape look-alikes folded to one representative."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fingerprint.errors import InputError
from ocr.lookalike import canonical, fold, parse, table


@pytest.mark.parametrize("group", ["己已巳", "未末", "人入", "土士", "日曰", "戊戌戍", "大太犬", "王玉", "冶治"])
def test_the_groups_the_brief_names_fold_to_one_character(group):
    assert len({canonical(ch) for ch in group}) == 1


def test_a_misread_passage_folds_to_the_same_text_as_the_original():
    original = "他已经走了，未来的事情谁也说不准，大人们都在等他。"
    misread = "他己经走了，末来的事情谁也说不准，太入们都在等他。"
    assert misread != original and fold(misread) == fold(original)


def test_folding_keeps_other_characters_and_the_length():
    text = "天快亮的时候，雨终于停了。ABC 123"
    assert len(fold(text)) == len(text)
    assert fold("雨终于停了") == "雨终" + canonical("于") + "停了"


@given(st.text(alphabet="己已巳未末人入大太犬王玉天地玄黄宇宙洪荒", max_size=50))
def test_folding_is_idempotent_and_representatives_are_their_own(text):
    assert fold(fold(text)) == fold(text)
    assert all(canonical(canonical(ch)) == canonical(ch) for ch in text)


def test_every_representative_is_in_its_own_group_and_no_character_is_in_two():
    mapping = table()
    assert all(mapping[rep] == rep for rep in set(mapping.values()))
    assert len(mapping) >= 60


def test_a_table_with_a_character_in_two_groups_is_refused_with_the_fix():
    with pytest.raises(InputError, match="merge the two groups"):
        parse("己已\tshape\n已巳\tshape\n")
    with pytest.raises(InputError, match="at least two characters"):
        parse("己\tshape\n")
    assert parse("# comment\n\n未末\tmeasured rapidocr 3\n") == {"未": "未", "末": "未"}
