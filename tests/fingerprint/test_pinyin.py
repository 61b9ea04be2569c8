from fingerprint.normalize import normalize
from fingerprint.pinyin import segment_pinyin, syllables_of, to_sounds


def sounds(text):
    return to_sounds(normalize(text)).units.tolist()


def test_homophones_sound_the_same():
    assert syllables_of("同") == syllables_of("童") == ["tong"]
    assert sounds("同学们来了") == sounds("童学们来了")


def test_pinyin_words_in_chinese_text_expand_to_syllables():
    assert sounds("他知道这件事") == sounds("他zhidao这件事")


def test_traditional_script_sounds_like_simplified():
    assert sounds("他們說話") == sounds("他们说话")


def test_english_text_is_not_read_as_pinyin():
    # "change" splits into pinyin syllables, but in an English text it stays a word
    assert len(sounds("we change the plan")) == 4


def test_segment_pinyin_prefers_fewest_syllables_and_rejects_non_pinyin():
    assert segment_pinyin("xian") == ["xian"]
    assert segment_pinyin("zhuangguo") == ["zhuang", "guo"]
    assert segment_pinyin("hello") is None
    assert segment_pinyin("") is None


def test_each_sound_unit_points_back_into_the_raw_text():
    raw = "他zhidao了"
    s = to_sounds(normalize(raw))
    assert [raw[a:b] for a, b in zip(s.start.tolist(), s.end.tolist())] == ["他", "zhidao", "zhidao", "了"]


def test_initials_are_letters_of_the_syllables():
    s = to_sounds(normalize("中国"))
    assert [chr(96 + i) for i in s.initials.tolist()] == ["z", "g"]
