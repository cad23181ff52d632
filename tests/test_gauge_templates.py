"""The depth gauge's HTML comes from the package's templates (`gauge*.html`), never from strings in `gauge.py`.

The house rule: the package writes HTML through its one Jinja environment (`render.templates`), which
escapes every value, so a string in `render/gauge.py` holding a tag is a way around the escaping.
"""

from __future__ import annotations

import ast
import re

import pytest

from conftest import ROOT
from pytorch_floors.floors import COMPILER, FLOORS, Elevator, Floor, Stop
from pytorch_floors.render import gauge
from pytorch_floors.render.gauge import render_depth_bar, render_elevator, render_elevator_bar, render_gauge

GAUGE = ROOT / "src" / "pytorch_floors" / "render" / "gauge.py"

TAG = re.compile(r"<[a-z][a-z0-9]*[\s>/]|</[a-z]")
"""An opening or closing HTML tag (`<nav `, `<li>`, `</a`), not a `<` in prose or a comparison."""

ODD = "<b>&"
"""A title that means markup if it is not escaped."""


def docstrings(tree: ast.Module) -> set[int]:
    """The ids of the module's, classes' and functions' docstring nodes: they name elements, they write none."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def html_strings(tree: ast.Module) -> list[tuple[int, str]]:
    """Each string literal or f-string of the module that holds an HTML tag, and its line; docstrings aside."""
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            # An f-string's literal parts, its placeholders as `{}`; the parts are not counted again on their own.
            skip.update(id(part) for part in node.values)
            text = "".join(
                part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else "{}"
                for part in node.values
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        else:
            continue
        if TAG.search(text):
            found.append((node.lineno, text))
    return found


def test_html_strings_finds_tags_in_strings_and_f_strings() -> None:
    source = '"""Returns a `<nav>`."""\nA = f\'<li class="{css}">\'\nB = "</a>"\nC = "a < b, x<y"\nD = f"{n}<{m}"\n'
    assert [line for line, _ in html_strings(ast.parse(source))] == [2, 3]


def test_gauge_py_holds_no_html() -> None:
    """`render/gauge.py` prepares data; every tag it writes is in a `gauge*.html` template."""
    found = html_strings(ast.parse(GAUGE.read_text(encoding="utf-8"), str(GAUGE)))
    assert not found, f"render/gauge.py builds HTML in strings; move it to a gauge*.html template: {found}"


@pytest.fixture
def odd_registry(monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[Floor, ...], Elevator]:
    """The registry with floor 2's title and a stop's words made of markup, as the gauge reads it."""
    odd = tuple(Floor(f.number, f.slug, ODD, f.summary, ODD, f.summary_zh) if f.number == 2 else f for f in FLOORS)
    stops = tuple(Stop(s.floor, ODD, ODD, s.section, ODD) for s in COMPILER.stops)
    elevator = Elevator(COMPILER.slug, ODD, COMPILER.summary, ODD, COMPILER.summary_zh, stops)
    monkeypatch.setattr(gauge, "FLOORS", odd)
    monkeypatch.setattr(gauge, "ANNEXES", (elevator,))
    return odd, elevator


def test_the_gauge_escapes_a_title_once(odd_registry: tuple[tuple[Floor, ...], Elevator]) -> None:
    odd_floors, elevator = odd_registry
    second = odd_floors[1]

    def href(floor: Floor) -> str:
        return f"../{floor.key}/?a=1&b=2"

    def section(stop: Stop) -> str:
        return f"#{stop.section}"

    pages = {
        "on floor 2": render_gauge(second, href, map_href="../", elevators=[(elevator, "../compile/")], language="en"),
        "below floor 2": render_gauge(odd_floors[2], href, language="en"),
        "the whole building": render_gauge(None, href, language="en"),
        "lab": render_gauge(second, href, kind="lab", language="en"),
        "depth bar": render_depth_bar(second, href, language="en"),
        "elevator": render_elevator(elevator, href, section, language="en"),
        "elevator bar": render_elevator_bar(elevator, href, section, language="en"),
    }
    for where, html in pages.items():
        assert ODD not in html, f"{where}: the title is not escaped"
        assert "&lt;b&gt;&amp;" in html, f"{where}: the title is missing"
        assert "&amp;amp;" not in html and "&amp;lt;" not in html, f"{where}: escaped twice"
        assert "?a=1&amp;b=2" in html, f"{where}: a link's & is not escaped once"
    # Floor 2 is named in the list and the label of its own gauge, and as "Up" from floor 3.
    assert pages["on floor 2"].count("&lt;b&gt;&amp;") >= 2
    assert "Up: Floor 2 · &lt;b&gt;&amp;</a>" in pages["below floor 2"]
    assert "&lt;b&gt;&amp;: &lt;b&gt;&amp;</a>" in pages["elevator"]
