import re

from web.reports.charts import bar_chart, day_chart

XSS = "<script>alert(1)</script>"


def test_bar_chart_has_one_bar_per_item_scaled_to_the_largest():
    svg = bar_chart([("a", 10), ("b", 5), ("c", 0)], title="Top", width=520, label_width=150)
    assert svg.startswith("<svg") and 'aria-label="Top"' in svg
    widths = [int(w) for w in re.findall(r'<rect class="chart-bar" x="\d+" y="\d+" width="(\d+)"', svg)]
    assert len(widths) == 3
    assert widths[0] == 2 * widths[1] and widths[2] == 0


def test_bar_chart_escapes_labels_and_title():
    svg = bar_chart([(XSS, 3), ('"><img src=x onerror=alert(1)>', 1)], title=XSS)
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;" in svg and "&#34;&gt;&lt;img" in svg


def test_day_chart_one_bar_per_day_with_tooltips():
    points = [(f"2026-11-{d:02d}", d % 3) for d in range(1, 15)]
    svg = day_chart(points, title="Per day")
    assert svg.count('<rect class="chart-bar"') == 14
    assert "<title>2026-11-14: 2</title>" in svg
    assert ">11-01<" in svg and ">11-14<" in svg  # first and last day labelled


def test_charts_without_data_say_so():
    assert "No data yet" in bar_chart([], title="x")
    assert "No data yet" in day_chart([("2026-11-01", 0)], title="x")
    assert "No data yet" in day_chart([], title="x")
