"""tracker.safe_names: job and site names, and paths that must stay inside their folder."""
import pytest

from fingerprint.errors import InputError
from tracker.safe_names import JOB_FORM, check_job, clean_site_name, inside, job_for_sites, job_for_urls


@pytest.mark.parametrize("name", ["biquge", "127.0.0.1_8123", "a.b-c_d+e", "山城", "x" * 120, "_x", "-x"])
def test_good_job_names(name):
    assert check_job(name) == name


@pytest.mark.parametrize("name", ["", "../../x", "/tmp/abs", "..", ".", ".hidden", "a/b", "a\\b", "a b", "a\0b",
                                  "x" * 121, "a\nb", "~root"])
def test_bad_job_names_say_the_allowed_form(name):
    with pytest.raises(InputError) as e:
        check_job(name)
    assert JOB_FORM in str(e.value)


def test_default_job_names_are_valid_whatever_the_site_names():
    assert job_for_sites(["www.b.test", "127.0.0.1:8123"]) == "127.0.0.1_8123+www.b.test"
    for names in (["..", "../../etc"], ["/"], [".x"], [], ["a" * 300], ["\x1b[2J"]):
        check_job(job_for_sites(names))


def test_default_job_names_of_given_urls_depend_on_the_urls():
    one = job_for_urls(["b.test"], ["https://b.test/book/1/"])
    assert one == job_for_urls(["b.test"], ["https://b.test/book/1/", "https://b.test/book/1/"])
    assert one.startswith("b.test-") and one != job_for_urls(["b.test"], ["https://b.test/book/2/"])
    assert job_for_urls(["b.test"], ["https://b.test/a", "https://b.test/b"]) == \
        job_for_urls(["b.test"], ["https://b.test/b", "https://b.test/a"])
    check_job(job_for_urls(["a" * 300], ["https://x.test/"]))


@pytest.mark.parametrize("raw, clean", [
    ("biquge", "biquge"), ("  biquge ", "biquge"), ("笔趣阁", "笔趣阁"), ("127.0.0.1:8123", "127.0.0.1:8123"),
    ("www.b-c_d.test", "www.b-c_d.test"),
])
def test_site_names_are_stripped_slugs(raw, clean):
    assert clean_site_name(raw) == clean


@pytest.mark.parametrize("raw, suggested", [
    ("bad name/../", "bad-name"), ("笔趣阁  \t 分站", "笔趣阁-分站"), ("a\nb", "a-b"), ("../../etc", "etc"),
    ("a/b", "a-b"), (".hidden", "hidden"), ("-x", "x"), ("a..b", "a.b"), ("a+b", "a-b"), ("x" * 201, "x" * 200),
])
def test_site_names_that_are_not_slugs_are_refused_with_a_valid_name(raw, suggested):
    with pytest.raises(InputError, match="site names are .* letters, digits") as e:
        clean_site_name(raw)
    assert f"e.g. {suggested!r}" in str(e.value)
    assert clean_site_name(suggested) == suggested


@pytest.mark.parametrize("raw", ["", "   ", "x\x1b[2J", "a\u202eb", "a\x00b", "a\x9bb", "a\ud800", "x" * 201])
def test_bad_site_names_are_refused(raw):
    with pytest.raises(InputError, match="site names are"):
        clean_site_name(raw)


def test_inside_keeps_paths_in_their_folder(tmp_path):
    assert inside(tmp_path, "job") == (tmp_path / "job").resolve()
    for name in ("..", "../x", "/tmp/abs", ".", "a/../../x"):
        with pytest.raises(InputError, match="outside"):
            inside(tmp_path, name)
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(InputError, match="outside"):
        inside(tmp_path, "link")  # a symlink out counts as out
