import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytorch_floors.plot import Series, bar_chart, line_chart, show

SVG = "{http://www.w3.org/2000/svg}"


def test_line_chart_is_valid_accessible_svg() -> None:
    svg = line_chart(
        [Series("a", [1, 10, 100], [5, 50, 500]), Series("b", [1, 100], [1, 1], points=False, dashed=True)],
        title="Per-call time",
        x_label="elements",
        y_label="time (µs)",
        log_x=True,
        log_y=True,
    )
    root = ET.fromstring(svg)
    assert root.get("role") == "img"
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == "Per-call time"
    # Three data points and the legend's key for series "a"; series "b" has no points.
    assert len(root.findall(f"{SVG}circle")) == 4
    assert len(root.findall(f"{SVG}polyline")) == 2
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "elements" in texts and "time (µs)" in texts
    assert "100" in texts


def test_line_chart_rejects_bad_data() -> None:
    with pytest.raises(ValueError, match="log axis"):
        line_chart([Series("a", [1, 2], [0, -1])], title="t", x_label="x", y_label="y", log_y=True)
    with pytest.raises(ValueError, match="2 x values but 1"):
        line_chart([Series("a", [1, 2], [1])], title="t", x_label="x", y_label="y")
    with pytest.raises(ValueError):
        line_chart([], title="t", x_label="x", y_label="y")


def test_bar_chart_lengths_are_to_scale() -> None:
    svg = bar_chart([("big", 200.0), ("small", 50.0)], title="sizes", value_label="MB", highlight=["small"])
    root = ET.fromstring(svg)
    bars = [r for r in root.iter(f"{SVG}rect") if "floors-plot__bar" in (r.get("class") or "")]
    widths = [float(r.get("width") or 0) for r in bars]
    assert widths[0] == pytest.approx(4 * widths[1])
    assert "highlight" in (bars[1].get("class") or "")
    with pytest.raises(ValueError):
        bar_chart([("x", -1.0)], title="t", value_label="v")


def test_show_inlines_on_a_page_and_writes_a_file_in_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    svg = bar_chart([("a", 1.0)], title="t", value_label="v")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLOORS_OUTPUT", "html")
    show(svg, text="a <= 1", name="fig")
    page = capsys.readouterr().out
    assert "a &lt;= 1" in page and '<figure class="floors-figure"><svg' in page
    assert not (tmp_path / "fig.svg").exists()
    monkeypatch.setenv("FLOORS_OUTPUT", "text")
    show(svg, text="a <= 1", name="fig")
    terminal = capsys.readouterr().out
    assert "a <= 1" in terminal and "<svg" not in terminal
    assert (tmp_path / "fig.svg").read_text() == svg


def _marker_shape(element: ET.Element) -> tuple[object, ...]:
    """A marker's shape, whatever its position: its tag and its coordinates relative to the first."""
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", element.get("points") or element.get("d") or "")]
    xs, ys = numbers[0::2], numbers[1::2]
    relative = tuple(round(v - xs[0], 1) for v in xs) + tuple(round(v - ys[0], 1) for v in ys) if numbers else ()
    return (element.tag, element.get("width"), *relative)


def test_series_differ_by_marker_and_dash_not_colour_alone() -> None:
    measured = [Series(f"m{i}", [1, 2, 3], [i + 1, i + 2, i + 3], line=False) for i in range(6)]
    root = ET.fromstring(line_chart(measured, title="t", x_label="x", y_label="y"))
    shapes: dict[str, set[tuple[object, ...]]] = {}
    for element in root.iter():
        series = [c for c in (element.get("class") or "").split() if c.startswith("floors-plot__series--")]
        if series:
            shapes.setdefault(series[0], set()).add(_marker_shape(element))
    assert all(len(v) == 1 for v in shapes.values()), "each series draws one marker shape, legend included"
    assert len({next(iter(v)) for v in shapes.values()}) == 6, shapes
    bounds = [Series(f"b{i}", [1, 3], [10, 20 + i], points=False, dashed=True) for i in range(2)]
    root = ET.fromstring(line_chart(bounds, title="t", x_label="x", y_label="y"))
    dashes = [p.get("stroke-dasharray") for p in root.iter(f"{SVG}polyline")]
    assert len(set(dashes)) == 2 and None not in dashes


def test_legend_keys_show_each_series_marker_and_dash() -> None:
    svg = line_chart(
        [Series("measured", [1, 2], [1, 2]), Series("model", [1, 2], [2, 3], points=False, dashed=True)],
        title="t",
        x_label="x",
        y_label="y",
    )
    root = ET.fromstring(svg)
    keys = [e for e in root.iter(f"{SVG}line") if "floors-plot__key" in (e.get("class") or "")]
    assert len(keys) == 2
    assert keys[0].get("stroke-dasharray") is None and keys[1].get("stroke-dasharray")
    dashed_line = [p for p in root.iter(f"{SVG}polyline") if p.get("stroke-dasharray")]
    assert dashed_line[0].get("stroke-dasharray") == keys[1].get("stroke-dasharray")


@pytest.mark.parametrize("kind", ["line", "bar"])
def test_text_stays_inside_the_drawing_with_room_for_phone_sized_text(kind: str) -> None:
    # The stylesheet draws chart text at up to 21 units on a phone; every baseline must sit
    # at least that far inside the top of the drawing and within its bottom edge.
    if kind == "line":
        svg = line_chart(
            [Series("a", [1, 10], [1, 10]), Series("b", [1, 10], [2, 3])], title="t", x_label="x", y_label="y"
        )
    else:
        svg = bar_chart([("a", 1.0), ("b", 2.0)], title="t", value_label="v")
    root = ET.fromstring(svg)
    _, _, width, height = (float(v) for v in (root.get("viewBox") or "").split())
    for text in root.iter(f"{SVG}text"):
        if text.get("transform"):
            continue
        assert 16 <= float(text.get("y") or 0) <= height, (text.text, text.get("y"), height)
        assert 0 <= float(text.get("x") or 0) <= width


def test_each_series_is_named_at_its_lines_end_without_overlapping_labels() -> None:
    # Three series ending at nearly the same point, and one ending far below: the labels of the
    # first three must be pushed apart, and each label sits by its own series' last point.
    series = [Series(f"series {i}", [1, 2, 3], [5, 8, 10 + i * 0.01]) for i in range(3)]
    series.append(Series("low", [1, 2], [1, 2], dashed=True))
    root = ET.fromstring(line_chart(series, title="t", x_label="x", y_label="y"))
    labels = {t.text or "": t for t in root.iter(f"{SVG}text") if "floors-plot__direct" in (t.get("class") or "")}
    assert sorted(labels) == sorted(s.name for s in series), "one direct label per series, besides the legend"
    ys = sorted(float(t.get("y") or 0) for t in labels.values())
    assert all(b - a >= 20 for a, b in itertools.pairwise(ys)), f"labels overlap: {ys}"
    ends = {p.get("points", "").split()[-1] for p in root.iter(f"{SVG}polyline")}
    for label in labels.values():
        x = float(label.get("x") or 0)
        near = [e for e in ends if abs(float(e.split(",")[0]) - 6 - x) < 1 or label.get("text-anchor") == "start"]
        assert near, (label.text, x, ends)
    low = labels["low"]
    assert float(low.get("y") or 0) > ys[2], "the series that ends lowest is labelled lowest"
    alone = line_chart([Series("only", [1, 2], [1, 2])], title="t", x_label="x", y_label="y")
    assert "floors-plot__direct" not in alone, "a single series is named by the legend and title"
