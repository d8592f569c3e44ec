"""Spend per day as a stacked bar chart in inline SVG, drawn on the server: no script, no library.
Colours are CSS classes (``s0``... in ``ui.css``), so the page needs no inline style; the chart's
numbers are also in the table beside it, for screen readers and for copying."""

from __future__ import annotations

from colibri_router.store import format_usd
from colibri_router.webui.markup import Html, html, join
from colibri_router.webui.queries import Series

COLOURS = 8  # s0..s6 for the seven largest keys, s7 for all the others together
OTHERS = "others"
_WIDTH, _HEIGHT = 760, 260
_LEFT, _BOTTOM, _TOP = 64, 28, 10


def shown_keys(series: Series) -> list[str]:
    """The keys drawn in colours of their own; the rest share one (:data:`OTHERS`)."""
    if len(series.keys) <= COLOURS:
        return list(series.keys)
    return [*series.keys[: COLOURS - 1], OTHERS]


def colour_of(series: Series) -> dict[str, int]:
    shown = shown_keys(series)
    return {key: shown.index(key) if key in shown else COLOURS - 1 for key in series.keys}


def _nice_ceiling(value: int) -> int:
    """A round maximum for the axis, at or above ``value`` micro-dollars (1, 2 or 5 times a power of ten)."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def spend_chart(series: Series, chart_id: str, title: str) -> Html:
    """The chart of ``series``: one bar per day, one segment per key (its cost that day)."""
    colours = colour_of(series)
    top = _nice_ceiling(max([series.day_total(day) for day in series.days] + [1]))
    plot_w, plot_h = _WIDTH - _LEFT - 8, _HEIGHT - _BOTTOM - _TOP
    slot = plot_w / len(series.days)
    bar = max(slot * 0.7, 1.0)
    parts: list[Html] = []
    for step in range(5):  # gridlines and their amounts
        y = _TOP + plot_h - plot_h * step / 4
        parts.append(
            html(
                '<line class="grid" x1="{x1}" x2="{x2}" y1="{y}" y2="{y}"/>'
                '<text class="axis" x="{tx}" y="{ty}" text-anchor="end">{label}</text>',
                x1=_LEFT,
                x2=_WIDTH - 8,
                y=f"{y:.1f}",
                tx=_LEFT - 6,
                ty=f"{y + 4:.1f}",
                label=format_usd(top * step // 4),
            )
        )
    label_every = max(1, len(series.days) // 8)
    for index, day in enumerate(series.days):
        x = _LEFT + slot * index + (slot - bar) / 2
        y = _TOP + plot_h
        for key in series.keys:
            cost = series.cost.get((day, key), 0)
            if not cost:
                continue
            height = plot_h * cost / top
            y -= height
            parts.append(
                html(
                    '<rect class="s{colour}" x="{x}" y="{y}" width="{w}" height="{h}"><title>{tip}</title></rect>',
                    colour=colours[key],
                    x=f"{x:.1f}",
                    y=f"{y:.1f}",
                    w=f"{bar:.1f}",
                    h=f"{max(height, 0.5):.1f}",
                    tip=f"{day} {key}: {format_usd(cost)}",
                )
            )
        if index % label_every == 0 or index == len(series.days) - 1:
            parts.append(
                html(
                    '<text class="axis" x="{x}" y="{y}" text-anchor="middle">{label}</text>',
                    x=f"{_LEFT + slot * index + slot / 2:.1f}",
                    y=_HEIGHT - 8,
                    label=day[5:],
                )
            )
    total = sum(series.total(key) for key in series.keys)
    description = f"{len(series.days)} days from {series.days[0]} to {series.days[-1]}, {format_usd(total)} in all"
    return html(
        '<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-labelledby="{id}-t {id}-d">'
        '<title id="{id}-t">{title}</title><desc id="{id}-d">{desc}</desc>{parts}</svg>',
        w=_WIDTH,
        h=_HEIGHT,
        id=chart_id,
        title=title,
        desc=description,
        parts=join(parts),
    )


def legend(series: Series) -> Html:
    """The keys and their colours, as a list (the chart's own text is only its axis)."""
    items = [
        html('<li><span class="swatch b{colour}" aria-hidden="true"></span>{key}</li>', colour=index, key=key)
        for index, key in enumerate(shown_keys(series))
    ]
    return html('<ul class="legend">{items}</ul>', items=join(items))
