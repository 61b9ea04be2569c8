"""`simtool N M` / `simtool course N M` through click: output files, screen block, errors, help."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from simtool import main

from .test_buaa import TINY, TINY_RESULT, write_course

COURSE_INPUTS = ("stopwords.txt", "hashvalue.txt", "article.txt", "sample.txt")


def link_inputs(src: Path, dst: Path) -> Path:
    """Make `dst` a working folder holding the four course inputs (symlinked, copied if links fail)."""
    for name in COURSE_INPUTS:
        try:
            (dst / name).symlink_to(src / name)
        except OSError:
            shutil.copyfile(src / name, dst / name)
    return dst


def run(args: list[str]):
    return CliRunner().invoke(main, args)


def assert_clean_error(result, *fragments: str) -> None:
    """A non-zero exit with a one-line explanation, and no traceback."""
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return write_course(d, TINY)


# ----------------------------------------------------------------------------- the course data


def test_simtool_1000_16_reproduces_the_example_result_byte_for_byte(buaa_dir: Path, tmp_path: Path, monkeypatch) -> None:
    link_inputs(buaa_dir, tmp_path)
    monkeypatch.chdir(tmp_path)
    result = run(["1000", "16"])
    assert result.exit_code == 0, result.output
    expected = (buaa_dir / "result(example).txt").read_bytes()
    assert (tmp_path / "result.txt").read_bytes() == expected
    first_block = expected.decode().split("Sample-2\n")[0]
    assert result.stdout == first_block
    assert "wrote result.txt: 10 samples checked against 1000 pages" in result.stderr


def test_simtool_1000_32_prints_the_statement_screen(buaa_dir: Path, tmp_path: Path, monkeypatch) -> None:
    link_inputs(buaa_dir, tmp_path)
    monkeypatch.chdir(tmp_path)
    result = run(["1000", "32", "-q"])
    assert result.exit_code == 0, result.output
    assert result.output == "Sample-1\n0:1-1 \n2:1-901 \n"  # -q: nothing on stderr either
    assert (tmp_path / "result.txt").read_bytes().startswith(b"Sample-1\n0:1-1 \n2:1-901 \nSample-2\n")


# ----------------------------------------------------------------------------- options


def test_dir_and_output_options(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere.txt"
    result = run(["course", "2", "3", "--dir", str(tiny), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == TINY_RESULT
    assert not (tiny / "result.txt").exists()
    assert result.stdout == "Sample-1\n1:A-1 A-2 \n"


def test_result_goes_into_the_dir_folder_by_default(tiny: Path) -> None:
    result = run(["2", "3", "--dir", str(tiny), "-q"])
    assert result.exit_code == 0, result.output
    assert (tiny / "result.txt").read_bytes() == TINY_RESULT.encode()
    assert result.output == "Sample-1\n1:A-1 A-2 \n"


def test_existing_result_is_overwritten(tiny: Path) -> None:
    (tiny / "result.txt").write_text("old\n" * 100)
    assert run(["2", "3", "--dir", str(tiny), "-q"]).exit_code == 0
    assert (tiny / "result.txt").read_text() == TINY_RESULT


@pytest.mark.parametrize("args", [["--help"], ["-h"]])
def test_help_shows_an_example(args: list[str]) -> None:
    result = run(["course", *args])
    assert result.exit_code == 0
    assert "Example:" in result.output
    assert "simtool 1000 16" in result.output
    assert "--dir" in result.output and "--output" in result.output


def test_group_help_mentions_the_course_mode() -> None:
    result = run(["--help"])
    assert result.exit_code == 0
    assert "course" in result.output


# ----------------------------------------------------------------------------- errors


def test_missing_file_is_named_with_the_folder_searched(tiny: Path) -> None:
    (tiny / "hashvalue.txt").unlink()
    result = run(["2", "3", "--dir", str(tiny)])
    assert_clean_error(result, "hashvalue.txt not found in", str(tiny), "--dir")


def test_no_course_files_in_the_current_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(["1000", "16"])
    assert_clean_error(result, "none of the course files", "article.txt", str(tmp_path), "--dir PATH")


def test_missing_data_folder(tmp_path: Path) -> None:
    result = run(["1000", "16", "--dir", str(tmp_path / "nowhere")])
    assert_clean_error(result, "nowhere", "does not exist", "--dir")


@pytest.mark.parametrize(
    ("table", "fragments"),
    [
        ("1010\n01x1\n1111\n", ["hashvalue.txt line 2, column 3", "'x'", "only the characters 0 and 1"]),
        ("1010\n01\n1111\n", ["hashvalue.txt line 2 has only 2 columns but 3 are needed"]),
        ("1010\n", ["hashvalue.txt has only 1 rows but 2 are needed", "at most 1 features"]),
    ],
)
def test_malformed_hash_table(tiny: Path, table: str, fragments: list[str]) -> None:
    (tiny / "hashvalue.txt").write_text(table)
    assert_clean_error(run(["2", "3", "--dir", str(tiny)]), *fragments)


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["0", "16"], ["N (feature vector length) must be between 1 and 10000, got 0"]),
        (["10001", "16"], ["between 1 and 10000, got 10001"]),
        (["1000", "0"], ["M (fingerprint length in bits) must be between 1 and 128, got 0"]),
        (["1000", "129"], ["between 1 and 128, got 129"]),
        (["course", "-5", "16"], ["N (feature vector length) must be between 1 and 10000, got -5"]),
        (["course", "abc", "16"], ["N (feature vector length) must be a whole number", "'abc'", "simtool 1000 16"]),
        (["course", "1.5", "16"], ["must be a whole number", "'1.5'"]),
        (["1000", "sixteen"], ["M (fingerprint length in bits) must be a whole number", "'sixteen'"]),
        (["1000", "16.0"], ["M (fingerprint length in bits) must be a whole number", "'16.0'"]),
    ],
)
def test_bad_n_or_m(tiny: Path, args: list[str], fragments: list[str]) -> None:
    assert_clean_error(run([*args, "--dir", str(tiny)]), *fragments)


def test_missing_m_is_a_usage_error() -> None:
    result = run(["1000"])
    assert result.exit_code == 2
    assert "Missing argument 'M'" in result.output


def test_empty_article(tiny: Path) -> None:
    (tiny / "article.txt").write_text("")
    assert_clean_error(run(["2", "3", "--dir", str(tiny)]), "article.txt is empty", "form feeds")


def test_sample_without_pages(tiny: Path) -> None:
    (tiny / "sample.txt").write_text("\n\f\n")
    assert_clean_error(run(["2", "3", "--dir", str(tiny)]), "sample.txt holds no pages")


def test_unwritable_output(tiny: Path) -> None:
    result = run(["2", "3", "--dir", str(tiny), "--output", str(tiny / "missing" / "result.txt")])
    assert_clean_error(result, "cannot write", "--output PATH")
