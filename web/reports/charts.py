"""Charts as inline SVG made on the server: no script, no fonts or files from elsewhere.

Labels can be site names from crawled data, so every text node is escaped.
Colours come from CSS classes (see static/style.css), with plain fills as a
fallback for viewers that drop the stylesheet.
"""
from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

BAR_FILL = "#3b6ea8"


def _num(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"


def _fit(label: str, chars: int) -> str:
    return label if len(label) <= chars else label[:chars - 1] + "…"


def _svg(width: int, height: int, title: str, body: list[str]) -> Markup:
    return Markup(
        '<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        'role="img" aria-label="{t}"><title>{t}</title>{body}</svg>'
    ).format(w=width, h=height, t=title, body=Markup("").join(Markup(b) for b in body))


def _empty(width: int, height: int, title: str) -> Markup:
    text = Markup('<text class="chart-empty" x="{x}" y="{y}" text-anchor="middle">No data yet</text>').format(
        x=width // 2, y=height // 2)
    return _svg(width, height, title, [text])


def bar_chart(items: Sequence[tuple[str, float]], *, title: str, width: int = 520, bar: int = 18, gap: int = 6,
              label_width: int = 150) -> Markup:
    """Horizontal bars, one per (label, value), longest value = full width."""
    if not items:
        return _empty(width, 60, title)
    top = max((v for _, v in items), default=0) or 1
    value_width = 60
    span = width - label_width - value_width
    height = len(items) * (bar + gap) + gap
    body = []
    for i, (label, value) in enumerate(items):
        y = gap + i * (bar + gap)
        w = max(1, round(span * value / top)) if value > 0 else 0
        body.append(Markup(
            '<g><title>{full}: {v}</title>'
            '<text class="chart-label" x="{lx}" y="{ty}" text-anchor="end">{label}</text>'
            '<rect class="chart-bar" x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}"/>'
            '<text class="chart-value" x="{vx}" y="{ty}">{v}</text></g>'
        ).format(full=label or "(none)", label=_fit(label or "(none)", 20), lx=label_width - 6, ty=y + bar - 5,
                 x=label_width, y=y, w=w, h=bar, fill=BAR_FILL, vx=label_width + w + 4, v=_num(value)))
    return _svg(width, height, title, body)


def day_chart(points: Sequence[tuple[str, float]], *, title: str, width: int = 520, height: int = 170,
              max_bar: float = 28) -> Markup:
    """Vertical bars, one per (day, value) in the given order, with the first, last and weekly days labelled.

    Each day has a slot of the plot's width / days; its bar is 80% of the slot, at most `max_bar`
    wide, centred in it, so one day is one bar in the middle of the chart, not a slab across it.
    """
    if not points or not any(v for _, v in points):
        return _empty(width, height, title)
    left, bottom, top_pad = 40, 22, 10
    plot_w, plot_h = width - left - 8, height - bottom - top_pad
    top = max(v for _, v in points)
    step = plot_w / len(points)
    bar_w = max(1.0, min(step * 0.8, max_bar))
    base = top_pad + plot_h
    body = [
        Markup('<line class="chart-axis" x1="{x}" y1="{y}" x2="{x2}" y2="{y}" stroke="#999"/>').format(
            x=left, y=base, x2=width - 8),
        Markup('<text class="chart-value" x="{x}" y="{y}" text-anchor="end">{v}</text>').format(
            x=left - 4, y=top_pad + 8, v=_num(top)),
        Markup('<text class="chart-value" x="{x}" y="{y}" text-anchor="end">0</text>').format(x=left - 4, y=base),
    ]
    last = len(points) - 1
    for i, (day, value) in enumerate(points):
        h = plot_h * value / top
        x = left + i * step + (step - bar_w) / 2
        body.append(Markup(
            '<rect class="chart-bar" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}">'
            '<title>{day}: {v}</title></rect>'
        ).format(x=x, y=base - h, w=bar_w, h=h, fill=BAR_FILL, day=day, v=_num(value)))
        if i in (0, last) or (i % 7 == 0 and last - i >= 4):
            anchor = "middle" if last == 0 else "start" if i == 0 else "end" if i == last else "middle"
            body.append(Markup('<text class="chart-label" x="{x:.1f}" y="{y}" text-anchor="{a}">{d}</text>').format(
                x=x + bar_w / 2 if anchor == "middle" else (x if i == 0 else x + bar_w), y=height - 6, a=anchor,
                d=str(day)[5:] or day))
    return _svg(width, height, title, body)

