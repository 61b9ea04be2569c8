"""The BUAA course mode library: tokens, pages, features, the 0/1 table, fingerprints, report."""
from __future__ import annotations

import doctest
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fingerprint.errors import FingerprintError, InputError, ParameterError
from simtool import buaa, buaa_files, buaa_simhash

# ----------------------------------------------------------------------------- a hand-made course folder
#
# article.txt has two pages; their ids "A-1", "A-2" hold the letter a, which
# must NOT be counted (the id line is not text).
#   page A-1: "Apple apple banana."               -> apple 2, banana 1
#   page A-2: "banana cherry, the CHERRY cherry"  -> banana 1, cherry 3, the 1
# Totals without the stopword "the": cherry 3, apple 2, banana 2.
# N=2: cherry, then the apple/banana tie goes to apple (dictionary order).
# (Were the ids counted, "a" would also have 2 and beat apple.)
#
# hashvalue.txt rows "1010", "0111", "1111"; N=2, M=3 uses "101" and "011":
#   cherry: + - +        apple: - + +
# A-1 (cherry 0, apple 2): ( 0-2,  0+2, 0+2) = (-2,  2, 2) -> 011
# A-2 (cherry 3, apple 0): ( 3-0, -3+0, 3+0) = ( 3, -3, 3) -> 101
# Sample-1 "cherry apple"             (1, 1): ( 0,  0, 2) -> 001  (a zero sum gives 0)
#   distances: A-1 1, A-2 1
# Sample-2 "apple apple apple cherry" (1, 3): (-2,  2, 4) -> 011
#   distances: A-1 0, A-2 2
# Sample-3 "banana Banana"            (0, 0): all sums 0  -> 000
#   distances: A-1 2, A-2 2
TINY = {
    "stopwords.txt": "the\n",
    "hashvalue.txt": "1010\n0111\n1111\n",
    "article.txt": "A-1\nApple apple banana.\n\fA-2\nbanana cherry, the CHERRY cherry\n",
    "sample.txt": "\nSample-1\ncherry apple\n\fSample-2\napple apple apple cherry\n\fSample-3\nbanana Banana\n\f",
}
TINY_RESULT = "Sample-1\n1:A-1 A-2 \nSample-2\n0:A-1 \n2:A-2 \nSample-3\n2:A-1 A-2 \n"


def write_course(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (directory / name).write_bytes(text.encode())
    return directory


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write_course(tmp_path, TINY)


def test_tiny_course_matches_the_hand_computed_fingerprints(tiny: Path) -> None:
    r = buaa.run_course(tiny, 2, 3)
    fps = r.fingerprints
    assert fps.features == ["cherry", "apple"]
    assert fps.article_bits.astype(int).tolist() == [[0, 1, 1], [1, 0, 1]]
    assert fps.sample_bits.astype(int).tolist() == [[0, 0, 1], [0, 1, 1], [0, 0, 0]]
    assert r.text == TINY_RESULT
    assert r.first_block == "Sample-1\n1:A-1 A-2 \n"
    assert r.blocks[1] == "Sample-2\n0:A-1 \n2:A-2 \n"


def test_samples_do_not_influence_the_feature_choice(tiny: Path) -> None:
    (tiny / "sample.txt").write_text("Sample-1\nzebra zebra zebra zebra zebra\n")
    fps = buaa.run_course(tiny, 2, 3).fingerprints
    assert fps.features == ["cherry", "apple"]
    assert fps.sample_bits.astype(int).tolist() == [[0, 0, 0]]


def test_fewer_distinct_words_than_n_uses_the_first_table_rows(tiny: Path) -> None:
    (tiny / "hashvalue.txt").write_text("1010\n0111\n1111\n0000\n")
    fps = buaa.run_course(tiny, 4, 3).fingerprints
    # only cherry, apple, banana exist: banana (row 3, "111") joins the sums
    assert fps.features == ["cherry", "apple", "banana"]
    # (-2, 2, 2) + banana 1 * (1, 1, 1) = (-1, 3, 3) -> 011
    assert fps.article_bits[0].astype(int).tolist() == [0, 1, 1]


# ----------------------------------------------------------------------------- tokens


def test_tokenize_words_splits_on_non_letters_and_lowercases() -> None:
    assert buaa.tokenize_words("Don't PANIC: 42 towels, e-mail x2y") == ["don", "t", "panic", "towels", "e", "mail", "x", "y"]
    assert buaa.tokenize_words("") == []
    assert buaa.tokenize_words("1-1\n\f 42 !") == []


def test_tokenize_words_treats_non_ascii_letters_as_separators() -> None:
    # Kelvin sign and dotted capital I lower-case to ASCII letters; they must still separate words.
    assert buaa.tokenize_words("\u212aelvin İstanbul café naïve 中文abc") == ["elvin", "stanbul", "caf", "na", "ve", "abc"]
    assert buaa.tokenize_words("ab\udc80cd") == ["ab", "cd"]  # an escaped undecodable byte


@given(st.text())
def test_tokenize_words_equals_the_regular_expression_definition(text: str) -> None:
    assert buaa.tokenize_words(text) == [w.lower() for w in re.findall(r"[A-Za-z]+", text)]


# ----------------------------------------------------------------------------- pages


def test_split_pages_handles_the_course_sample_shape() -> None:
    # leading empty line, trailing form feed (an empty last page to be dropped), CRLF id line
    text = "\nSample-1\n1-1\nbody one\n\f\r\n  \nSample-2\r\nbody two\n\f"
    assert buaa.split_pages(text) == [
        buaa.Page("Sample-1", "1-1\nbody one\n"),
        buaa.Page("Sample-2", "body two\n"),
    ]


def test_split_pages_drops_blank_pages_and_keeps_id_only_pages() -> None:
    assert buaa.split_pages("") == []
    assert buaa.split_pages("\f\n \n\f\f") == []
    assert buaa.split_pages("1-7") == [buaa.Page("1-7", "")]
    assert buaa.split_pages("1-7\n") == [buaa.Page("1-7", "")]


_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9-]{0,8}", fullmatch=True)
_bodies = st.text(alphabet=st.characters(blacklist_characters="\f"), max_size=40)


@given(st.lists(st.tuples(_ids, _bodies), max_size=6), st.sampled_from(["", "\n", "\n\n"]))
def test_split_pages_round_trips_joined_pages(pages: list[tuple[str, str]], lead: str) -> None:
    text = "\f".join(lead + pid + "\n" + body for pid, body in pages) + "\f"
    assert buaa.split_pages(text) == [buaa.Page(pid, body) for pid, body in pages]


def test_parse_stopwords_reads_any_white_space_and_lowercases() -> None:
    assert buaa.parse_stopwords("a\r\nAbout  the\n\n") == {"a", "about", "the"}


# ----------------------------------------------------------------------------- features


def test_select_features_breaks_frequency_ties_in_dictionary_order() -> None:
    pages = [["pear", "fig", "apple", "fig"], ["pear", "apple", "kiwi", "the", "the", "the"]]
    # fig 2, pear 2, apple 2, kiwi 1; "the" 3 is a stopword
    assert buaa.select_features(pages, 3, {"the"}) == ["apple", "fig", "pear"]
    assert buaa.select_features(pages, 2, {"the"}) == ["apple", "fig"]
    assert buaa.select_features(pages, 10, {"the"}) == ["apple", "fig", "pear", "kiwi"]
    assert buaa.select_features(pages, 1) == ["the"]


def test_select_features_orders_like_strcmp_not_by_length() -> None:
    # "ab" < "b" in dictionary (byte) order even though it is longer
    assert buaa.select_features([["b", "ab", "abc", "a"]], 4) == ["a", "ab", "abc", "b"]


def test_select_features_rejects_n_below_one() -> None:
    with pytest.raises(ParameterError, match="at least 1"):
        buaa.select_features([["a"]], 0)


_words = st.lists(st.sampled_from(["a", "ab", "b", "ba", "c", "cat", "dog", "the", "zz"]), max_size=30)


@given(st.lists(_words, max_size=5), st.integers(1, 12), st.sets(st.sampled_from(["the", "a", "zz"])))
def test_select_features_matches_a_plain_sort(pages: list[list[str]], n: int, stop: set[str]) -> None:
    counts = Counter(w for p in pages for w in p if w not in stop)
    expected = sorted(counts, key=lambda w: (-counts[w], w))[:n]
    assert buaa.select_features(pages, n, stop) == expected


@given(st.lists(_words, max_size=5), st.lists(st.sampled_from(["a", "b", "cat", "dog", "zz"]), unique=True, max_size=5))
def test_count_matrix_matches_counter(pages: list[list[str]], features: list[str]) -> None:
    m = buaa.count_matrix(pages, features)
    assert m.shape == (len(pages), len(features))
    assert m.tolist() == [[Counter(p)[f] for f in features] for p in pages]


def test_count_matrix_rejects_repeated_features() -> None:
    with pytest.raises(ParameterError, match="repeats a word"):
        buaa.count_matrix([["a"]], ["a", "a"])


# ----------------------------------------------------------------------------- sign convention


def test_simhash_bits_sign_convention_by_hand() -> None:
    # weights (3, 1); rows "101" and "001" -> +3 -3 +3 and -1 -1 +1 -> sums 2 -4 4 -> 1 0 1
    table = buaa.parse_hash_table("101\n001\n")
    assert buaa.simhash_bits(np.array([[3, 1]]), table).astype(int).tolist() == [[1, 0, 1]]
    # weights (1, 1): sums 0 -2 2; a sum of exactly zero gives 0
    assert buaa.simhash_bits(np.array([[1, 1]]), table).astype(int).tolist() == [[0, 0, 1]]
    # a page with no feature words is all zeros
    assert not buaa.simhash_bits(np.zeros((1, 2), int), table).any()


_tables = st.integers(1, 6).flatmap(
    lambda k: st.tuples(
        st.lists(st.lists(st.integers(0, 5), min_size=k, max_size=k), min_size=1, max_size=4),
        st.lists(st.lists(st.sampled_from([-1, 1]), min_size=3, max_size=3), min_size=k, max_size=k),
    )
)


@given(_tables)
def test_simhash_bits_matches_the_per_bit_definition(case) -> None:
    counts, table = np.array(case[0]), np.array(case[1], dtype=np.int8)
    bits = buaa.simhash_bits(counts, table)
    for p in range(counts.shape[0]):
        for j in range(table.shape[1]):
            assert bits[p, j] == (sum(int(counts[p, i]) * int(table[i, j]) for i in range(table.shape[0])) > 0)
    # scaling every weight by a positive factor never changes a fingerprint
    assert (buaa.simhash_bits(counts * 7, table) == bits).all()


def test_simhash_bits_rejects_mismatched_shapes() -> None:
    with pytest.raises(ParameterError, match="one table row per feature"):
        buaa.simhash_bits(np.zeros((2, 3)), np.ones((4, 8), np.int8))


# ----------------------------------------------------------------------------- Hamming distances


@given(st.integers(1, 70).flatmap(lambda m: st.tuples(
    st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=1, max_size=4),
    st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=1, max_size=4),
)))
def test_hamming_matrix_counts_differing_bits(case) -> None:
    a, b = np.array(case[0]), np.array(case[1])
    d = buaa.hamming_matrix(a, b)
    assert d.tolist() == [[int((x != y).sum()) for y in b] for x in a]
    assert (buaa.hamming_matrix(b, a) == d.T).all()


def test_hamming_matrix_rejects_different_lengths() -> None:
    with pytest.raises(ParameterError, match="same number of bits"):
        buaa.hamming_matrix(np.zeros((1, 16), bool), np.zeros((1, 32), bool))


# ----------------------------------------------------------------------------- the 0/1 table


def test_parse_hash_table_takes_first_rows_and_columns_as_plus_minus_one() -> None:
    t = buaa.parse_hash_table(b"1011\r\n0110  \n1111\n", 2, 3)
    assert t.dtype == np.int8
    assert t.tolist() == [[1, -1, 1], [-1, 1, 1]]


def test_parse_hash_table_defaults_to_the_whole_table() -> None:
    assert buaa.parse_hash_table("10\n01").tolist() == [[1, -1], [-1, 1]]


@pytest.mark.parametrize(
    ("data", "n", "m", "message"),
    [
        (b"0101\n01x1\n", 2, 2, r"line 2, column 3: found 'x'.*only the characters 0 and 1"),
        (b"0101\n0 11\n", 2, 2, r"line 2, column 2: found ' '"),
        (b"0101\n011\n", 2, 4, r"line 2 has only 3 columns but 4 are needed"),
        (b"0101\n\n0101\n", 3, 4, r"line 2 is empty but 4 are needed"),
        (b"0101\n0101\n", 3, 4, r"has only 2 rows but 3 are needed"),
        (b"", None, None, r"is empty"),
    ],
)
def test_parse_hash_table_errors_name_the_line_and_the_fix(data: bytes, n, m, message: str) -> None:
    with pytest.raises(InputError, match=message):
        buaa.parse_hash_table(data, n, m, source="hashvalue.txt")


def test_parse_hash_table_rejects_non_positive_sizes() -> None:
    with pytest.raises(ParameterError):
        buaa.parse_hash_table(b"01\n", 0, 1)
    with pytest.raises(ParameterError):
        buaa.parse_hash_table(b"01\n", 1, 0)


@given(st.lists(st.text(alphabet="01", min_size=5, max_size=9), min_size=1, max_size=8), st.data())
def test_parse_hash_table_round_trips(rows: list[str], data) -> None:
    n = data.draw(st.integers(1, len(rows)))
    m = data.draw(st.integers(1, 5))
    t = buaa.parse_hash_table("\n".join(rows) + "\n", n, m)
    assert t.shape == (n, m)
    assert ["".join("1" if v > 0 else "0" for v in row) for row in t] == [r[:m] for r in rows[:n]]


def test_load_hash_table_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "mytable.txt"
    p.write_text("01\n0a\n")
    with pytest.raises(InputError, match=r"mytable.txt line 2, column 2"):
        buaa.load_hash_table(p, 2, 2)
    with pytest.raises(InputError, match=r"nope.txt not found"):
        buaa.load_hash_table(tmp_path / "nope.txt", 1, 1)


# ----------------------------------------------------------------------------- report and run errors


def test_format_block_omits_empty_distances_and_ends_each_id_with_a_space() -> None:
    ids = ["1-1", "1-2", "1-3", "1-4"]
    assert buaa.format_block("S", ids, np.array([3, 0, 5, 3])) == "S\n0:1-2 \n3:1-1 1-4 \n"
    assert buaa.format_block("S", ids, np.array([4, 9, 5, 7])) == "S\n"
    assert buaa.format_block("S", ids, np.array([4, 1, 5, 7]), max_distance=5) == "S\n1:1-2 \n4:1-1 \n5:1-3 \n"


@pytest.mark.parametrize(("n", "m", "message"), [(0, 16, "N .* between 1 and 10000, got 0"), (10001, 16, "got 10001"),
                                                 (1000, 0, "M .* between 1 and 128, got 0"), (1000, 129, "got 129")])
def test_run_course_checks_limits_before_reading(tmp_path: Path, n: int, m: int, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        buaa.run_course(tmp_path, n, m)  # an empty folder: the limits are reported first


def test_run_course_names_missing_files_and_the_folder(tiny: Path) -> None:
    (tiny / "sample.txt").unlink()
    with pytest.raises(InputError, match=rf"sample.txt not found in '{re.escape(str(tiny))}'.*--dir"):
        buaa.run_course(tiny, 2, 3)


def test_run_course_rejects_empty_inputs(tiny: Path) -> None:
    (tiny / "sample.txt").write_text("\n\f\n")
    with pytest.raises(InputError, match="sample.txt holds no pages"):
        buaa.run_course(tiny, 2, 3)
    (tiny / "article.txt").write_text("")
    with pytest.raises(InputError, match="article.txt is empty"):
        buaa.run_course(tiny, 2, 3)


def test_write_result_reports_an_unwritable_place(tiny: Path) -> None:
    r = buaa.run_course(tiny, 2, 3)
    with pytest.raises(InputError, match="cannot write .*--output"):
        buaa.write_result(tiny / "no" / "such" / "result.txt", r)
    assert buaa.write_result(tiny / "out.txt", r).read_bytes() == TINY_RESULT.encode()


def test_parse_course_int_explains_what_to_type() -> None:
    assert buaa.parse_course_int(" 16 ", "M", 128, "bits") == 16
    with pytest.raises(FingerprintError, match=r"M \(bits\) must be a whole number .* got '1.5'.*simtool 1000 16"):
        buaa.parse_course_int("1.5", "M", 128, "bits")


def test_docstring_examples_hold() -> None:
    results = [doctest.testmod(module) for module in (buaa, buaa_files, buaa_simhash)]
    assert sum(r.attempted for r in results) >= 8 and sum(r.failed for r in results) == 0


# ----------------------------------------------------------------------------- the real course data


def test_course_data_m32_first_block_is_the_statement_screen(buaa_dir: Path) -> None:
    r = buaa.run_course(buaa_dir, 1000, 32)
    assert r.first_block == "Sample-1\n0:1-1 \n2:1-901 \n"


def test_course_data_m16_is_byte_exact_and_fingerprints_are_sane(buaa_dir: Path) -> None:
    r = buaa.run_course(buaa_dir, 1000, 16)
    assert r.data == (buaa_dir / "result(example).txt").read_bytes()
    fps = r.fingerprints
    assert len(fps.article_ids) == 1000 and fps.article_ids[0] == "1-1" and fps.article_ids[-1] == "1-1000"
    assert fps.sample_ids == [f"Sample-{k}" for k in range(1, 11)]
    assert len(fps.features) == 1000 and len(set(fps.features)) == 1000
    stop = buaa.parse_stopwords((buaa_dir / "stopwords.txt").read_text())
    assert not stop & set(fps.features)
    assert fps.article_bits.shape == (1000, 16) and fps.sample_bits.shape == (10, 16)
