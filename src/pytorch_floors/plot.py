"""Small SVG charts for the proofs, drawn at build time with no JavaScript.

Text and axes use `currentColor` and series use CSS classes, so a chart follows
the page's light or dark palette (the colours live in `docs/stylesheets/floors.css`).
Every chart has a `<title>` and a `<desc>` for screen readers.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import count

__all__ = ["Series", "bar_chart", "line_chart", "show"]

_ids = count(1)

# Series are told apart by shape and dash as well as colour, so a chart reads in greyscale
# and for readers who cannot tell the palette's colours apart.
_MARKERS = ("circle", "square", "triangle", "diamond", "cross", "plus")
_DASHES = ("6 4", "2 4", "10 4 2 4", "1 3", "12 3", "4 2 1 2")

# Layout room for text, in SVG units. On a phone the stylesheet draws chart text at up to
# 21 units (a 640-unit chart drawn 338 px wide renders it at 11 px), so margins fit that size.
_ROW = 26


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


def _tick_label(value: float) -> str:
    if value == 0:
        return "0"
    exponent = math.log10(abs(value))
    if abs(value) >= 1e4 or abs(value) < 1e-3:
        if exponent == int(exponent):
            return f"1e{int(exponent)}"
        return f"{value:.0e}"
    return f"{value:g}"


def _frame(width: int, height: int, title: str, description: str) -> tuple[str, str]:
    # Each proof runs in its own process, so a counter alone would repeat across the figures of a page.
    digest = hashlib.sha1(f"{title}\0{description}".encode()).hexdigest()[:8]
    ident = f"floors-plot-{digest}-{next(_ids)}"
    head = (
        f'<svg class="floors-plot" role="img" viewBox="0 0 {width} {height}" '
        f'aria-labelledby="{ident}-title {ident}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-title">{escape(title)}</title><desc id="{ident}-desc">{escape(description)}</desc>'
    )
    return head, "</svg>"


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


_LABEL_GAP = 22
"""Vertical room of one direct label, in SVG units: the text's size on a phone (floors.css) plus 1."""
_CHAR_WIDTH = 12.6
"""A generous width of one character of a direct label at its phone size, in SVG units."""


def _direct_labels(
    ends: list[tuple[str, float, float]], left: float, top: float, plot_w: float, plot_h: float
) -> list[str]:
    """Name each series at its line's end, the labels pushed apart vertically so none overlap.

    `ends` holds `(name, x, y)` per series, `(x, y)` its last point. A label goes right of the point
    when it fits inside the plot, else it ends just left of the point, above it; one too long for
    that starts at the plot's left edge. A single series gets none: the legend and title name it.
    """
    if len(ends) < 2:
        return []
    right = left + plot_w
    placed: list[tuple[float, str, float, bool]] = []
    for name, x, y in sorted(ends, key=lambda end: end[2]):
        after = x + 8 + _CHAR_WIDTH * len(name) <= right
        want = max(y + 5 if after else y - 10, top + _LABEL_GAP - 4)
        if placed:
            want = max(want, placed[-1][0] + _LABEL_GAP)
        placed.append((want, name, x, after))
    overflow = max(placed[-1][0] - (top + plot_h - 6), 0)
    parts = []
    for wanted, name, x, after in placed:
        y = wanted - overflow
        if after:
            anchor, tx = "start", x + 8
        elif x - 6 - _CHAR_WIDTH * len(name) >= left:
            anchor, tx = "end", x - 6
        else:
            anchor, tx = "start", left + 6
        parts.append(
            f'<text class="floors-plot__direct" x="{tx:.1f}" y="{y:.1f}" text-anchor="{anchor}">{escape(name)}</text>'
        )
    return parts


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
    """Draw one or more series on shared axes.

    Args:
        series: The data series; each gets its own colour, marker shape (dashed series: dash
            pattern) and legend entry, and is named at its line's end (a direct label), so
            series differ by more than colour.
        title: Chart title, shown above the plot and read by screen readers.
        x_label: X-axis label, with its unit.
        y_label: Y-axis label, with its unit.
        description: A sentence describing what the chart shows (for screen readers).
        log_x: Use a logarithmic x axis.
        log_y: Use a logarithmic y axis.
        width: Width of the drawing in SVG units.
        height: Height of the drawing in SVG units.

    Returns:
        An inline `<svg>` element.

    Raises:
        ValueError: If there is no data, lengths differ, or a log axis gets a value <= 0.
    """
    if not series or not any(len(s.xs) for s in series):
        raise ValueError("line_chart needs at least one non-empty series")
    for s in series:
        if len(s.xs) != len(s.ys):
            raise ValueError(f"series {s.name!r}: {len(s.xs)} x values but {len(s.ys)} y values")
    left, right, top, bottom = 96, 20, 40, 72
    legend_height = _ROW * len(series)
    plot_w, plot_h = width - left - right, height - top - bottom
    x_axis = _axis([x for s in series for x in s.xs], log_x, include_zero=False)
    y_axis = _axis([y for s in series for y in s.ys], log_y, include_zero=not log_y)

    def px(x: float) -> float:
        return left + x_axis.scale(x) * plot_w

    def py(y: float) -> float:
        return top + (1 - y_axis.scale(y)) * plot_h

    head, tail = _frame(width, height + legend_height, title, description or title)
    parts = [head, f'<text class="floors-plot__title" x="{left}" y="22">{escape(title)}</text>']
    for tick in x_axis.ticks:
        x = px(tick)
        parts.append(f'<line class="floors-plot__grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}"/>')
        parts.append(
            f'<text class="floors-plot__tick" x="{x:.1f}" y="{top + plot_h + 22}" text-anchor="middle">'
            f"{_tick_label(tick)}</text>"
        )
    for tick in y_axis.ticks:
        y = py(tick)
        parts.append(f'<line class="floors-plot__grid" x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}"/>')
        parts.append(
            f'<text class="floors-plot__tick" x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{_tick_label(tick)}</text>"
        )
    parts.append(
        f'<rect class="floors-plot__frame" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none"/>'
    )
    parts.append(
        f'<text class="floors-plot__label" x="{left + plot_w / 2}" y="{top + plot_h + 52}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text class="floors-plot__label" transform="translate(20 {top + plot_h / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    dashes = iter(_DASHES)
    ends: list[tuple[str, float, float]] = []
    for index, s in enumerate(series):
        css = f"floors-plot__series floors-plot__series--{index % 6}"
        marker = _MARKERS[index % len(_MARKERS)]
        dash = next(dashes, _DASHES[-1]) if s.dashed else None
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        coords = [(px(x), py(y)) for x, y in zip(s.xs, s.ys, strict=True)]
        if s.line and len(coords) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            parts.append(f'<polyline class="{css}" points="{path}" fill="none"{dash_attr}/>')
        if s.points:
            parts.extend(_marker(marker, x, y, css) for x, y in coords)
        if coords:
            ends.append((s.name, *coords[-1]))
        ly = height + _ROW * index + 8
        if s.line:
            parts.append(
                f'<line class="{css} floors-plot__key" x1="{left}" y1="{ly}" x2="{left + 28}" y2="{ly}"{dash_attr}/>'
            )
        if s.points:
            parts.append(_marker(marker, left + 14, ly, css))
        parts.append(f'<text class="floors-plot__legend" x="{left + 36}" y="{ly + 6}">{escape(s.name)}</text>')
    parts.extend(_direct_labels(ends, left, top, plot_w, plot_h))
    parts.append(tail)
    return "".join(parts)


def bar_chart(
    bars: Sequence[tuple[str, float]],
    *,
    title: str,
    value_label: str,
    description: str = "",
    value_format: str = "{:,.0f}",
    highlight: Sequence[str] = (),
    width: int = 640,
) -> str:
    """Draw horizontal bars whose lengths are to scale (linear, starting at zero).

    Args:
        bars: `(label, value)` pairs, drawn top to bottom.
        title: Chart title.
        value_label: What the values are, with unit (shown under the bars).
        description: A sentence for screen readers.
        value_format: Format for the value printed at the end of each bar.
        highlight: Labels of bars drawn in the accent colour.
        width: Width of the drawing in SVG units.

    Returns:
        An inline `<svg>` element.

    Raises:
        ValueError: If there are no bars or a value is negative.
    """
    if not bars:
        raise ValueError("bar_chart needs at least one bar")
    if any(value < 0 for _, value in bars):
        raise ValueError("bar_chart draws lengths; values must be >= 0")
    label_w, right, top, row = 210, 130, 40, 30
    height = top + row * len(bars) + 44
    peak = max(value for _, value in bars) or 1.0
    head, tail = _frame(width, height, title, description or title)
    parts = [head, f'<text class="floors-plot__title" x="8" y="22">{escape(title)}</text>']
    span = width - label_w - right
    for index, (label, value) in enumerate(bars):
        y = top + index * row
        length = max(value / peak * span, 0.5 if value > 0 else 0)
        css = "floors-plot__bar floors-plot__bar--highlight" if label in highlight else "floors-plot__bar"
        parts.append(
            f'<text class="floors-plot__tick" x="{label_w - 8}" y="{y + 19}" text-anchor="end">{escape(label)}</text>'
        )
        parts.append(f'<rect class="{css}" x="{label_w}" y="{y + 5}" width="{length:.2f}" height="{row - 10}"/>')
        parts.append(
            f'<text class="floors-plot__tick" x="{label_w + length + 6:.1f}" y="{y + 19}">'
            f"{escape(value_format.format(value))}</text>"
        )
    parts.append(
        f'<text class="floors-plot__label" x="{label_w + span / 2}" y="{height - 10}" text-anchor="middle">'
        f"{escape(value_label)}</text>"
    )
    parts.append(tail)
    return "".join(parts)


def show(svg: str, *, text: str = "", name: str = "figure") -> None:
    """Print a proof's figure the way its reader needs it.

    On a page (a block with `html="1"`, where the engine sets `FLOORS_OUTPUT=html`)
    the numbers are printed as escaped preformatted text followed by the inline SVG.
    Run as a script in a terminal, the numbers are printed as they are and the SVG is
    written to `<name>.svg` in the current directory.

    Args:
        svg: The figure, from [`line_chart`][pytorch_floors.plot.line_chart] or
            [`bar_chart`][pytorch_floors.plot.bar_chart] or drawn by the proof.
        text: The numbers behind the figure, as plain text.
        name: File stem for the SVG when run as a script.
    """
    if os.environ.get("FLOORS_OUTPUT") == "html":
        if text:
            sys.stdout.write(f'<pre class="floors-output"><code>{escape(text.rstrip())}</code></pre>\n')
        sys.stdout.write(f'<figure class="floors-figure">{svg}</figure>\n')
        return
    if text:
        sys.stdout.write(text.rstrip() + "\n")
    path = f"{name}.svg"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(svg)
    sys.stdout.write(f"(figure written to {path})\n")
