import csv
import io
import json
from datetime import UTC, datetime

from web.reports.streams import attachment, csv_lines, json_lines, safe_cell


def test_formula_cells_get_a_leading_quote():
    for bad in ("=1+2", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("http://x")'):
        assert safe_cell(bad) == "'" + bad
    assert safe_cell("plain") == "plain"
    assert safe_cell(-3) == "-3" and safe_cell(-0.5) == "-0.5"  # numbers are not formulas
    assert safe_cell(None) == "" and safe_cell(True) == "true"
    assert safe_cell(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05+00:00"


def test_csv_lines_read_back_with_the_header_first():
    rows = [{"a": "=cmd", "b": 1, "extra": "x"}, {"a": "逗号,和\"引号\""}]
    text = "".join(csv_lines(["a", "b"], rows))
    assert text.startswith("\ufeff")
    got = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    assert got == [["a", "b"], ["'=cmd", "1"], ['逗号,和"引号"', ""]]


def test_json_lines_make_one_array():
    rows = [{"t": datetime(2026, 1, 2, tzinfo=UTC), "s": "中"}, {"n": 1}]
    assert json.loads("".join(json_lines(rows))) == [{"t": "2026-01-02T00:00:00+00:00", "s": "中"}, {"n": 1}]
    assert json.loads("".join(json_lines([]))) == []


def test_attachment_names_cannot_break_the_header():
    value = attachment('takedown-山城"\r\nSet-Cookie: x.txt')
    assert "\r" not in value and "\n" not in value
    assert value.startswith('attachment; filename="takedown-')
    assert "filename*=UTF-8''takedown-%E5%B1%B1%E5%9F%8E%22%0D%0ASet-Cookie%3A%20x.txt" in value
