"""The charts fit their own box at any width: a viewBox to scale by, and every bar and label
inside it, whether the chart has one day or a year of them."""
import re

import pytest

from web.reports.charts import bar_chart, day_chart

RECT = re.compile(r'<rect class="chart-bar" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"')
LABEL = re.compile(r'<text class="chart-label" x="([\d.-]+)" y="[\d.]+" text-anchor="(\w+)">([^<]*)</text>')
CHAR = 11 * 0.62  # a generous width of one character at the charts' 11 px


def view_box(svg: str) -> tuple[float, float]:
    m = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    assert m, "a chart without a viewBox cannot scale to a phone"
    return float(m.group(1)), float(m.group(2))


def labels_inside(svg: str, width: float) -> None:
    for x, anchor, text in LABEL.findall(svg):
        w = len(text) * CHAR
        start = {"start": float(x), "middle": float(x) - w / 2, "end": float(x) - w}[anchor]
        assert 0 <= start and start + w <= width, (text, anchor, x, width)


def test_one_day_is_one_bar_in_the_middle_of_the_chart():
    svg = day_chart([("2026-11-27", 3)], title="Per day")
    width, height = view_box(svg)
    [(x, y, w, h)] = [tuple(map(float, r)) for r in RECT.findall(svg)]
    assert 0 < x and x + w <= width and 0 <= y and y + h <= height
    assert w <= width / 10, f"one day's bar is {w} of {width}: a slab, not a bar"
    assert abs((x + w / 2) - width / 2) < width / 8, "the only bar stands near the middle"
    labels_inside(svg, width)
    assert ">11-27<" in svg


@pytest.mark.parametrize("days", [2, 7, 30, 366])
def test_every_day_has_its_own_bar_inside_the_chart(days):
    points = [(f"2026-{1 + d // 28:02d}-{1 + d % 28:02d}", 1 + d % 5) for d in range(days)]
    svg = day_chart(points, title="Per day")
    width, height = view_box(svg)
    bars = [tuple(map(float, r)) for r in RECT.findall(svg)]
    assert len(bars) == days
    for (x, y, w, h), (nx, *_rest) in zip(bars, bars[1:] + [(width, 0, 0, 0)]):
        assert 0 < x and x + w <= nx + 0.05 and x + w <= width, (x, w, nx)
        assert 0 <= y and y + h <= height
    labels_inside(svg, width)


def test_bar_chart_bars_and_labels_stay_inside_its_box():
    svg = bar_chart([("a-very-long-pirate-site-name.example", 10), ("b", 5)], title="Top")
    width, height = view_box(svg)
    for x, y, w, h in (tuple(map(float, r)) for r in RECT.findall(svg)):
        assert 0 < x and x + w <= width and y + h <= height
