"""The permit page's rainfall chart: inline SVG drawn on the server (no script, so it renders offline).

Daily rain in inches, the storm threshold as a dashed line (CGP 2022 Part 4: 0.25 in), storm events
marked above their day and the inspections that answered them below theirs. Colours are presentation
attributes, so the chart looks the same without the stylesheet. The page shows the same numbers as a
table beside it for readers who cannot see the picture.
"""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from inspect_app.units import mm_to_in
from inspect_app.weather.source import DayRainfall

WIDTH, HEIGHT = 760, 270
LEFT, RIGHT, TOP, BOTTOM = 56, 18, 22, 78  # the plot area's margins
_STEPS_IN = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)  # axis steps in inches; the first giving at most 6 ticks
RAIN, RAIN_PARTIAL, MISSING, STORM, ANSWER, GRID, INK = (
    "#2f6fad", "#9dbfe0", "#b8b8b8", "#c0392b", "#1e7b45", "#dddddd", "#333333")


@dataclass(frozen=True)
class AnswerMark:
    """An inspection to mark below its local day, with the words of its tooltip."""

    day: dt.date
    label: str


def rainfall_svg(days: Sequence[DayRainfall], *, threshold_mm: float, storms: Mapping[dt.date, float],
                 answers: Sequence[AnswerMark], chart_id: str, title: str, description: str) -> Markup:
    """The chart as one <svg> element, with a <title> and <desc> for assistive technology."""
    if not days:
        raise ValueError("the chart needs at least one day")
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(days)
    bar_w = max(1.5, slot * 0.7)
    wettest = max((mm_to_in(d.precip_mm) or 0.0 for d in days), default=0.0)
    threshold_in = mm_to_in(threshold_mm) or 0.0
    step = next((s for s in _STEPS_IN if max(wettest, threshold_in * 1.6) / s <= 6), _STEPS_IN[-1])
    top_in = step * max(1, math.ceil(max(wettest, threshold_in * 1.6) / step))
    baseline = TOP + plot_h

    def y(inches: float) -> float:
        return baseline - plot_h * min(inches, top_in) / top_in

    def x(index: int) -> float:
        return LEFT + slot * index + slot / 2

    index_of = {d.day: i for i, d in enumerate(days)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="rainfall-chart" viewBox="0 0 {WIDTH} {HEIGHT}"'
           f' width="100%" role="img" aria-labelledby="{chart_id}-title {chart_id}-desc"'
           f' font-family="sans-serif" font-size="11" fill="{INK}">',
           f'<title id="{chart_id}-title">{escape(title)}</title>',
           f'<desc id="{chart_id}-desc">{escape(description)}</desc>']

    # Axis with gridlines in inches.
    ticks = round(top_in / step)
    for i in range(ticks + 1):
        inches = step * i
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(inches):.1f}" y2="{y(inches):.1f}"'
                   f' stroke="{GRID if i else INK}" stroke-width="1"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(inches) + 4:.1f}" text-anchor="end">{inches:.2f} in</text>')

    # One bar per local day; a day missing hours is paler, a day with no data a grey stub.
    for i, day in enumerate(days):
        label = day.day.strftime("%b %-d")
        if day.precip_mm is None:
            out.append(f'<rect class="rain-missing" x="{x(i) - bar_w / 2:.1f}" y="{baseline - 3}"'
                       f' width="{bar_w:.1f}" height="3" fill="{MISSING}">'
                       f'<title>{label}: no precipitation data</title></rect>')
            continue
        inches = mm_to_in(day.precip_mm) or 0.0
        hours = f"from {day.hours_with_data} of {day.hours_in_day} hours"
        out.append(f'<rect class="rain-bar{"" if day.complete else " rain-partial"}"'
                   f' x="{x(i) - bar_w / 2:.1f}" y="{y(inches):.1f}" width="{bar_w:.1f}"'
                   f' height="{baseline - y(inches):.1f}" fill="{RAIN if day.complete else RAIN_PARTIAL}">'
                   f'<title>{label}: {inches:.2f} in ({hours})</title></rect>')

    # CGP 2022 Part 4: the storm threshold, 0.25 in (6.35 mm) in 24 hours.
    out.append(f'<line class="storm-threshold" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(threshold_in):.1f}"'
               f' y2="{y(threshold_in):.1f}" stroke="{STORM}" stroke-width="1.5" stroke-dasharray="6 4">'
               f'<title>Storm threshold: {threshold_in:.2f} in in 24 hours</title></line>')
    out.append(f'<text x="{WIDTH - RIGHT}" y="{y(threshold_in) - 4:.1f}" text-anchor="end" fill="{STORM}"'
               f' stroke="#ffffff" stroke-width="3" paint-order="stroke">'
               f'{threshold_in:.2f} in storm threshold</text>')

    for day, depth_mm in sorted(storms.items()):
        if day not in index_of:
            continue
        cx, tip = x(index_of[day]), y(mm_to_in(depth_mm) or 0.0) - 4
        out.append(f'<path class="storm-marker" d="M{cx - 5:.1f} {tip - 9:.1f}h10l-5 9z" fill="{STORM}">'
                   f'<title>Storm event {day.strftime("%b %-d")}: {mm_to_in(depth_mm):.2f} in</title></path>')

    for mark in answers:
        if mark.day not in index_of:
            continue
        out.append(f'<circle class="storm-inspection" cx="{x(index_of[mark.day]):.1f}" cy="{baseline + 10}"'
                   f' r="4.5" fill="{ANSWER}"><title>{escape(mark.label)}</title></circle>')

    # Dates: every seventh day, counted back from the last so the newest day is labelled.
    for i in range(len(days) - 1, -1, -7):
        out.append(f'<text x="{x(i):.1f}" y="{baseline + 30}" text-anchor="middle">'
                   f'{days[i].day.strftime("%b %-d")}</text>')

    legend_y = HEIGHT - 12
    out.append(f'<g class="legend" transform="translate({LEFT},{legend_y})">'
               f'<rect x="0" y="-9" width="10" height="10" fill="{RAIN}"/><text x="14" y="0">Daily rain</text>'
               f'<rect x="90" y="-9" width="10" height="10" fill="{RAIN_PARTIAL}"/>'
               f'<text x="104" y="0">Hours missing</text>'
               f'<line x1="200" x2="224" y1="-4" y2="-4" stroke="{STORM}" stroke-width="1.5"'
               f' stroke-dasharray="6 4"/><text x="228" y="0">{threshold_in:.2f} in threshold</text>'
               f'<path d="M340 -9h10l-5 9z" fill="{STORM}"/><text x="354" y="0">Storm event</text>'
               f'<circle cx="445" cy="-4" r="4.5" fill="{ANSWER}"/>'
               f'<text x="454" y="0">Inspection after a storm</text></g>')
    out.append("</svg>")
    return Markup("".join(out))
