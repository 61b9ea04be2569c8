from __future__ import annotations

import pytest

from fingerprint.chapters import Chapter, chinese_numeral, parse_number, roman_numeral, split_chapters
from fingerprint.errors import InputError, ParameterError

BODY = "话说那人走进门来，说道：“今日天气甚好。”众人都笑了。" * 8  # about 200 characters


@pytest.mark.parametrize(
    "s, n",
    [
        ("一", 1), ("十", 10), ("十五", 15), ("二十", 20), ("二十三", 23), ("一百", 100),
        ("一百二十", 120), ("一百零八", 108), ("一百八", 108), ("一百十六", 116), ("一零一", 101),
        ("一二零", 120), ("〇", 0), ("两", 2), ("两百", 200), ("一千零一", 1001), ("三万", 30000),
        ("二十 三", 23), ("12", 12), ("１２", 12), ("貳拾", 20), ("十一万", 110000),
    ],
)
def test_chinese_numeral(s, n):
    assert chinese_numeral(s) == n


@pytest.mark.parametrize("bad", ["", "  ", "第一", "abc", "一x"])
def test_chinese_numeral_rejects_garbage(bad):
    with pytest.raises(InputError):
        chinese_numeral(bad)


def test_roman_and_parse_number():
    assert roman_numeral("IV") == 4
    assert roman_numeral("lxi") == 61
    assert parse_number("XIV") == 14
    assert parse_number("42") == 42
    assert parse_number("四十二") == 42
    with pytest.raises(InputError):
        roman_numeral("IIZ")


def _novel(headings: list[str], toc: bool = False, pre: str = "") -> str:
    parts = [pre] if pre else []
    if toc:
        parts += ["目录", *headings, ""]
    for i, h in enumerate(headings):
        parts += [h, "", f"{BODY}（第{i + 1}段）", ""]
    return "\n".join(parts)


def test_basic_split_offsets_and_bodies():
    text = _novel(["第一回 甲乙", "第二回 丙丁", "第三回 戊己"])
    chs = split_chapters(text)
    assert [c.number for c in chs] == [1, 2, 3]
    assert [c.title for c in chs] == ["甲乙", "丙丁", "戊己"]
    # Chapters tile the text and their text is the slice they claim.
    assert chs[0].start == 0 and chs[-1].end == len(text)
    for a, b in zip(chs, chs[1:]):
        assert a.end == b.start
    for c in chs:
        assert c.text == text[c.start : c.end]
        assert c.text.startswith(c.heading)
        assert c.body.strip().startswith("话说")
    assert "（第2段）" in chs[1].body and "（第2段）" not in chs[0].body


@pytest.mark.parametrize(
    "fmt",
    [
        "第{z}章 标题", "第{z}回　标题", "第{z}节", "第{d}章 标题", "正文 第{z}回 标题", "上卷 第{z}回 标题",
        "《》目录 第{z}回　标题", "　　第{z}回　标题", "第　{z}　回　标题", "Chapter {d}", "CHAPTER {r}.",
        "第{z}回：标题",
    ],
)
def test_heading_formats(fmt):
    zh = ["一", "二", "三", "十一", "一百零一"]
    nums = [1, 2, 3, 11, 101]
    roman = ["I", "II", "III", "XI", "CI"]
    heads = [fmt.format(z=z, d=d, r=r) for z, d, r in zip(zh, nums, roman)]
    chs = split_chapters(_novel(heads))
    assert [c.number for c in chs] == nums


def test_table_of_contents_is_skipped():
    heads = [f"第{z}回 标题{z}" for z in ["一", "二", "三", "四"]]
    text = _novel(heads, toc=True, pre="某某传\n作者：某人")
    chs = split_chapters(text)
    assert [c.number for c in chs] == [1, 2, 3, 4]
    # The chapter is the body occurrence, not the table-of-contents line.
    assert chs[0].start == text.index("第一回", text.index("第四回"))
    assert all(len(c.body) > 150 for c in chs)


def test_toc_entry_followed_by_a_preface_is_not_a_chapter():
    heads = ["第一回 甲", "第二回 乙", "第三回 丙"]
    preface = "前言\n" + "这是一篇很长的前言，介绍作者生平与成书经过。" * 20
    text = "\n".join(["目录", *heads, preface] + [x for h in heads for x in (h, BODY)])
    chs = split_chapters(text)
    assert [c.number for c in chs] == [None, 1, 2, 3]
    assert "前言" in chs[0].text and chs[1].start == text.index("第一回", text.index(preface))


def test_body_lines_starting_with_di_are_not_headings():
    text = _novel(["第一回 甲乙", "第二回 丙丁"])
    text = text.replace("（第1段）", "（第1段）\n第二日，他又来了，说第三回再来。\n    第四回中既将此事表明，此处不赘。\n")
    chs = split_chapters(text)
    assert [c.number for c in chs] == [1, 2]


def test_repeated_title_line_inside_chapter_is_ignored():
    text = _novel(["第一回 甲乙", "第二回 丙丁"])
    text = text.replace("（第1段）", "（第1段）\n第一回 甲乙\n" + BODY)
    chs = split_chapters(text)
    assert [c.number for c in chs] == [1, 2]
    assert chs[0].body.count("（第1段）") == 1 and len(chs[0].body) > 2 * len(BODY)


def test_heading_run_together_with_first_paragraph():
    line = "　　第三十二回　晏蛾兒逾牆殉節　群公子大鬧朝堂話說齊桓公背了管仲遺言，復用豎刁、雍巫、開方三人，鮑叔牙諫諍不從"
    text = "第三十一回 甲\n" + BODY + "\n" + line + "\n" + BODY
    chs = split_chapters(text)
    assert [c.number for c in chs] == [31, 32]
    assert chs[1].title == "晏蛾兒逾牆殉節 群公子大鬧朝堂"
    assert chs[1].body.startswith("話說齊桓公")


def test_volume_lines_before_chapters_are_not_chapters():
    text = "\n".join(["第一卷 风起", "第一章 开端", BODY, "第二章 继续", BODY, "第二卷 云涌", "第三章 转折", BODY])
    chs = split_chapters(text)
    assert [c.number for c in chs] == [1, 2, 3]
    # A story collection numbered by 卷 only keeps its 卷 headings.
    coll = "\n".join(["第一卷　甲", BODY, "第二卷　乙", BODY])
    assert [c.number for c in split_chapters(coll)] == [1, 2]


def test_preamble_kept_only_when_long():
    short = _novel(["第一回 甲", "第二回 乙"], pre="某某传\n作者：某人")
    assert split_chapters(short)[0].number == 1
    long_pre = "楔子\n" + BODY * 2
    chs = split_chapters(_novel(["第一回 甲", "第二回 乙"], pre=long_pre))
    assert chs[0].number is None and chs[0].start == 0 and chs[0].text.startswith("楔子")
    assert [c.number for c in chs[1:]] == [1, 2]


def test_text_without_headings_and_empty_text():
    assert split_chapters("") == []
    assert split_chapters("  \n ") == []
    for text in ["只是一段没有标题的文字。", "目录\n第一章 甲\n第二章 乙\n"]:
        chs = split_chapters(text)
        assert len(chs) == 1 and chs[0].number is None and chs[0].text == text


def test_bad_input_is_a_clear_error():
    with pytest.raises(InputError, match="decode"):
        split_chapters(b"\xe7\xac\xac")  # type: ignore[arg-type]
    with pytest.raises(ParameterError):
        split_chapters("x", min_body=-1)


def test_chapter_body_property():
    c = Chapter(1, "t", 10, 20, "第一回 t\nabcd", body_start=16)
    assert c.body == "abcd"
    assert Chapter(None, "", 0, 3, "abc").body == "abc"


# ------------------------------------------------------------------ the shared corpus

CORPUS_COUNTS = {
    "zh_novels/hongloumeng.txt": (120, False),
    "zh_novels/xiyouji.txt": (100, False),
    "zh_novels/sanguoyanyi.txt": (120, False),
    "zh_novels/shuihuzhuan.txt": (120, True),  # 楔子 is the preamble
    "zh_novels/laocanyouji.txt": (20, False),  # table of contents first
    "zh_novels/rulinwaishi.txt": (55, False),
    "zh_novels/jigongquanzhuan.txt": (240, False),
    "zh_novels/dongzhoulieguozhi.txt": (108, True),  # 簡介 + 序
    "zh_novels/guanchangxianxingji.txt": (60, False),  # spaced table of contents
    "zh_novels/jingshitongyan.txt": (40, True),  # 卷 headings, 序 first
    "zh_novels_alt/xiyouji_xstt5_edition.txt": (100, False),
    "zh_novels_alt/sanguoyanyi_webstore_edition.txt": (120, False),
    "zh_novels_alt/rulinwaishi_webstore_edition.txt": (56, True),  # 前言
}


@pytest.mark.corpus
@pytest.mark.parametrize("rel", sorted(CORPUS_COUNTS))
def test_corpus_chapter_counts(corpus, rel):
    count, has_preamble = CORPUS_COUNTS[rel]
    text = (corpus / rel).read_text(encoding="utf-8")
    chs = split_chapters(text)
    numbered = [c for c in chs if c.number is not None]
    assert [c.number for c in numbered] == list(range(1, count + 1))
    assert (chs[0].number is None) == has_preamble
    # Real chapters, not table-of-contents lines: every body has substance.
    assert min(len(c.body) for c in numbered) > 900
    assert chs[-1].end == len(text)


@pytest.mark.corpus
def test_corpus_laocanyouji_first_chapter_is_the_body_one(corpus):
    text = (corpus / "zh_novels/laocanyouji.txt").read_text(encoding="utf-8")
    first = split_chapters(text)[0]
    assert first.number == 1
    assert text.count("第一回") >= 2 and first.start > text.index("第二十回")
