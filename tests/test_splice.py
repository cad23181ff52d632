"""Where a page's tags are (`render.splice`): found by the HTML parser, the page changed at one offset only."""

from __future__ import annotations

from pytorch_floors.plugin.languages import title_anchor
from pytorch_floors.plugin.plugin import mark_page
from pytorch_floors.plugin.serve.pending import PENDING_ATTRIBUTE, mark_pending
from pytorch_floors.render.splice import (
    find_end_tag,
    find_start_tag,
    find_start_tags,
    insert_after,
    insert_before,
    start_tags_in_place,
    with_attribute,
)

PAGE = (
    '<!doctype html>\n<html>\n<!-- <head> in a comment --><head data-x="<head>">\n<script>let s = "<article>";</script>'
    '\n</head>\n<body>\n  <article class="md-content">\n<h1 id="t">T</h1><p id="p">x</p></article>\n</body></html>'
)


def test_a_tag_is_found_where_a_browser_sees_it_not_in_a_comment_a_script_or_a_value() -> None:
    head = find_start_tag(PAGE, "head")
    assert head is not None and PAGE[head.start : head.end] == '<head data-x="<head>">'
    article = find_start_tag(PAGE, "article")
    assert article is not None and PAGE[article.start : article.end] == '<article class="md-content">'
    title = find_end_tag(PAGE, "h1", start=article.end)
    assert title is not None and PAGE[title.start : title.end] == "</h1>"
    found = find_start_tag(PAGE, {"h1", "p"}, attribute=("id", "p"))
    assert found is not None and PAGE[found.start : found.end] == '<p id="p">'
    assert find_start_tag(PAGE, "nav") is None and find_end_tag(PAGE, "nav") is None
    every = find_start_tags(PAGE + '\n<h2 id="a">A</h2><h2>none</h2><h3 id="b">B</h3>', {"h2", "h3"}, attribute="id")
    assert [tag.attributes["id"] for tag in every] == ["a", "b"]


def test_a_fragment_goes_in_at_one_offset_and_the_rest_stays_byte_for_byte() -> None:
    title = find_end_tag(PAGE, "h1")
    changed = insert_after(PAGE, title, "<div>box</div>")
    assert changed == PAGE.replace("</h1>", "</h1><div>box</div>", 1)
    assert insert_before(PAGE, find_end_tag(PAGE, "head"), "<link>") == PAGE.replace("\n</head>", "\n<link></head>")
    marked = with_attribute(PAGE, find_start_tag(PAGE, "article"), "data-x")
    assert marked == PAGE.replace("<article class", "<article data-x class", 1)
    assert insert_after(PAGE, None, "x") == PAGE == with_attribute(PAGE, None, "data-x")


def test_the_pages_the_build_changes_are_changed_through_the_parser() -> None:
    assert mark_page(PAGE, "b1").count('name="pytorch-floors-build"') == 1
    assert mark_page(PAGE, "b1").index('name="pytorch-floors-build"') > PAGE.index('<head data-x="<head>">')
    assert f"<article {PENDING_ATTRIBUTE} class=" in mark_pending(PAGE)
    lab = '<h1 id="1">第 1 层<a class="headerlink" href="#1" title="link">¶</a></h1>'
    assert title_anchor(lab, "lab-1") == lab.replace('id="1"', 'id="lab-1"').replace('href="#1"', 'href="#lab-1"')


def test_a_tag_knows_what_it_is_inside_and_a_void_element_opens_nothing() -> None:
    found = start_tags_in_place('<div class="a"><p>one<br><img src="x"><b>two</b></p><pre>x</pre></div><p>out</p>')
    inside = {tag.name: [outer.name for outer in around] for tag, around in found if tag.name != "p"}
    assert inside == {"div": [], "br": ["div", "p"], "img": ["div", "p"], "b": ["div", "p"], "pre": ["div"]}
    assert [around for tag, around in found if tag.name == "p"][-1] == ()


def test_an_end_tag_closes_what_was_left_open_inside_its_element() -> None:
    found = start_tags_in_place("<ul><li>one<li>two</ul><em>after</em>")
    assert [(tag.name, [o.name for o in around]) for tag, around in found][-1] == ("em", [])
