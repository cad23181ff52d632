"""The chart helpers: an HTML figure around one SVG drawing, laid out for a phone's text size and a desktop's."""

import itertools
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytorch_floors import plot
from pytorch_floors.plot import DESKTOP_TEXT, PHONE_TEXT, Key, Series, bar_chart, chart_figure, line_chart, show, wrap

SVG = "{http://www.w3.org/2000/svg}"


def drawing(figure: str) -> ET.Element:
    """The chart's drawing (its `svg.floors-plot`), parsed out of the figure's HTML."""
    start = figure.index('<svg class="floors-plot"')
    return ET.fromstring(figure[start : figure.index("</svg>", start) + len("</svg>")])


def legend(figure: str) -> ET.Element:
    """The figure's legend (`ul.floors-chart__legend`), parsed; its keys are SVG without a namespace."""
    start = figure.index('<ul class="floors-chart__legend">')
    return ET.fromstring(figure[start : figure.index("</ul>", start) + len("</ul>")])


def classes(element: ET.Element) -> list[str]:
    return (element.get("class") or "").split()


def local(element: ET.Element) -> str:
    return element.tag.rsplit("}", 1)[-1]


def test_line_chart_is_a_figure_with_an_accessible_drawing_and_an_html_legend() -> None:
    figure = line_chart(
        [Series("a", [1, 10, 100], [5, 50, 500]), Series("b", [1, 100], [1, 1], points=False, dashed=True)],
        title="Per-call time",
        x_label="elements",
        y_label="time (µs)",
        log_x=True,
        log_y=True,
    )
    assert figure.startswith('<figure class="floors-figure floors-chart">')
    assert '<figcaption class="floors-chart__title">Per-call time</figcaption>' in figure
    root = drawing(figure)
    assert root.get("role") == "img"
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == "Per-call time"
    assert root.find(f"{SVG}desc") is not None
    assert root.get("aria-labelledby") == f"{title.get('id')} {title.get('id', '').replace('-title', '-desc')}"
    # Three data points of series "a" in the drawing; series "b" has none. The legend's key for "a" is the fourth.
    assert len(root.findall(f"{SVG}circle")) == 3
    assert len(root.findall(f"{SVG}polyline")) == 2
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "elements" in texts and "time (µs)" in texts and "100" in texts
    assert "Per-call time" not in texts, "the title is the figure's caption, which wraps"
    entries = legend(figure).findall("li")
    assert [entry.findtext("span") for entry in entries] == ["a", "b"]
    assert len([e for e in legend(figure).iter() if local(e) == "circle"]) == 1


def test_line_chart_rejects_bad_data() -> None:
    with pytest.raises(ValueError, match="log axis"):
        line_chart([Series("a", [1, 2], [0, -1])], title="t", x_label="x", y_label="y", log_y=True)
    with pytest.raises(ValueError, match="2 x values but 1"):
        line_chart([Series("a", [1, 2], [1])], title="t", x_label="x", y_label="y")
    with pytest.raises(ValueError):
        line_chart([], title="t", x_label="x", y_label="y")
    with pytest.raises(ValueError, match="no room"):
        line_chart([Series("a", [1, 2], [1, 2])], title="t", x_label="x", y_label="y", height=120)


def test_a_figures_ids_come_from_what_it_draws_not_from_a_counter() -> None:
    """The same chart drawn twice, here or in another process, is the same markup; another chart has other ids."""
    code = (
        "from pytorch_floors.plot import Series, line_chart\n"
        "print(line_chart([Series('a', [1, 2], [3, 4])], title='t', x_label='x', y_label='y'), end='')"
    )
    first = line_chart([Series("a", [1, 2], [3, 4])], title="t", x_label="x", y_label="y")
    assert line_chart([Series("a", [1, 2], [3, 4])], title="t", x_label="x", y_label="y") == first
    elsewhere = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert elsewhere.stdout == first
    other = line_chart([Series("a", [1, 2], [3, 5])], title="t", x_label="x", y_label="y")
    assert drawing(other).get("aria-labelledby") != drawing(first).get("aria-labelledby")
    bars = [bar_chart([("a", v)], title="t", value_label="v") for v in (1.0, 2.0)]
    assert len({re.search(r'aria-describedby="([^"]+)"', b)[1] for b in bars}) == 2  # type: ignore[index]
    assert not any(isinstance(value, itertools.count) for value in vars(plot).values())


def test_bar_chart_is_a_list_of_labels_bars_and_values_to_scale() -> None:
    figure = bar_chart(
        [("big", 200.0), ("small", 50.0), ("none", 0.0)],
        title="sizes",
        value_label="MB",
        description="Sizes of things.",
        value_format="{:.0f} MB",
        highlight=["small"],
    )
    rows = re.findall(
        r'<li class="([^"]+)"><span class="floors-bars__label">([^<]+)</span>.*?--floors-bar: ([\d.]+)'
        r'.*?<span class="floors-bars__value">([^<]+)</span>',
        figure,
    )
    assert [(label, value) for _, label, _, value in rows] == [("big", "200 MB"), ("small", "50 MB"), ("none", "0 MB")]
    shares = [float(share) for _, _, share, _ in rows]
    assert shares == [pytest.approx(1.0), pytest.approx(0.25), 0.0]
    assert ["highlight" in css for css, _, _, _ in rows] == [False, True, False]
    assert '<figcaption class="floors-chart__title">sizes</figcaption>' in figure
    ident = re.search(r'aria-describedby="([^"]+)"', figure)
    assert ident is not None and f'<p id="{ident[1]}" hidden>Sizes of things.</p>' in figure
    assert '<p class="floors-chart__axis">MB</p>' in figure
    with pytest.raises(ValueError):
        bar_chart([("x", -1.0)], title="t", value_label="v")
    with pytest.raises(ValueError):
        bar_chart([], title="t", value_label="v")


def test_show_prints_a_figure_on_a_page_and_writes_a_file_in_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    figure = bar_chart([("a", 1.0)], title="t", value_label="v")
    bare = '<svg class="floors-plot" role="img" viewBox="0 0 10 10"><title>t</title></svg>'
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLOORS_OUTPUT", "html")
    show(figure, text="a <= 1", name="fig")
    show(bare, name="graph")
    page = capsys.readouterr().out
    assert "a &lt;= 1" in page and f"{figure}\n" in page
    assert f'<figure class="floors-figure">{bare}</figure>' in page, "a bare drawing is put in a figure"
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("FLOORS_OUTPUT", "text")
    show(figure, text="a <= 1", name="fig")
    show(bare, name="graph")
    terminal = capsys.readouterr().out
    assert "a <= 1" in terminal and "<svg" not in terminal and "<figure" not in terminal
    written = (tmp_path / "fig.html").read_text()
    assert written.startswith("<!doctype html>") and figure in written and "<style>" in written
    assert (tmp_path / "graph.svg").read_text() == bare


def _marker_shape(element: ET.Element) -> tuple[object, ...]:
    """A marker's shape, whatever its position: its tag and its coordinates relative to the first."""
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", element.get("points") or element.get("d") or "")]
    xs, ys = numbers[0::2], numbers[1::2]
    relative = tuple(round(v - xs[0], 1) for v in xs) + tuple(round(v - ys[0], 1) for v in ys) if numbers else ()
    return (local(element), element.get("r"), *relative)


def _series_shapes(root: ET.Element) -> dict[str, set[tuple[object, ...]]]:
    shapes: dict[str, set[tuple[object, ...]]] = {}
    for element in root.iter():
        series = [c for c in classes(element) if c.startswith("floors-plot__series--")]
        if series and local(element) != "line" and local(element) != "polyline":
            shapes.setdefault(series[0], set()).add(_marker_shape(element))
    return shapes


def test_series_differ_by_marker_and_dash_not_colour_alone() -> None:
    measured = [Series(f"m{i}", [1, 2, 3], [i + 1, i + 2, i + 3], line=False) for i in range(6)]
    figure = line_chart(measured, title="t", x_label="x", y_label="y")
    drawn, keyed = _series_shapes(drawing(figure)), _series_shapes(legend(figure))
    assert all(len(v) == 1 for v in drawn.values()), "each series draws one marker shape"
    assert drawn == keyed, "the legend's key draws the series' own marker"
    assert len({next(iter(v)) for v in drawn.values()}) == 6, drawn
    bounds = [Series(f"b{i}", [1, 3], [10, 20 + i], points=False, dashed=True) for i in range(2)]
    root = drawing(line_chart(bounds, title="t", x_label="x", y_label="y"))
    dashes = [p.get("stroke-dasharray") for p in root.iter(f"{SVG}polyline")]
    assert len(set(dashes)) == 2 and None not in dashes


def test_legend_keys_show_each_series_marker_and_dash() -> None:
    figure = line_chart(
        [Series("measured", [1, 2], [1, 2]), Series("model", [1, 2], [2, 3], points=False, dashed=True)],
        title="t",
        x_label="x",
        y_label="y",
    )
    keys = [e for e in legend(figure).iter() if "floors-plot__key" in classes(e)]
    assert len(keys) == 2
    assert keys[0].get("stroke-dasharray") is None and keys[1].get("stroke-dasharray")
    dashed_line = [p for p in drawing(figure).iter(f"{SVG}polyline") if p.get("stroke-dasharray")]
    assert dashed_line[0].get("stroke-dasharray") == keys[1].get("stroke-dasharray")


def test_chart_figure_titles_keys_and_notes_a_drawing_of_a_proofs_own() -> None:
    figure = chart_figure(
        "<svg/>",
        title="Lanes & bars",
        keys=[Key("busy", 2), Key("waits", 4, opacity=0.3), Key("empty", None, mark="outline", dash="4 3")],
        notes=["A model, not a measurement."],
        kind="lanes",
    )
    assert figure.startswith('<figure class="floors-figure floors-chart floors-chart--lanes">')
    assert '<figcaption class="floors-chart__title">Lanes &amp; bars</figcaption><svg/>' in figure
    entries = legend(figure).findall("li")
    assert [e.findtext("span") for e in entries] == ["busy", "waits", "empty"]
    boxes = [next(e.iter("rect")) for e in entries]
    assert "floors-plot__series--2" in classes(boxes[0]) and boxes[1].get("fill-opacity") == "0.3"
    assert boxes[2].get("stroke-dasharray") == "4 3"
    assert all(key.get("aria-hidden") == "true" for e in entries for key in e.iter("svg"))
    assert figure.endswith('<p class="floors-chart__note">A model, not a measurement.</p></figure>')


def test_wrap_breaks_at_spaces_within_the_width() -> None:
    text = "arithmetic intensity (FLOP per byte moved) of every kernel measured here"
    lines = wrap(text, 300)
    assert " ".join(lines) == text and len(lines) > 1
    assert all(plot.text_width(line) <= 300 for line in lines)
    assert wrap("short", 300) == ["short"]
    assert wrap("a_name_longer_than_the_room", 20) == ["a_name_longer_than_the_room"]
    assert plot.text_width("W", bold=True) > plot.text_width("W") > plot.text_width("i")


# The layout's text boxes, as plot.py estimates them: a box per text element at a given size.
_ASCENT, _DESCENT = 0.92, 0.26


def _text_boxes(root: ET.Element, size: float, shown: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Each text a figure `shown` ("wide" or "narrow") draws, at `size` units: (text, (left, top, right, bottom))."""
    hidden = {
        "wide": {"floors-plot__direct--narrow"},
        "narrow": {"floors-plot__direct--wide", "floors-plot__tick--minor"},
    }
    boxes = []
    for text in root.iter(f"{SVG}text"):
        if hidden[shown] & set(classes(text)):
            continue
        words = text.text or ""
        bold = bool({"floors-plot__direct", "floors-plot__title"} & set(classes(text)))
        width = plot.text_width(words, size, bold=bold)
        x = float(text.get("x") or 0)
        y = float(text.get("y") or 0) + float((text.get("dy") or "0em").removesuffix("em")) * size
        left = {"start": x, "middle": x - width / 2, "end": x - width}[text.get("text-anchor") or "start"]
        baseline = text.get("dominant-baseline") or "alphabetic"
        top = {
            "hanging": y,
            "central": y - (_ASCENT + _DESCENT) / 2 * size,
            "text-after-edge": y - (_ASCENT + _DESCENT) * size,
        }.get(baseline, y - _ASCENT * size)
        boxes.append((words, (left, top, left + width, top + (_ASCENT + _DESCENT) * size)))
    return boxes


CHARTS = {
    "log-log, three series": lambda: line_chart(
        [
            Series("x.t(): a view", [1e2, 1e4, 1e6, 1e8], [1.1, 1.2, 1.2, 1.3]),
            Series("x.clone(): a copy", [1e2, 1e4, 1e6, 1e8], [1.5, 4, 300, 3e4]),
            Series("x.t().contiguous(): a transposing copy", [1e2, 1e4, 1e6, 1e8], [2, 9, 900, 9e4]),
        ],
        title="Cost of a view versus a copy as the tensor grows",
        x_label="tensor size (bytes, log scale)",
        y_label="time per call (µs, log scale)",
        log_x=True,
        log_y=True,
    ),
    "linear, a long y label": lambda: line_chart(
        [Series("batch-dependent", [1, 64, 256, 1024], [0.1, 0.5, 2, 8]), Series("parameters", [1, 1024], [3, 3])],
        title="Bytes saved",
        x_label="batch size (samples)",
        y_label="GFLOP/s (2 n³ per call / time), the rate of one thread of this machine's cores",
    ),
    "nine decades": lambda: line_chart(
        [Series("read", [1e3, 1e5, 1e7, 1e9, 1e11], [150, 110, 20, 5, 5])],
        title="Read bandwidth",
        x_label="buffer size (bytes, log scale)",
        y_label="read bandwidth (GB/s)",
        log_x=True,
    ),
}


@pytest.mark.parametrize("name", CHARTS)
@pytest.mark.parametrize(("shown", "size"), [("narrow", PHONE_TEXT), ("wide", DESKTOP_TEXT)])
def test_every_text_fits_inside_the_drawing_and_apart_at_its_size(name: str, shown: str, size: float) -> None:
    """At a phone's text size (and the fewer labels a phone shows) and at the desktop's: every text lies
    inside the drawing and no two overlap, as plot.py measures text."""
    root = drawing(CHARTS[name]())
    _, _, width, height = (float(v) for v in (root.get("viewBox") or "").split())
    boxes = _text_boxes(root, size, shown)
    outside = [(t, b) for t, b in boxes if b[0] < 0 or b[1] < 0 or b[2] > width or b[3] > height]
    assert outside == [], outside
    overlapping = [
        (a, b)
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
        if min(box_a[2], box_b[2]) - max(box_a[0], box_b[0]) > 0.5
        and min(box_a[3], box_b[3]) - max(box_a[1], box_b[1]) > 0.5
    ]
    assert overlapping == [], overlapping


def test_a_phone_gets_fewer_tick_labels_where_they_would_crowd() -> None:
    root = drawing(CHARTS["nine decades"]())
    ticks = [
        t for t in root.iter(f"{SVG}text") if "floors-plot__tick" in classes(t) and t.get("text-anchor") == "middle"
    ]
    minor = [t for t in ticks if "floors-plot__tick--minor" in classes(t)]
    assert ticks and 0 < len(minor) < len(ticks), [(t.text, classes(t)) for t in ticks]
    assert "floors-plot__tick--minor" not in classes(ticks[0]), "the axis' first value keeps its label"


def test_each_series_is_named_by_its_lines_end_where_the_name_fits() -> None:
    # Three series ending at nearly the same point and one ending far below: each name that is drawn sits
    # by its own line's end, none over another; the phone's set is a subset, sized for its larger text.
    series = [Series(f"series {i}", [1, 2, 3], [5, 8, 10 + i * 0.01]) for i in range(3)]
    series.append(Series("low", [1, 2], [1, 2], dashed=True))
    figure = line_chart(series, title="t", x_label="x", y_label="y")
    root = drawing(figure)
    ends = {}
    for s, polyline in zip(series, root.iter(f"{SVG}polyline"), strict=True):
        x, y = polyline.get("points", "").split()[-1].split(",")
        ends[s.name] = (float(x), float(y))
    for shown, size in (("wide", DESKTOP_TEXT), ("narrow", PHONE_TEXT)):
        labels = [t for t in root.iter(f"{SVG}text") if f"floors-plot__direct--{shown}" in classes(t)]
        names = [t.text or "" for t in labels]
        assert len(names) == len(set(names)) and set(names) <= set(ends), names
        boxes = {words: box for words, box in _text_boxes(root, size, shown) if words in names}
        for words, box in boxes.items():
            ex, ey = ends[words]
            gap_x = max(box[0] - ex, ex - box[2], 0)
            gap_y = max(box[1] - ey, ey - box[3], 0)
            assert gap_x <= 10 and gap_y <= 3 * size, (shown, words, box, (ex, ey))
        assert not any(
            min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])
            for a, b in itertools.combinations(boxes.values(), 2)
        ), boxes
        if shown == "wide":
            assert len(names) >= 3, "on a desktop most series are named by their lines"
    alone = line_chart([Series("only", [1, 2], [1, 2])], title="t", x_label="x", y_label="y")
    assert "floors-plot__direct" not in alone, "a single series is named by the legend and title"


@pytest.mark.parametrize(
    ("end", "axis"),
    [(315.0, (400.0, 100.0)), (6.0, (6.0, 1.0)), (0.37, (0.4, 0.1)), (1.0, (1.0, 0.2)), (1234.0, (1500.0, 500.0))],
)
def test_a_drawn_axis_steps_by_round_values(end: float, axis: tuple[float, float]) -> None:
    # Floor 8's worker-stream axis stepped by 63 ms (0, 63, 126, ...): a fifth of what it measured.
    axis_end, step = plot.nice_axis(end)
    assert (axis_end, step) == pytest.approx(axis)
    assert axis_end >= end and round(axis_end / step) <= 6
    assert step / 10 ** math.floor(math.log10(step)) in {1, 2, 5}


def test_a_log_axis_writes_its_ticks_in_one_notation() -> None:
    # A log axis read "100, 1000, 1e4": two notations side by side.
    series = [Series("rate", [10, 100, 1000, 20000], [1, 2, 3, 4])]
    chart = line_chart(series, title="t", x_label="n", y_label="r", log_x=True)
    ticks = re.findall(r'<text class="floors-plot__tick[^"]*"[^>]*>([^<]*)</text>', chart)
    powers = [t for t in ticks if t.startswith("1e")]
    assert "1e4" in powers and "1000" not in ticks and "1e3" in powers
    linear = line_chart([Series("rate", [1, 2, 3], [10, 100, 1000])], title="t", x_label="n", y_label="r")
    assert "1000" in re.findall(r'<text class="floors-plot__tick[^"]*"[^>]*>([^<]*)</text>', linear)


def test_a_scatter_is_named_by_its_legend_not_by_a_label_beside_some_point() -> None:
    # Floor 6's roofline wrote "the program's Linear" beside the n = 16 matmul's marker.
    series = [
        Series("roof", [0.1, 1, 10, 100], [1, 10, 50, 50], points=False),
        Series("matmul", [20, 40, 80], [30, 40, 45], line=False),
        Series("the program's Linear", [5], [8], line=False),
    ]
    chart = line_chart(series, title="t", x_label="x", y_label="y", log_x=True, log_y=True)
    named = set(re.findall(r'<text class="floors-plot__direct[^"]*"[^>]*>([^<]*)</text>', chart))
    assert named <= {"roof"} and "the program&#x27;s Linear" not in named
    assert "the program&#x27;s Linear" in chart and "matmul" in chart, "both are in the legend"
