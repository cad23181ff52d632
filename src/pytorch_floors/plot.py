"""Small SVG charts for the proofs, drawn at build time with no JavaScript.

A chart is an HTML `<figure>`: its title is the figure's caption and its legend a list under the
drawing, both HTML, so they wrap to any width. The drawing is one inline SVG that scales to the
column. A phone shows it at about half its 640 units, so the stylesheet
(`docs/stylesheets/floors.css`) draws its text at more units on a narrow figure (a container
query, up to `PHONE_TEXT`) and every position here leaves room for text that size: on a phone the
chart shows fewer tick labels and only the direct labels that fit, all inside the drawing.

Text and axes use `currentColor` and series use CSS classes, so a chart follows the page's light
or dark palette. Every drawing has a `<title>` and a `<desc>` for screen readers. A figure's ids
come from a digest of what it draws, so they differ between figures however many processes draw
them, and drawing the same chart twice gives the same markup.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

__all__ = [
    "PHONE_TEXT",
    "Key",
    "Series",
    "bar_chart",
    "chart_figure",
    "line_chart",
    "nice_axis",
    "show",
    "text_width",
    "wrap",
]

# Series are told apart by shape and dash as well as colour, so a chart reads in greyscale
# and for readers who cannot tell the palette's colours apart.
_MARKERS = ("circle", "square", "triangle", "diamond", "cross", "plus")
_DASHES = ("6 4", "2 4", "10 4 2 4", "1 3", "12 3", "4 2 1 2")

PHONE_TEXT = 24.0
"""The largest size, in SVG units, the stylesheet draws a chart's text at: a 640-unit chart shown
338 px wide (a 390 px phone) draws it at 12.7 px. Every layout leaves room for text this size."""

DESKTOP_TEXT = 13.0
"""The size, in SVG units, of a chart's text on a wide figure (the stylesheet's default)."""

_LINE = 1.2
"""Line height of wrapped chart text, in ems."""

# Advance widths of a sans-serif text face (Arial's metrics, which Liberation Sans and Helvetica
# share), in ems, by character class; `text_width` pads them for faces a little wider.
_NARROW = frozenset(" .,:;'!|ijl")
_SEMI = frozenset('()[]{}-/\\frtI`"*')
_WIDE = frozenset("mwMW@%")
_SPARE = 1.1
"""Room kept for a wider text face than Arial's (DejaVu Sans, San Francisco)."""


def text_width(text: str, size: float = PHONE_TEXT, *, bold: bool = False) -> float:
    """A generous estimate of how wide `text` is drawn at `size` units, in SVG units.

    Layouts use it to keep text inside the drawing and labels apart; it errs wide.

    Args:
        text: The text, on one line.
        size: The font size in SVG units.
        bold: Whether it is drawn bold.
    """
    ems = 0.0
    for char in text:
        if char in _NARROW:
            ems += 0.278
        elif char in _SEMI:
            ems += 0.333
        elif char in _WIDE:
            ems += 0.86
        elif char.isupper():
            ems += 0.667
        else:
            ems += 0.556
    return ems * size * _SPARE * (1.07 if bold else 1.0)


def wrap(text: str, width: float, size: float = PHONE_TEXT, *, bold: bool = False) -> list[str]:
    """Split `text` at spaces into lines no wider than `width` units at `size` (a longer word keeps its own line).

    Args:
        text: The text to wrap.
        width: The room for one line, in SVG units.
        size: The font size in SVG units.
        bold: Whether it is drawn bold.
    """
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size, bold=bold) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]


def _digest(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Series:
    """One data series of a line chart.

    Attributes:
        name: Legend label.
        xs: X values.
        ys: Y values (same length as `xs`).
        points: Draw markers at the data points.
        line: Join the points with a line.
        dashed: Draw the line dashed (for models and bounds, as opposed to measurements).
    """

    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    points: bool = True
    line: bool = True
    dashed: bool = False


@dataclass(frozen=True)
class Key:
    """One entry of a chart's legend: a small drawing of how the chart marks something, and its name.

    Attributes:
        name: What the mark stands for.
        colour: The series colour (0 to 5) of the mark, or `None` for the text's colour.
        mark: `"line"` (a stroke), `"box"` (a filled box), `"outline"` (an empty box) or `"none"`
            (the marker alone).
        marker: A data-point marker drawn on it (`"circle"`, `"square"`, `"triangle"`, `"diamond"`,
            `"cross"`, `"plus"`), or `None`.
        dash: The stroke's dash pattern (`stroke-dasharray`), or `None` for a solid one.
        opacity: A box's fill opacity.
    """

    name: str
    colour: int | None = 0
    mark: str = "box"
    marker: str | None = None
    dash: str | None = None
    opacity: float = 1.0


def _key_drawing(key: Key) -> str:
    css = "" if key.colour is None else f"floors-plot__series floors-plot__series--{key.colour % 6}"
    dash = f' stroke-dasharray="{key.dash}"' if key.dash else ""
    parts = []
    if key.mark == "line":
        parts.append(f'<line class="{css} floors-plot__key" x1="1" y1="7" x2="27" y2="7"{dash}/>')
    elif key.mark == "outline":
        parts.append(f'<rect class="floors-chart__outline" x="3" y="1.5" width="22" height="11" rx="2"{dash}/>')
    elif key.mark == "box":
        fade = f' fill-opacity="{key.opacity:g}"' if key.opacity < 1 else ""
        parts.append(f'<rect class="{css}" x="3" y="2" width="22" height="10" rx="1"{fade}/>')
    if key.marker:
        parts.append(_marker(key.marker, 14, 7, css))
    return (
        '<svg class="floors-chart__key" viewBox="0 0 28 14" width="28" height="14" aria-hidden="true" '
        f'focusable="false">{"".join(parts)}</svg>'
    )


def chart_figure(
    drawing: str,
    *,
    title: str,
    keys: Sequence[Key] = (),
    notes: Sequence[str] = (),
    kind: str = "",
    attributes: str = "",
) -> str:
    """Put a drawing in a chart's figure: the title above it and the legend and notes under it, in HTML.

    Proofs that draw their own SVG use it as `line_chart` does, so every chart titles, keys and
    wraps the same way. The figure is the container the stylesheet measures to size the drawing's
    text (floors.css).

    Args:
        drawing: The chart itself: an inline `<svg class="floors-plot">`, or HTML.
        title: The chart's title, shown as the figure's caption.
        keys: The legend's entries, in order.
        notes: Sentences printed under the legend.
        kind: A modifier class for the figure (`"bars"` gives `floors-chart--bars`).
        attributes: Extra attributes for the `<figure>` element, written as they are.

    Returns:
        A `<figure class="floors-figure floors-chart">` element.
    """
    css = "floors-figure floors-chart" + (f" floors-chart--{kind}" if kind else "")
    legend = ""
    if keys:
        items = "".join(f"<li>{_key_drawing(key)}<span>{escape(key.name)}</span></li>" for key in keys)
        legend = f'<ul class="floors-chart__legend">{items}</ul>'
    text = "".join(f'<p class="floors-chart__note">{escape(note)}</p>' for note in notes)
    extra = f" {attributes}" if attributes else ""
    return (
        f'<figure class="{css}"{extra}><figcaption class="floors-chart__title">{escape(title)}</figcaption>'
        f"{drawing}{legend}{text}</figure>"
    )


def _svg(width: float, height: float, *, ident: str, title: str, description: str, body: str) -> str:
    return (
        f'<svg class="floors-plot" role="img" viewBox="0 0 {width:g} {height:g}" '
        f'aria-labelledby="{ident}-title {ident}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-title">{escape(title)}</title><desc id="{ident}-desc">{escape(description)}</desc>'
        f"{body}</svg>"
    )


@dataclass
class _Axis:
    low: float
    high: float
    log: bool
    ticks: list[float] = field(default_factory=list)

    def scale(self, value: float) -> float:
        if self.log:
            return (math.log10(value) - math.log10(self.low)) / (math.log10(self.high) - math.log10(self.low))
        return (value - self.low) / (self.high - self.low)


def _nice_step(span: float) -> float:
    raw = span / 5
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * magnitude >= raw:
            return factor * magnitude
    return 10 * magnitude


def nice_axis(end: float, most: int = 6) -> tuple[float, float]:
    """A round end and step for an axis from 0 to at least `end`: steps of 1, 2 or 5 times a power of ten.

    Proofs that draw their own SVG (a timeline) use it, so their ticks read 0, 50, 100, never 0, 63, 126.

    Args:
        end: The largest value the axis must show (positive).
        most: The most steps the axis may have.

    Returns:
        `(axis_end, step)`: `axis_end` a multiple of `step` at least `end`, in at most `most` steps.
    """
    if end <= 0:
        return 1.0, 1.0
    magnitude = 10.0 ** math.floor(math.log10(end / most))
    for factor in (1, 2, 5, 10, 20):
        step = factor * magnitude
        if math.ceil(end / step - 1e-9) <= most:
            return math.ceil(end / step - 1e-9) * step, step
    return most * 20 * magnitude, 20 * magnitude  # unreachable: ten times the magnitude always fits


def _axis(values: Sequence[float], log: bool, include_zero: bool) -> _Axis:
    if log:
        positive = [v for v in values if v > 0]
        if not positive:
            raise ValueError("a log axis needs positive values")
        low = 10 ** math.floor(math.log10(min(positive)))
        high = 10 ** math.ceil(math.log10(max(positive)))
        if high == low:
            high = low * 10
        exponents = range(round(math.log10(low)), round(math.log10(high)) + 1)
        ticks = [10.0**e for e in exponents]
        if len(ticks) > 9:
            stride = math.ceil(len(ticks) / 8)
            ticks = ticks[::stride]
        return _Axis(low, high, True, ticks)
    low, high = min(values), max(values)
    if include_zero:
        low = min(low, 0.0)
    if high == low:
        high = low + 1
    step = _nice_step(high - low)
    low = math.floor(low / step) * step
    high = math.ceil(high / step) * step
    ticks = [low + i * step for i in range(round((high - low) / step) + 1)]
    return _Axis(low, high, False, ticks)


def _tick_label(value: float, *, powers: bool = False) -> str:
    if value == 0:
        return "0"
    exponent = math.log10(abs(value))
    if powers or abs(value) >= 1e4 or abs(value) < 1e-3:
        if exponent == int(exponent):
            return f"1e{int(exponent)}"
        return f"{value:.0e}"
    return f"{value:g}"


def _tick_labels(axis: _Axis) -> list[str]:
    """An axis's tick labels, in one notation per axis.

    A log axis that needs powers of ten for some ticks writes every tick so ("1e3, 1e4", never "1000, 1e4").
    """
    powers = axis.log and any(t >= 1e4 or t < 1e-3 for t in axis.ticks)
    return [_tick_label(t, powers=powers) for t in axis.ticks]


def _stride(gaps: Sequence[float], sizes: Sequence[float], room: float) -> int:
    """The smallest step k such that labels k ticks apart, each `sizes[i]` long, keep `room` between them."""
    for k in range(1, len(sizes) + 1):
        kept = range(0, len(sizes), k)
        if all(sum(gaps[a:b]) - (sizes[a] + sizes[b]) / 2 >= room for a, b in zip(kept, list(kept)[1:], strict=False)):
            return k
    return len(sizes)


_POLYGONS = {
    "square": ((-3.5, -3.5), (3.5, -3.5), (3.5, 3.5), (-3.5, 3.5)),
    "triangle": ((0, -5), (4.5, 3.5), (-4.5, 3.5)),
    "diamond": ((0, -5), (5, 0), (0, 5), (-5, 0)),
}
_STROKES = {"cross": ((-4, -4, 4, 4), (-4, 4, 4, -4)), "plus": ((-5, 0, 5, 0), (0, -5, 0, 5))}


def _marker(shape: str, x: float, y: float, css: str) -> str:
    """One data point drawn as `shape`, centred on (x, y), about 8 units across."""
    if shape in _STROKES:
        d = "".join(f"M{x + a:.1f},{y + b:.1f}L{x + c:.1f},{y + e:.1f}" for a, b, c, e in _STROKES[shape])
        return f'<path class="{css} floors-plot__stroke" d="{d}"/>'
    if shape in _POLYGONS:
        points = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in _POLYGONS[shape])
        return f'<polygon class="{css}" points="{points}"/>'
    return f'<circle class="{css}" cx="{x:.1f}" cy="{y:.1f}" r="4"/>'


Box = tuple[float, float, float, float]
"""(left, top, right, bottom) in SVG units."""


def _overlaps(a: Box, b: Box, gap: float = 0.0) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


_Drawn = tuple[str, list[tuple[float, float]], bool, bool]
"""A series as drawn: its name, its points in SVG units, whether it marks them, whether it joins them."""


def _line_samples(lines: list[_Drawn]) -> list[tuple[float, float]]:
    """Points every 4 units along the joined series' lines: what a direct label would cross."""
    samples: list[tuple[float, float]] = []
    for _, points, _, joined in lines:
        for (x1, y1), (x2, y2) in itertools.pairwise(points) if joined else ():
            steps = max(1, int(math.hypot(x2 - x1, y2 - y1) / 4))
            samples += [(x1 + (x2 - x1) * t / steps, y1 + (y2 - y1) * t / steps) for t in range(steps + 1)]
    return samples


def _spots(end: tuple[float, float], wide: float, half: float, reach: int, plot: Box) -> list[tuple[Box, str, int]]:
    """Where a label `wide` units long and `2 * half` tall may go by a line's `end`: (box, anchor, distance).

    Touching the point first (beside it, then over or under it), then up to `reach` rows over or
    under it. A label over or under the point slides along to fit the plot while it stays over the point.
    """
    ex, ey = end
    beside = [(ex + 8, ey, "start", 0), (ex - 8 - wide, ey, "end", 1)]
    rows = [(ey + sign * (7 + half + row * 2.2 * half), 2 * row + 1) for row in range(reach + 1) for sign in (-1, 1)]
    spots = []
    for x0, y, anchor, distance in beside:
        spots.append(((x0, y - half, x0 + wide, y + half), anchor, distance))
    for y, distance in rows:
        for x0, anchor in ((ex - 6, "start"), (ex + 6 - wide, "end")):
            slid = min(max(x0, plot[0] + 3), plot[2] - 3 - wide)
            if slid - 6 <= ex <= slid + wide + 6:
                spots.append(((slid, y - half, slid + wide, y + half), anchor, max(distance, 1)))
    return spots


def _direct_labels(lines: list[_Drawn], plot: Box, size: float, *, reach: int) -> list[tuple[str, float, float, str]]:
    """Name each joined series by its line's end where the name fits at `size` units, over no point and no other name.

    A name that fits nowhere is left to the legend. Of the spots that fit (`_spots`), a name takes the
    one nearest its point that crosses the fewest lines. Returns `(name, x, y, anchor)` per placed
    name, `y` its middle.
    """
    if len(lines) < 2:
        return []
    markers: list[Box] = [(x - 6, y - 6, x + 6, y + 6) for _, points, drawn, _ in lines if drawn for x, y in points]
    samples = _line_samples(lines)
    half = 0.6 * size
    placed: list[Box] = []
    labels = []
    for name, points, _, joined in lines:
        # A scatter's "end" is no end: its name by one point read as another series' (floor 6's roofline put
        # "the program's Linear" beside a matmul). Its marker's shape names it, in the legend.
        if not points or not joined:
            continue
        best: tuple[int, Box, str] | None = None
        for box, anchor, distance in _spots(points[-1], text_width(name, size, bold=True), half, reach, plot):
            inside = plot[0] + 3 <= box[0] and box[2] <= plot[2] - 3 and plot[1] + 2 <= box[1] and box[3] <= plot[3] - 2
            if not inside or any(_overlaps(box, other, 2) for other in placed + markers):
                continue
            cost = 3 * distance + sum(1 for x, y in samples if box[0] <= x <= box[2] and box[1] <= y <= box[3])
            if best is None or cost < best[0]:
                best = (cost, box, anchor)
        if best is not None:
            _, box, anchor = best
            placed.append(box)
            labels.append((name, box[0] if anchor == "start" else box[2], (box[1] + box[3]) / 2, anchor))
    return labels


@dataclass(frozen=True)
class _Plot:
    """Where a line chart's plot sits in its drawing, and its axes."""

    left: float
    top: float
    width: float
    height: float
    x_axis: _Axis
    y_axis: _Axis

    @property
    def box(self) -> Box:
        return (self.left, self.top, self.left + self.width, self.top + self.height)

    def point(self, x: float, y: float) -> tuple[float, float]:
        return self.left + self.x_axis.scale(x) * self.width, self.top + (1 - self.y_axis.scale(y)) * self.height


def _axes(plot: _Plot, x_label: list[str], y_label: list[str], drawing_width: float) -> list[str]:
    """The grid, the tick labels, the frame and the axes' labels, laid out for text `PHONE_TEXT` units tall.

    Tick labels a phone has no room for are marked minor (floors.css hides them there); the grid
    keeps every tick. The y label is above the axis and the x label under the tick labels, their
    offsets in ems, so they follow the text's size.
    """
    size, parts = PHONE_TEXT, []
    x_labels, y_labels = _tick_labels(plot.x_axis), _tick_labels(plot.y_axis)
    x_ticks = [(plot.point(t, plot.y_axis.low)[0], label) for t, label in zip(plot.x_axis.ticks, x_labels, strict=True)]
    y_ticks = [(plot.point(plot.x_axis.low, t)[1], label) for t, label in zip(plot.y_axis.ticks, y_labels, strict=True)]
    x_gaps = [b[0] - a[0] for a, b in itertools.pairwise(x_ticks)]
    x_stride = _stride(x_gaps, [text_width(label, size) for _, label in x_ticks], 0.6 * size)
    y_gaps = [a[0] - b[0] for a, b in itertools.pairwise(y_ticks)]
    y_stride = _stride(y_gaps, [size] * len(y_ticks), 0.3 * size)
    left, top, right, bottom = plot.box
    for index, (x, label) in enumerate(x_ticks):
        minor = " floors-plot__tick--minor" if index % x_stride else ""
        parts.append(f'<line class="floors-plot__grid" x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}"/>')
        parts.append(
            f'<text class="floors-plot__tick{minor}" x="{x:.1f}" y="{bottom + 6:.1f}" text-anchor="middle" '
            f'dominant-baseline="hanging">{label}</text>'
        )
    for index, (y, label) in enumerate(y_ticks):
        minor = " floors-plot__tick--minor" if index % y_stride else ""
        # The labels at the frame's corners sit inside its edge, clear of the axis label and the x ticks.
        baseline = "hanging" if abs(y - top) < 1 else "text-after-edge" if abs(y - bottom) < 1 else "central"
        parts.append(f'<line class="floors-plot__grid" x1="{left:.1f}" y1="{y:.1f}" x2="{right:.1f}" y2="{y:.1f}"/>')
        parts.append(
            f'<text class="floors-plot__tick{minor}" x="{left - 8:.1f}" y="{y:.1f}" text-anchor="end" '
            f'dominant-baseline="{baseline}">{label}</text>'
        )
    parts.append(
        f'<rect class="floors-plot__frame" x="{left:.1f}" y="{top:.1f}" width="{plot.width:.1f}" '
        f'height="{plot.height:.1f}" fill="none"/>'
    )
    for index, text in enumerate(y_label):
        dy = -0.3 - _LINE * (len(y_label) - 1 - index)
        parts.append(f'<text class="floors-plot__label" x="8" y="{top - 6:.1f}" dy="{dy:.2f}em">{escape(text)}</text>')
    for index, text in enumerate(x_label):
        half = text_width(text, size) / 2
        x = min(max((left + right) / 2, 8 + half), drawing_width - 8 - half)
        parts.append(
            f'<text class="floors-plot__label" x="{x:.1f}" y="{bottom + 6:.1f}" dy="{_LINE * (1 + index):.2f}em" '
            f'text-anchor="middle" dominant-baseline="hanging">{escape(text)}</text>'
        )
    return parts


def _series(series: Sequence[Series], plot: _Plot) -> tuple[list[str], list[Key], list[_Drawn]]:
    """Each series' line and markers, its legend key, and where it was drawn (for the direct labels)."""
    dashes = iter(_DASHES)
    parts, keys, drawn = [], [], []
    for index, s in enumerate(series):
        css = f"floors-plot__series floors-plot__series--{index % 6}"
        marker = _MARKERS[index % len(_MARKERS)]
        dash = next(dashes, _DASHES[-1]) if s.dashed else None
        coords = [plot.point(x, y) for x, y in zip(s.xs, s.ys, strict=True)]
        joined = s.line and len(coords) > 1
        if joined:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            parts.append(f'<polyline class="{css}" points="{path}" fill="none"{dash_attr}/>')
        if s.points:
            parts.extend(_marker(marker, x, y, css) for x, y in coords)
        drawn.append((s.name, coords, s.points, joined))
        mark = "line" if s.line else "none"
        keys.append(Key(s.name, index % 6, mark, marker if s.points else None, dash if s.line else None))
    return parts, keys, drawn


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    description: str = "",
    log_x: bool = False,
    log_y: bool = False,
    width: int = 640,
    height: int = 380,
) -> str:
    """Draw one or more series on shared axes, as a chart's figure.

    Args:
        series: The data series; each gets its own colour, marker shape (dashed series: dash
            pattern) and legend entry, and is named by its line's end (a direct label) where the
            name fits, so series differ by more than colour.
        title: Chart title, the figure's caption, also read by screen readers.
        x_label: X-axis label, with its unit.
        y_label: Y-axis label, with its unit, written above the axis.
        description: A sentence describing what the chart shows (for screen readers).
        log_x: Use a logarithmic x axis.
        log_y: Use a logarithmic y axis.
        width: Width of the drawing in SVG units.
        height: Height of the drawing in SVG units (the legend is under it, in HTML).

    Returns:
        A `<figure>` holding the caption, an inline `<svg>` and the legend.

    Raises:
        ValueError: If there is no data, lengths differ, a log axis gets a value <= 0, or the
            height leaves no room to plot.
    """
    if not series or not any(len(s.xs) for s in series):
        raise ValueError("line_chart needs at least one non-empty series")
    for s in series:
        if len(s.xs) != len(s.ys):
            raise ValueError(f"series {s.name!r}: {len(s.xs)} x values but {len(s.ys)} y values")
    # Every margin leaves room for text at a phone's size: the largest the stylesheet draws.
    size, row = PHONE_TEXT, _LINE * PHONE_TEXT
    x_axis = _axis([x for s in series for x in s.xs], log_x, include_zero=False)
    y_axis = _axis([y for s in series for y in s.ys], log_y, include_zero=not log_y)
    x_lines, y_lines = wrap(x_label, width - 16, size), wrap(y_label, width - 16, size)
    top = 10 + row * len(y_lines)
    left = max(48.0, 18 + max(text_width(label, size) for label in _tick_labels(y_axis)))
    right = max(12.0, text_width(_tick_labels(x_axis)[-1], size) / 2 + 6)
    bottom = 8 + row * (1 + len(x_lines)) + 6
    if height - top - bottom < 4 * size:
        raise ValueError(f"line_chart: a height of {height} leaves no room to plot")
    plot = _Plot(left, top, width - left - right, height - top - bottom, x_axis, y_axis)
    lines, keys, drawn = _series(series, plot)
    parts = [*_axes(plot, x_lines, y_lines, width), *lines]
    # Two sets of direct labels: the wide figure's and the phone's (fewer, at the larger size); CSS shows one.
    for which, text_size, reach in (("wide", DESKTOP_TEXT, 2), ("narrow", size, 0)):
        for name, x, y, anchor in _direct_labels(drawn, plot.box, text_size, reach=reach):
            parts.append(
                f'<text class="floors-plot__direct floors-plot__direct--{which}" x="{x:.1f}" y="{y:.1f}" '
                f'text-anchor="{anchor}" dominant-baseline="central">{escape(name)}</text>'
            )
    body = "".join(parts)
    description = description or title
    ident = f"floors-plot-{_digest(title, description, body)}"
    return chart_figure(
        _svg(width, height, ident=ident, title=title, description=description, body=body), title=title, keys=keys
    )


def bar_chart(
    bars: Sequence[tuple[str, float]],
    *,
    title: str,
    value_label: str,
    description: str = "",
    value_format: str = "{:,.0f}",
    highlight: Sequence[str] = (),
) -> str:
    """Draw horizontal bars whose lengths are to scale (linear, starting at zero), in HTML.

    Each bar is a row of a list: its label, the bar and its value, so a screen reader reads the
    labels and values as text and a narrow screen puts each label above its bar.

    Args:
        bars: `(label, value)` pairs, drawn top to bottom.
        title: Chart title, the figure's caption.
        value_label: What the values are, with unit (shown under the bars).
        description: A sentence for screen readers.
        value_format: Format for the value printed at the end of each bar.
        highlight: Labels of bars drawn in the accent colour.

    Returns:
        A `<figure>` holding the caption, the list of bars and the value label.

    Raises:
        ValueError: If there are no bars or a value is negative.
    """
    if not bars:
        raise ValueError("bar_chart needs at least one bar")
    if any(value < 0 for _, value in bars):
        raise ValueError("bar_chart draws lengths; values must be >= 0")
    peak = max(value for _, value in bars) or 1.0
    values = [value_format.format(value) for _, value in bars]
    rows = []
    for (label, value), shown in zip(bars, values, strict=True):
        share = max(value / peak, 0.002) if value > 0 else 0.0
        css = "floors-bars__row floors-bars__row--highlight" if label in highlight else "floors-bars__row"
        rows.append(
            f'<li class="{css}"><span class="floors-bars__label">{escape(label)}</span>'
            f'<span class="floors-bars__track"><span class="floors-bars__bar" style="--floors-bar: {share:.4f}"></span>'
            f'<span class="floors-bars__value">{escape(shown)}</span></span></li>'
        )
    # Room after the longest bar for the longest value (digits are 1ch wide, letters a little more).
    room = 1.2 * max(len(shown) for shown in values) + 1
    body = "".join(rows)
    ident = f"floors-bars-{_digest(title, description, body)}"
    drawing = (
        f'<p id="{ident}-desc" hidden>{escape(description or title)}</p>'
        f'<ul class="floors-bars" style="--floors-bars-room: {room:.1f}ch">{body}</ul>'
        f'<p class="floors-chart__axis">{escape(value_label)}</p>'
    )
    return chart_figure(drawing, title=title, kind="bars", attributes=f'aria-describedby="{ident}-desc"')


# A standalone page's stylesheet: the chart's colours and layout where floors.css is not loaded.
_STANDALONE_CSS = """
body { font-family: Helvetica, Arial, sans-serif; color: #222; max-width: 44rem; margin: 2rem auto; }
.floors-chart__title { font-weight: 700; margin-bottom: 0.5em; }
.floors-plot { width: 100%; height: auto; font-size: 13px; }
.floors-plot text { fill: currentColor; }
.floors-plot__grid { stroke: #ddd; } .floors-plot__frame { stroke: #888; }
:is(polyline, line).floors-plot__series, .floors-plot__stroke { fill: none; stroke-width: 2; }
.floors-plot__direct { font-weight: 700; } .floors-plot__direct--narrow { display: none; }
.floors-chart__legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.2em 1.2em; }
.floors-chart__legend li { display: flex; align-items: center; gap: 0.4em; }
.floors-chart__outline { fill: none; stroke: currentColor; }
.floors-bars { list-style: none; padding: 0; }
.floors-bars__row { display: grid; grid-template-columns: 33% 1fr; gap: 0.5em; margin: 0.3em 0; }
.floors-bars__label { text-align: right; } .floors-bars__track { display: flex; align-items: center; gap: 0.4em; }
.floors-bars__bar { height: 1em; background: #1d4ed8;
  width: calc(var(--floors-bar) * (100% - var(--floors-bars-room))); }
.floors-bars__row--highlight .floors-bars__bar { background: #c2410c; }
""" + "".join(
    f".floors-plot__series--{i} {{ stroke: {c}; fill: {c}; }}\n"
    for i, c in enumerate(("#1d4ed8", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490"))
)


def show(figure: str, *, text: str = "", name: str = "figure") -> None:
    """Print a proof's figure the way its reader needs it.

    On a page (a block with `html="1"`, where the engine sets `FLOORS_OUTPUT=html`)
    the numbers are printed as escaped preformatted text followed by the figure. Run as a
    script in a terminal, the numbers are printed as they are and the figure is written to a
    file in the current directory: `<name>.html`, a page to open in a browser, or `<name>.svg`
    for a bare SVG.

    Args:
        figure: The figure, from [`line_chart`][pytorch_floors.plot.line_chart],
            [`bar_chart`][pytorch_floors.plot.bar_chart] or
            [`chart_figure`][pytorch_floors.plot.chart_figure], or an `<svg>` drawn by the proof.
        text: The numbers behind the figure, as plain text.
        name: File stem for the figure when run as a script.
    """
    bare = not figure.lstrip().startswith("<figure")
    if os.environ.get("FLOORS_OUTPUT") == "html":
        if text:
            sys.stdout.write(f'<pre class="floors-output"><code>{escape(text.rstrip())}</code></pre>\n')
        sys.stdout.write(f'<figure class="floors-figure">{figure}</figure>\n' if bare else f"{figure}\n")
        return
    if text:
        sys.stdout.write(text.rstrip() + "\n")
    if bare:
        path, content = f"{name}.svg", figure
    else:
        path = f"{name}.html"
        content = (
            f'<!doctype html><html lang="en"><meta charset="utf-8"><title>{escape(name)}</title>'
            f"<style>{_STANDALONE_CSS}</style>{figure}</html>\n"
        )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(content)
    sys.stdout.write(f"(figure written to {path})\n")
