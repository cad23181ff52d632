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
    assert len(root.findall(f"{SVG}circle")) == 3
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
