"""Search results land on their section: every anchor in both indexes is an id its page has (issue 59)."""

from __future__ import annotations

import json
from pathlib import Path

from pytorch_floors.plugin.languages import split_search_index
from pytorch_floors.render.search_scope import KEYS_BOOST, KEYS_FIELD, PAGE_WEIGHT


def heading(level: int, anchor: str, words: str) -> str:
    """A heading as the written page has it: its id, its words, its permalink."""
    return (
        f'<h{level} id="{anchor}">{words}<a class="headerlink" href="#{anchor}" title="Permanent link">¶</a></h{level}>'
    )


LAB_EN = "\n".join(
    [
        heading(1, "lab-7-memory", "Lab 7 · Memory"),
        heading(2, "goal", "Goal"),
        heading(2, "strides", "Exercise 1 · Strides are the address formula"),
        heading(2, "contiguous", "Exercise 3 · When <code>view</code> refuses and <code>reshape</code> copies"),
    ]
)

LAB_ZH = "\n".join(
    [
        heading(1, "lab-7-memory", "实验 7 · 内存"),
        heading(2, "goal", "目标"),
        heading(2, "setup", "准备"),
        heading(2, "strides", "练习 1 · 步长就是地址公式"),
        heading(2, "training-step-memory", "练习 4 · 先预测、再测量一个训练步的内存"),
    ]
)

# Material's entries as it wrote them for these pages (mkdocs-jupyter's ids; jieba's U+200B marks in Chinese).
INDEX = [
    ("labs/7-memory/", "Lab 7 · Memory"),
    ("labs/7-memory/#lab-7-memory", "Lab 7 · Memory"),
    ("labs/7-memory/#goal", "Goal"),
    ("labs/7-memory/#exercise-1-strides-are-the-address-formula", "Exercise 1 · Strides are the address formula"),
    (
        "labs/7-memory/#exercise-3-when-view-refuses-and-reshape-copies",
        "Exercise 3 · When <code>view</code> refuses and <code>reshape</code> copies",
    ),
    ("floor-1/#kept", "Kept"),
    ("zh/labs/7-memory/", "实验\u200b 7 · \u200b内存"),
    ("zh/labs/7-memory/#7", "实验\u200b 7 · \u200b内存"),
    ("zh/labs/7-memory/", "目标"),
    ("zh/labs/7-memory/", "准备"),
    ("zh/labs/7-memory/#1", "练习\u200b 1 · \u200b步长\u200b就是\u200b地址\u200b公式"),
    (
        "zh/labs/7-memory/#4",
        "练习\u200b 4 · \u200b先\u200b预测\u200b、\u200b再\u200b测量\u200b一个\u200b训练\u200b步\u200b的\u200b内存",
    ),
]


def test_lab_section_results_land_on_their_section(tmp_path: Path) -> None:
    """A lab's headings get their stable ids after Material indexed the page: 34 English and 42 Chinese results
    opened a lab at its top, and Chinese entries with no anchor were taken for the page ("准备" titled its group)."""
    site = tmp_path / "site"
    for url, html in {"labs/7-memory/": LAB_EN, "zh/labs/7-memory/": LAB_ZH}.items():
        (site / url).mkdir(parents=True)
        (site / url / "index.html").write_text(html, encoding="utf-8")
    (site / "floor-1").mkdir()
    (site / "floor-1" / "index.html").write_text('<h2 id="kept">Kept</h2>', encoding="utf-8")
    docs = [{"location": location, "title": title, "text": ""} for location, title in INDEX]
    (site / "search").mkdir()
    (site / "search" / "search_index.json").write_text(
        json.dumps({"config": {"lang": ["en"], "separator": "[\\s]+"}, "docs": docs}), encoding="utf-8"
    )
    assert split_search_index(site) == {"en": 6, "zh": 6}
    landed = {}
    for prefix in ("", "zh/"):
        index = json.loads((site / prefix / "search" / "search_index.json").read_text(encoding="utf-8"))
        landed[prefix] = [doc["location"] for doc in index["docs"]]
    assert landed[""] == [
        "labs/7-memory/",
        "labs/7-memory/#lab-7-memory",
        "labs/7-memory/#goal",
        "labs/7-memory/#strides",
        "labs/7-memory/#contiguous",
        "floor-1/#kept",
    ]
    # One entry per page has no anchor (the page's own, which titles its group); every other names its heading.
    assert landed["zh/"] == [
        "zh/labs/7-memory/",
        "zh/labs/7-memory/#lab-7-memory",
        "zh/labs/7-memory/#goal",
        "zh/labs/7-memory/#setup",
        "zh/labs/7-memory/#strides",
        "zh/labs/7-memory/#training-step-memory",
    ]


def test_sections_outweigh_their_page_and_carry_their_anchors_words(tmp_path: Path) -> None:
    """Material's worker multiplies a page's own entry by up to 5 and a section by up to 2: "graph break" led with
    Floor 5's title ("Missing: break"). The page's entry now weighs `PAGE_WEIGHT` of its boost; each section
    carries its anchor's words in a field of its own, weighed as a heading, and a page its address's (`autograd`:
    "autograd" led with Floor 7's #tensorimpl, "AutogradMeta", once Chinese sections changed); the elevator weighs
    as a floor."""
    site = tmp_path / "site"
    (site / "search").mkdir(parents=True)
    docs = [
        {"location": "floors/5-autograd/", "title": "Floor 5 · Autograd: the graph", "text": "", "boost": 4},
        {"location": "floors/5-autograd/#graph-walk", "title": "Walking the graph", "text": "", "boost": 4},
        {"location": "compile/", "title": "The express elevator", "text": ""},
        {"location": "compile/#graph-breaks", "title": "Graph breaks", "text": ""},
        {"location": "zh/compile/#graph-breaks", "title": "图中断", "text": ""},
    ]
    config = {"lang": ["en"], "separator": "[\\s]+", "fields": {"title": {"boost": 10}, "text": {"boost": 1}}}
    (site / "search" / "search_index.json").write_text(json.dumps({"config": config, "docs": docs}), encoding="utf-8")
    split_search_index(site)
    english = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    chinese = json.loads((site / "zh" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert english["config"]["fields"][KEYS_FIELD] == {"boost": KEYS_BOOST}
    assert chinese["config"]["fields"][KEYS_FIELD] == {"boost": KEYS_BOOST}
    weighed = {doc["location"]: (doc["boost"], doc.get(KEYS_FIELD)) for doc in english["docs"]}
    assert weighed == {
        "floors/5-autograd/": (4 * PAGE_WEIGHT, "autograd"),
        "floors/5-autograd/#graph-walk": (4, "graph walk"),
        "compile/": (4 * PAGE_WEIGHT, "compile"),
        "compile/#graph-breaks": (4, "graph breaks"),
    }
    assert [(doc["boost"], doc[KEYS_FIELD]) for doc in chinese["docs"]] == [(4, "graph breaks")]
