import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fingerprint.errors import InputError, ParameterError
from fingerprint.features import (
    TfIdf,
    char_ngrams,
    english_words,
    feature_words,
    load_stopwords,
    load_synonyms,
    term_frequencies,
    top_keywords,
    words,
)
from fingerprint.normalize import normalize


def test_words_segments_chinese_and_keeps_latin_words():
    assert words("我爱北京天安门") == ["我", "爱", "北京", "天安门"]
    assert words("他說：ＯＫ 2024年") == ["他", "说", "ok", "2024", "年"]  # normalised first
    assert words(normalize("我爱北京")) == ["我", "爱", "北京"]
    assert words("") == []


def test_char_ngrams_stay_inside_cjk_runs():
    assert char_ngrams("天地玄黄", 2) == ["天地", "地玄", "玄黄"]
    assert char_ngrams("天地 abc 玄", 2) == ["天地", "玄"]  # a word breaks the run; short runs give themselves
    assert char_ngrams("天地玄黄", 1) == list("天地玄黄")
    with pytest.raises(ParameterError):
        char_ngrams("天地", 0)


def test_english_words():
    assert english_words("The Great Gatsby, 1925 -- F. Scott") == ["the", "great", "gatsby", "f", "scott"]
    assert english_words(normalize("Ｈｅｌｌｏ world 42")) == ["hello", "world"]
    with pytest.raises(InputError):
        english_words(42)


def test_builtin_stopwords_and_files(tmp_path):
    zh = load_stopwords()
    assert {"的", "了", "是", "之", "乎"} <= zh and "北京" not in zh
    f = tmp_path / "stop.txt"
    f.write_text("# comment\nThe\n  and \n\n", encoding="utf-8")
    both = load_stopwords("zh", f)
    assert {"the", "and", "的"} <= both and "# comment" not in both
    assert feature_words("我们在北京的天安门看升旗") == ["北京", "天安门", "看", "升旗"]
    assert feature_words("我们在北京", stopwords=()) == ["我们", "在", "北京"]
    assert feature_words("我们在北京的天安门看升旗", min_len=2) == ["北京", "天安门", "升旗"]


def test_stopword_errors_name_the_fix(tmp_path):
    with pytest.raises(InputError, match="built-in"):
        load_stopwords("french")
    with pytest.raises(InputError, match="not found"):
        load_stopwords(str(tmp_path / "missing.txt"))
    bad = tmp_path / "gbk.txt"
    bad.write_bytes("停用词".encode("gbk"))
    with pytest.raises(InputError, match="re-save it as UTF-8"):
        load_stopwords(bad)


def test_english_list_from_corpus(corpus):
    en = load_stopwords(corpus / "stopwords" / "stopwords-iso-en.txt")
    assert {"the", "and", "of"} <= en
    text = "It was the best of times, it was the worst of times"
    assert [w for w in english_words(text) if w not in en] == ["times", "worst", "times"]  # "best" is listed


def test_synonym_file(tmp_path):
    f = tmp_path / "syn.txt"
    f.write_text("华联商厦\t北京华联\n# note\n首都, 北京\n\n", encoding="utf-8")
    syn = load_synonyms(f)
    assert syn == {"华联商厦": "北京华联", "首都": "北京"}
    assert words("华联商厦在首都", synonyms=syn) == words("北京华联在北京")
    f.write_text("一 二 三\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1 has 3 columns"):
        load_synonyms(f)


def test_tf_and_tfidf():
    assert term_frequencies(["a", "b", "a"]) == {"a": 2, "b": 1}
    assert term_frequencies(["a", "b", "a", "a"], relative=True) == {"a": 0.75, "b": 0.25}
    m = TfIdf().fit([["孙悟空", "唐僧"], ["孙悟空", "白骨精"], ["孙悟空"]])
    assert m.idf("孙悟空") == pytest.approx(1.0)  # in every document
    assert m.idf("唐僧") == pytest.approx(math.log(4 / 2) + 1)
    assert m.idf("没见过") == pytest.approx(math.log(4 / 1) + 1)
    w = m.weights(["孙悟空", "唐僧"])
    assert w["唐僧"] > w["孙悟空"]
    assert m.top_keywords(["孙悟空", "唐僧"], 1) == ["唐僧"]
    assert m.top_keywords(["孙悟空", "孙悟空", "孙悟空", "唐僧"], 1) == ["孙悟空"]  # TF outweighs IDF here
    assert TfIdf.from_dict(m.to_dict()).weights(["唐僧"]) == m.weights(["唐僧"])
    with pytest.raises(ParameterError, match="lists of terms"):
        TfIdf().fit(["a whole text"])
    with pytest.raises(InputError):
        TfIdf.from_dict({"df": {}})


@given(st.dictionaries(st.text(min_size=1, max_size=3), st.integers(0, 5), max_size=20), st.integers(1, 10))
def test_top_keywords_heaviest_first_ties_by_term(weights, n):
    top = top_keywords(weights, n)
    assert len(top) == min(n, len(weights))
    keyed = [(-weights[w], w) for w in top]
    assert keyed == sorted(keyed)
    rest = set(weights) - set(top)
    assert all((-weights[r], r) > keyed[-1] for r in rest)
