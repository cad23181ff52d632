"""The Chinese edition: every page has its twin, keeps its structure and terms, and says when it is stale.

The fast tests read `docs/` and the package; those taking `built_site` read the site the run built once.
No list of pages is typed here: the English pages found in `docs/` are the pages a translation must have.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path
from typing import Any

import jupytext
import pytest
from mkdocs.structure.files import File, Files
from test_labs import _lab_fixture

from conftest import LAB_CONFIG, Build, FixtureSite
from pytorch_floors.claims import Claim
from pytorch_floors.editions.root404 import layout_from, render_root_404
from pytorch_floors.editions.what_changed import what_changed_markdown
from pytorch_floors.execution.engine import SKIPPED_OUTPUT
from pytorch_floors.i18n.check import CHINESE_SHARE, chinese_share, front_matter, problems
from pytorch_floors.i18n.glossary import glossary, off_glossary
from pytorch_floors.i18n.languages import LANGUAGES, english_source, language_of, twin_uri
from pytorch_floors.i18n.messages import ZH, PageLanguage, claim_text, t
from pytorch_floors.i18n.outputs import catalog, english_runs
from pytorch_floors.i18n.sections import join_chinese_lines, page_text, raw_digest, sections
from pytorch_floors.i18n.translation import LOCK_FILE, Staleness, behind, read_lock, staleness, stamp, write_lock
from pytorch_floors.i18n.translations_command import main as translations_main
from pytorch_floors.labs.cells import SELF_CHECK, with_checker
from pytorch_floors.labs.kernel import code_key
from pytorch_floors.plugin.languages import split_search_index, stale_markdown, untranslated_links
from pytorch_floors.recordings.recorder import planned_blocks
from pytorch_floors.render.templates import render

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHINESE = LANGUAGES[1]
# The API reference is written by mkdocstrings from the package's English docstrings: it has no twin, and a
# translated page's link to it goes to the English page (`untranslated_links`).
NOT_TRANSLATED = ("reference/",)


def english_pages() -> list[str]:
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    pages += [p.relative_to(DOCS).as_posix() for p in (DOCS / "labs").glob("*.py")]
    return sorted(page for page in pages if language_of(page) == LANGUAGES[0] and not page.startswith(NOT_TRANSLATED))


def translated_pages() -> list[str]:
    return sorted(p.relative_to(DOCS).as_posix() for p in (DOCS / CHINESE.folder).rglob("*") if p.is_file())


def test_every_english_page_has_a_chinese_twin() -> None:
    missing = [page for page in english_pages() if not (DOCS / twin_uri(page, CHINESE)).is_file()]
    assert english_pages() and not missing, f"pages without a Chinese twin under docs/zh/: {missing}"


def test_every_chinese_page_translates_an_english_one() -> None:
    orphans = [page for page in translated_pages() if not (DOCS / english_source(page)).is_file()]
    assert not orphans


@pytest.mark.parametrize("page", translated_pages())
def test_each_translation_keeps_its_pages_headings_code_links_and_terms(page: str) -> None:
    english = (DOCS / english_source(page)).read_text(encoding="utf-8")
    recorded = read_lock(ROOT / LOCK_FILE).get(page, {})
    assert problems(page, english, (DOCS / page).read_text(encoding="utf-8"), recorded) == []


ENGLISH = """## One { #one }

Text with a [link](other.md#x).

```python exec="1" id="a"
print(1)
```

## Two { #two }

More text.
"""
CHINESE_TEXT = """## 第一节 { #one }

正文，带一个[链接](other.md#x)。这里的中文足够多，所以它是一页中文。

```python exec="1" id="a"
print(1)
```

## 第二节 { #two }

更多正文。
"""


def _stated_claims(proof: Path) -> list[tuple[int, str]]:
    """The statements a proof passes to `claim` or `not_applicable` as written (a computed one, the build counts)."""
    found = []
    for node in ast.walk(ast.parse(proof.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name in {"claim", "not_applicable"} and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


@pytest.mark.parametrize("page", [p for p in translated_pages() if p.endswith(".md")])
def test_every_claim_a_pages_proofs_state_has_its_chinese_in_the_twin(page: str) -> None:
    # Six claims that only a GPU build or another torch states were shown in English on the Chinese pages.
    english = (DOCS / english_source(page)).read_text(encoding="utf-8")
    claims = front_matter((DOCS / page).read_text(encoding="utf-8")).get("claims") or {}
    missing = [
        f"{proof}:{line}: {statement!r}"
        for proof in sorted(set(re.findall(r"snippets/[\w/.-]+\.py", english)))
        if (ROOT / proof).is_file()
        for line, statement in _stated_claims(ROOT / proof)
        if statement not in claims
    ]
    assert missing == [], f"docs/{page} has no Chinese for these claims (front matter `claims:`)"


def test_a_faithful_translation_has_no_problems() -> None:
    assert problems("zh/x.md", ENGLISH, CHINESE_TEXT) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("{ #two }", "{ #deux }"), "headings differ"),
        (("## 第二节 { #two }\n", ""), "headings differ"),
        (("print(1)", "print(2)"), "code blocks differ"),
        (("other.md#x", "other.md#y"), "links missing or changed"),
        (("更多正文。", "更多正文，由调度器处理。"), "glossary's word is '分发器'"),
    ],
)
def test_problems_name_what_breaks_a_twin(change: tuple[str, str], expected: str) -> None:
    found = problems("zh/x.md", ENGLISH, CHINESE_TEXT.replace(*change))
    assert any(expected in line for line in found), found


def test_a_page_left_in_english_under_chinese_headings_is_mostly_not_chinese() -> None:
    left = ENGLISH.replace("## One", "## 第一节").replace("## Two", "## 第二节")
    assert any("mostly not Chinese" in line for line in problems("zh/x.md", ENGLISH, left))


def test_a_line_break_between_chinese_characters_goes_and_one_beside_latin_or_in_code_stays() -> None:
    markdown = "交给自动求导、\n交给 autocast\n或者交给\n- 列表项\n\n```text\n代码\n保持\n```\n甲\n乙\n"
    assert join_chinese_lines(markdown) == (
        "交给自动求导、交给 autocast\n或者交给\n- 列表项\n\n```text\n代码\n保持\n```\n甲乙\n"
    )


def test_chinese_share_counts_prose_not_code() -> None:
    code = "```python\n" + "x = torch.randn(3)\n" * 50 + "```\n"
    assert chinese_share("这是中文。\n\n" + code) == 1.0
    assert chinese_share("This is English prose, all of it.") < CHINESE_SHARE


def test_the_glossary_chooses_one_word_per_term_and_rules_out_its_rivals() -> None:
    terms = glossary()
    assert len({term.en for term in terms}) == len(terms)
    assert len({term.zh for term in terms}) == len(terms)
    dispatcher = next(term for term in terms if term.en == "dispatcher")
    assert dispatcher.avoid[0] in [word for _, word in off_glossary("调度器把调用送到内核")]


@pytest.mark.parametrize(
    "text",
    [
        "调度器把调用送到内核",  # the dispatcher is 分发器
        "张量带着调度键",  # a dispatch key is 分发键
        "然后重新调度到 CPU 内核",  # to dispatch is 分发; 调度 is scheduling
        "add 的算子模式",  # a schema is a "schema"; 模式 is a mode
        "第二层的权重",  # a network's layer, read as floor 2
        "`Linear` 层的权重",
        "从顶层开始分发",  # a level of calls is not a floor
        "可能要耗掉调度器的一个时间片",  # the OS's scheduler: no dispatcher word either
    ],
)
def test_a_word_that_means_two_things_is_ruled_out(text: str) -> None:
    assert off_glossary(text), f"{text!r} passes the glossary"


@pytest.mark.parametrize(
    "text",
    [
        "另一个线程就要一直等到它重新被调度",  # scheduling
        "Inductor 的降级与调度",  # Inductor's scheduler
        "分发器（dispatcher）查看分发键",
        "第 2 层讲的绑定；每一层都有一个实验",  # floors
        "`Linear` 网络层的权重",
    ],
)
def test_each_meaning_has_its_own_word_that_the_glossary_allows(text: str) -> None:
    assert off_glossary(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "把数据拷贝到主机",
        "见其来源说明",
        "见其出处信息",
        "一页纸的程序",
        "两条虚线屋顶",
        "实验的学生版笔记本",
        "<summary>要点</summary>",
        "**改动** `SIZES`",
        "## 完整的故事 { #the-full-story }",
        "## 动态形状与逃生舱口",  # calques: an English image no Chinese engineer writes
        "差别全在簿记工作上",
        "或某个处于活动状态的模式",  # an active mode is 启用的 (zh floor 2 had this)
        "并返回它返回的任何东西",  # "returns whatever it returns" is 原样返回
    ],
)
def test_a_second_rendering_of_a_term_is_ruled_out(text: str) -> None:
    assert off_glossary(text), f"{text!r} passes the glossary"


def test_a_section_heading_reads_the_glossarys_words_for_its_id() -> None:
    english = ENGLISH.replace("## Two { #two }", "## The full story { #the-full-story }")
    chosen = CHINESE_TEXT.replace("## 第二节 { #two }", "## 深入原理 { #the-full-story }")
    assert problems("zh/x.md", english, chosen) == []
    for other in ("完整原理", "背后的原理"):  # a rendering ruled out, and one the glossary never heard of
        found = problems("zh/x.md", english, chosen.replace("深入原理", other))
        assert any("heading #the-full-story reads" in line for line in found), found
    lab = '# %% [markdown]\n# ## 自我检验 <a id="check-yourself"></a>\n#\n# 中文的正文足够多。\n'
    english_lab = '# %% [markdown]\n# ## Check yourself <a id="check-yourself"></a>\n#\n# Text.\n'
    assert any("heading #check-yourself reads '自我检验'" in line for line in problems("zh/l.py", english_lab, lab))


def test_the_interfaces_chinese_keeps_the_glossary() -> None:
    # The pages were held to the glossary, the site's own words not: floor 6's blurb kept 屋顶线, the stale
    # note a calque (译文早于).
    han = re.compile(r"[\u4e00-\u9fff]")
    floors = ast.parse((ROOT / "src" / "pytorch_floors" / "floors.py").read_text(encoding="utf-8"))
    strings = [n.value for n in ast.walk(floors) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    shown = catalog("zh")  # what a proof prints and draws, as a Chinese page shows it
    assert shown is not None
    chinese = [*ZH.values(), *(text for text in strings if han.search(text)), *(e.translation for e in shown.entries)]
    assert [(text, word) for text in chinese for _, word in off_glossary(text)] == []


def test_a_glossed_term_gives_its_english_at_its_first_use_on_the_page() -> None:
    unglossed_page = CHINESE_TEXT.replace("更多正文。", "更多正文，由分发器处理；分发器（dispatcher）再调用内核。")
    assert any("first use of '分发器' is not glossed" in p for p in problems("zh/x.md", ENGLISH, unglossed_page))
    glossed = CHINESE_TEXT.replace("更多正文。", "更多正文，由分发器（dispatcher）处理；分发器再调用内核。")
    assert problems("zh/x.md", ENGLISH, glossed) == []
    # 存储层次 is the memory hierarchy, not storage: the first use of storage is the one after it.
    hierarchy = CHINESE_TEXT.replace("更多正文。", "存储层次的每一级；张量的存储（storage）。")
    assert problems("zh/x.md", ENGLISH, hierarchy) == []
    assert any("'存储'" in p for p in problems("zh/x.md", ENGLISH, hierarchy.replace("（storage）", "")))
    # A heading is not where a term is glossed: the body's first use is.
    titled = glossed.replace("## 第二节 { #two }", "## 分发器 { #two }")
    assert problems("zh/x.md", ENGLISH, titled) == []


def test_a_changed_english_section_makes_its_translation_stale_and_a_new_one_untranslated() -> None:
    recorded = stamp(ENGLISH)
    assert staleness(sections(ENGLISH), recorded).stale == ()
    changed = ENGLISH.replace("More text.", "Other text.") + "\n## Three { #three }\n\nNew.\n"
    state = staleness(sections(changed), recorded)
    assert state.stale == ("two",)
    assert state.untranslated == ("three",)


def test_rewrapping_an_english_paragraph_leaves_its_translation_up_to_date() -> None:
    english = ENGLISH.replace(
        "Text with a [link](other.md#x).", "Text with a [link](other.md#x). And a second sentence."
    )
    recorded = stamp(english)
    rewrapped = english.replace("link](other.md#x). And", "link](other.md#x).\n  And")
    assert staleness(sections(rewrapped), recorded).stale == ()
    reworded = english.replace("a second sentence", "another sentence")
    assert staleness(sections(reworded), recorded).stale == ("one",)
    split = english.replace("link](other.md#x). And", "link](other.md#x).\n\nAnd")  # a new paragraph is a change
    assert staleness(sections(split), recorded).stale == ("one",)
    indented = english.replace("print(1)", "  print(1)")  # and code keeps its lines as they are
    assert staleness(sections(indented), recorded).stale == ("one",)


def test_a_lock_written_before_wrapping_was_ignored_still_reads_as_up_to_date() -> None:
    recorded = {section.anchor: raw_digest(section.text) for section in sections(ENGLISH)}
    assert staleness(sections(ENGLISH), recorded) == staleness(sections(ENGLISH), stamp(ENGLISH))
    assert staleness(sections(ENGLISH.replace("More text.", "Other text.")), recorded).stale == ("two",)


def test_the_stale_note_marks_english_only_on_english_text() -> None:
    note = render("stale_translation.html", "zh", href="../#two")
    link = re.search(r"<a [^>]*>([^<]*)</a>", note)
    assert link is not None and 'hreflang="en"' in link.group(0)
    assert 'lang="en"' not in link.group(0).replace('hreflang="en"', ""), link.group(0)
    assert link.group(1) == ZH["Read the English section"]


def test_the_list_of_stale_translations_names_each_section_by_its_heading(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "zh").mkdir(parents=True)
    (docs / "zh" / "index.md").write_text(CHINESE_TEXT, encoding="utf-8")
    files = Files([File("zh/index.md", str(docs), str(tmp_path / "site"), use_directory_urls=True)])
    listed = stale_markdown({"zh/index.md": Staleness(("two",), ())}, "zh/what-changed.md", files, "zh")
    assert "[zh/index.md › 第二节](index.md#two)" in listed, listed


def _messages_in_python(source: str) -> set[str]:
    """The first argument of every `t(...)` call whose message is a literal (implicit concatenation joined), or the
    name of a module's string constant (`t(PENDING_TEXT, language)`)."""
    tree = ast.parse(source)
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.add(first.value)
            elif isinstance(first, ast.Name) and first.id in constants:
                found.add(constants[first.id])
    return found


def test_every_message_the_interface_uses_has_its_chinese() -> None:
    used: set[str] = set()
    for path in [*(ROOT / "src" / "pytorch_floors").rglob("*"), *(ROOT / "overrides").rglob("*")]:
        if path.suffix == ".py":
            used |= _messages_in_python(path.read_text(encoding="utf-8"))
        elif path.suffix in {".html", ".md"}:
            text = path.read_text(encoding="utf-8")
            call = r"(?:(?<![.\w])t(?:_markup)?|floors_t)\(\s*"  # ours; Material's own are `lang.t(...)`
            used |= set(re.findall(call + r"\"((?:[^\"\\]|\\.)+)\"", text))
            used |= {m.replace("\\'", "'") for m in re.findall(call + r"'((?:[^'\\]|\\.)+)'", text)}
    # The footer writes `mkdocs.yml`'s copyright through `floors_t` (overrides/partials/copyright.html).
    copyright_line = re.search(r"^copyright: (.+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert copyright_line is not None
    used.add(copyright_line.group(1).strip())
    assert used, "no message found: the scan no longer matches how messages are written"
    assert sorted(used - set(ZH)) == []


def test_the_what_changed_page_without_an_earlier_edition_is_chinese_on_a_chinese_page() -> None:
    assert what_changed_markdown(None, {}, "zh").startswith("# 更新记录 { #what-changed }")
    assert what_changed_markdown(None, {}, "en").startswith("# What changed { #what-changed }")


def test_a_claim_shows_in_the_pages_language_and_an_untranslated_one_is_counted() -> None:
    state = PageLanguage("zh", {"a view costs nothing": "视图不花费任何代价"})
    assert claim_text("a view costs nothing", state) == "视图不花费任何代价"
    assert claim_text("a copy costs bytes", state) == "a copy costs bytes"
    assert state.untranslated == ["a copy costs bytes"]
    assert t("Held:", state) == t("Held:", "zh") == ZH["Held:"]
    assert t("Held:", "en") == "Held:"
    # A template rendered in a language writes its words, and its claims, in it: the language is passed.
    claim = Claim("a view costs nothing", True, "")
    assert "视图不花费任何代价" in render(
        "proof_claims.html", state, claims=(claim,), held=1, applied=1, not_applicable=0, missed=False, cached=False
    )


def test_a_translated_pages_link_to_a_page_without_twin_goes_to_the_english_page() -> None:
    exists = {"zh/floors/2-python.md", "floors/2-python.md", "reference/plot.md"}.__contains__
    markdown = "[a](2-python.md#x) [b](../reference/plot.md#y) [c](https://example.org/a.md)"
    # It says where it leads: hreflang for the browser and the reader's tools, "（英文）" for the reader.
    assert untranslated_links(markdown, "zh/floors/1-program.md", exists, "zh") == (
        '[a](2-python.md#x) [b](../../reference/plot.md#y){ hreflang="en" }（英文） [c](https://example.org/a.md)'
    )
    written = "[b](../reference/plot.md){ .x }"
    assert untranslated_links(written, "zh/floors/1-program.md", exists, "zh") == "[b](../../reference/plot.md){ .x }"


def test_the_chinese_navigation_leads_to_the_english_api_reference_and_says_so(fixture_site: FixtureSite) -> None:
    # The Chinese menu kept only pages with a twin: the API reference, English only, had no entry in it.
    config = fixture_site.root.joinpath("mkdocs.yml").read_text(encoding="utf-8")
    nav = "nav:\n  - Home: index.md\n  - Reference:\n      - reference/index.md\n"
    theme = f"  font: false\n  custom_dir: {ROOT / 'overrides'}\n"  # the menu of a page's own language
    fixture_site.write("mkdocs.yml", config.replace("  font: false\n", theme) + nav)
    fixture_site.page("index.md", TWIN_ENGLISH)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE)
    fixture_site.page("reference/index.md", "# Reference\n\nThe package's API.\n")
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    chinese, english = build.page("zh"), build.page(".")
    link = re.search(r'<a href="([^"]+)"[^>]*>\s*(?:<span[^>]*>\s*)?API 参考（英文）', chinese)
    assert link is not None and link[1] == "../reference/", "an entry of the Chinese menu, to the English page"
    assert "API 参考（英文）" not in english


def test_each_language_gets_its_own_search_index(tmp_path: Path) -> None:
    index = tmp_path / "search" / "search_index.json"
    index.parent.mkdir()
    docs = [{"location": "floors/1-program/", "title": "x", "text": ""}, {"location": "zh/", "title": "地图"}]
    index.write_text(json.dumps({"config": {"separator": "[\\s]+"}, "docs": docs}), encoding="utf-8")
    assert split_search_index(tmp_path) == {"en": 1, "zh": 1}
    english = json.loads(index.read_text(encoding="utf-8"))
    chinese = json.loads((tmp_path / "zh" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert [d["location"] for d in english["docs"]] == ["floors/1-program/"]
    assert [d["location"] for d in chinese["docs"]] == ["zh/"]
    assert "\\u200b" in chinese["config"]["separator"]
    written = (tmp_path / "zh" / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "地图" in written, "UTF-8, not escapes"


# --- the built site ---

_ID = re.compile(r'<h[1-6][^>]* id="([^"]+)"')


def test_every_built_page_has_its_twin_with_the_same_section_anchors(built_site: Build) -> None:
    site = built_site.site
    checked = 0
    for page in english_pages():
        english = site / Path(page).with_suffix("") / "index.html" if page != "index.md" else site / "index.html"
        if page.endswith("index.md") and page != "index.md":
            english = site / Path(page).parent / "index.html"
        twin = site / CHINESE.folder / english.relative_to(site)
        assert twin.is_file(), f"no Chinese twin built for {page}"
        ids = _ID.findall(english.read_text(encoding="utf-8"))
        assert ids and ids == _ID.findall(twin.read_text(encoding="utf-8")), page
        checked += 1
    assert checked == len(english_pages())


def test_a_chinese_page_is_chinese_and_switches_to_its_english_twin(built_site: Build) -> None:
    html = built_site.page("zh/floors/4-dispatcher")
    assert '<html lang="zh"' in html
    assert 'hreflang="en"' in html and 'data-floors-language="en"' in html
    english = built_site.page("floors/4-dispatcher")
    assert 'data-floors-language="zh"' in english and '<html lang="en"' in english


def test_each_block_runs_once_for_both_languages(built_site: Build) -> None:
    report = json.loads((built_site.site / "build-report.json").read_text(encoding="utf-8"))
    assert report["blocks"] and not [b for b in report["blocks"] if b["page"].startswith(CHINESE.prefix)]
    translations = json.loads((built_site.site / "translations.json").read_text(encoding="utf-8"))
    planned: dict[str, int] = {}
    for block in report["blocks"]:
        if block["block_id"] != "notebook":
            planned[block["page"]] = planned.get(block["page"], 0) + 1
    for page, count in planned.items():
        assert translations[twin_uri(page, CHINESE)]["blocks_shown_from_english"] == count, page


def test_each_search_index_holds_its_language_and_chinese_terms_are_words(built_site: Build) -> None:
    site = built_site.site
    english = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    chinese = json.loads((site / "zh" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert english["docs"] and all(language_of(d["location"]) == LANGUAGES[0] for d in english["docs"])
    assert chinese["docs"] and all(language_of(d["location"]) == CHINESE for d in chinese["docs"])
    words = {word for doc in chinese["docs"] for word in re.split(chinese["config"]["separator"], doc["text"])}
    for term in ("分发器", "自动求导", "步长"):
        assert term in words, f"{term} is not one word of the Chinese index"


# --- a small site built in this process ---

TWIN_ENGLISH = """## One { #one }

Printed by a block:

```python exec="1" id="say"
from pytorch_floors.claims import claim
print("forty-two")
claim("the answer is printed", held=True)
```

## Two { #two }

More text.
"""
TWIN_CHINESE = """---
description: 中文页面
claims:
  "the answer is printed": "答案被打印出来了"
---

## 第一节 { #one }

由一个代码块打印：

```python exec="1" id="say"
from pytorch_floors.claims import claim
print("forty-two")
claim("the answer is printed", held=True)
```

## 第二节 { #two }

更多正文。
"""


def test_a_twin_shows_its_english_blocks_result_without_running_it_again(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", TWIN_ENGLISH)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE)
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    assert build.log.count("/1 docs/index.md › say: ran in") == 1 and "zh/index.md › say" not in build.log
    chinese = build.page("zh")
    assert "forty-two" in chinese and "答案被打印出来了" in chinese and "the answer is printed" not in chinese
    report = json.loads((build.site / "build-report.json").read_text(encoding="utf-8"))
    assert [(b["page"], b["block_id"]) for b in report["blocks"]] == [("index.md", "say")]
    translations = json.loads((build.site / "translations.json").read_text(encoding="utf-8"))
    assert translations["zh/index.md"]["blocks_shown_from_english"] == 1
    assert translations["zh/index.md"]["claims_untranslated"] == []


def _stamped(fixture_site: FixtureSite) -> None:
    """The twin site with its translation recorded as up to date (`translations stamp`)."""
    fixture_site.page("index.md", TWIN_ENGLISH)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE)
    english = (fixture_site.root / "docs" / "index.md").read_text(encoding="utf-8")
    write_lock(fixture_site.root / LOCK_FILE, {"zh/index.md": stamp(english)})


def test_a_twin_whose_code_differs_fails_the_build_naming_its_page_and_block(fixture_site: FixtureSite) -> None:
    # Wrong, not behind: the lock says it translates the English section as it is, and its code differs.
    _stamped(fixture_site)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE.replace('print("forty-two")', 'print("四十二")'))
    build = fixture_site.build(strict=True)
    assert build.returncode != 0
    assert "docs/zh/index.md › block 'say'" in build.log and "differs from the English page's block" in build.log


def test_a_section_whose_english_changed_says_so_and_the_build_passes(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", TWIN_ENGLISH)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE)
    english = (fixture_site.root / "docs" / "index.md").read_text(encoding="utf-8")
    write_lock(fixture_site.root / LOCK_FILE, {"zh/index.md": stamp(english)})
    fixture_site.page("index.md", TWIN_ENGLISH.replace("More text.", "Other text, since rewritten."))
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    chinese = build.page("zh")
    notes = re.findall(r'class="admonition warning floors-stale".*?href="([^"]+)"', chinese, re.S)
    assert notes == ["../#two"], notes  # under the changed section only, linking its English
    assert chinese.index('id="two"') < chinese.index("floors-stale")
    translations = json.loads((build.site / "translations.json").read_text(encoding="utf-8"))
    assert translations["zh/index.md"]["stale"] == ["two"]
    assert "1 stale sections" in build.log


NEW_BLOCK = """
```python exec="1" id="author-new-block"
print(1 + 1, "new")
```
"""

BEHIND = {
    # An author's edits of the English page alone; the translation stays as it was stamped.
    "new-block-in-a-section": lambda en: en.replace("More text.\n", "More text.\n" + NEW_BLOCK),
    "new-block-in-the-middle": lambda en: en.replace("## Two { #two }", NEW_BLOCK + "\n## Two { #two }"),
    "new-section": lambda en: en + "\n## Three { #three }\n\nA new section." + NEW_BLOCK,
    "changed-block": lambda en: en.replace('print("forty-two")', 'print("forty-two")\nprint(1 + 1, "new")'),
    "deleted-section": lambda en: en.split("## Two { #two }")[0],
}


@pytest.mark.parametrize("edit", list(BEHIND.values()), ids=list(BEHIND))
def test_a_translation_behind_its_english_page_never_fails_the_check(edit: Any) -> None:
    recorded = stamp(TWIN_ENGLISH)
    assert problems("zh/index.md", edit(TWIN_ENGLISH), TWIN_CHINESE, recorded) == []


def test_a_wrong_translation_still_fails_the_check() -> None:
    recorded = stamp(TWIN_ENGLISH)
    changed_code = TWIN_CHINESE.replace('print("forty-two")', 'print("四十二")')
    assert any("code blocks differ" in p for p in problems("zh/index.md", TWIN_ENGLISH, changed_code, recorded))
    lost_section = TWIN_CHINESE.split("## 第二节", maxsplit=1)[0]
    assert any("missing: #two" in p for p in problems("zh/index.md", TWIN_ENGLISH, lost_section, recorded))


@pytest.mark.parametrize("edit", list(BEHIND), ids=list(BEHIND))
def test_an_english_edit_never_fails_the_build_on_its_translation(fixture_site: FixtureSite, edit: str) -> None:
    # An author who added a proof to an English page once got a failed build naming the Chinese page.
    _stamped(fixture_site)
    english = BEHIND[edit](TWIN_ENGLISH)
    fixture_site.page("index.md", english)
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    chinese = build.page("zh")
    translations = json.loads((build.site / "translations.json").read_text(encoding="utf-8"))["zh/index.md"]
    if edit == "deleted-section":
        assert 'id="two"' not in chinese and "更多正文" not in chinese
        assert translations["left_out"] == ["two"]
        return
    # The new or changed English section is shown with its executed output, under the note, once.
    assert "2 new" in chinese, "the new block's output from the same run"
    assert chinese.count("floors-untranslated") == 1 and "本节尚未翻译" in chinese
    assert build.log.count("› author-new-block: ran in") <= 1 and "zh/index.md › author-new-block" not in build.log
    assert translations["shown_in_english"], translations
    assert "答案被打印出来了" in chinese or edit == "changed-block"


def test_a_recording_records_each_block_once_not_again_for_its_translation(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / CHINESE.folder).mkdir(parents=True)
    (docs / "index.md").write_text(ENGLISH, encoding="utf-8")
    (docs / CHINESE.folder / "index.md").write_text(CHINESE_TEXT, encoding="utf-8")
    assert list(planned_blocks(docs, tmp_path)) == ["index.md"]


@pytest.mark.parametrize(
    ("page", "wrong", "why"),
    [
        ("floors/3-boundary.md", "的前后释放它", "the GIL is released during the C++ call, not before and after it"),
        ("floors/3-boundary.md", "数据翻倍几乎不增加开销", "doubling the data costs almost no time"),
        ("floors/6-kernels.md", "深处带宽受限区域", "not Chinese: 'deep in the bandwidth-bound region'"),
    ],
)
def test_a_meaning_error_found_by_review_stays_fixed(page: str, wrong: str, why: str) -> None:
    # Issue 58's bilingual review found these three sentences saying something the English does not.
    text = (ROOT / "docs" / "zh" / page).read_text(encoding="utf-8")
    assert wrong not in text, f"docs/zh/{page}: {why}"


def test_the_themes_words_follow_the_language_its_page_context_names(fixture_site: FixtureSite) -> None:
    # The theme's partials wrote their words through `t`, which read the page's language from a ContextVar;
    # `floors_t` now reads the `floors_language` the build puts in each page's context.
    config = fixture_site.root.joinpath("mkdocs.yml").read_text(encoding="utf-8")
    fixture_site.write(
        "mkdocs.yml", config.replace("  font: false\n", f"  font: false\n  custom_dir: {ROOT / 'overrides'}\n")
    )
    fixture_site.page("index.md", TWIN_ENGLISH)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE)
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    assert ZH["Made with"] in build.page("zh") and "Made with" not in build.page("zh")
    assert "Made with" in build.page(".")


def test_the_words_the_sites_scripts_show_come_from_the_page_in_its_language() -> None:
    # edition-note.js and tier-tabs.js wrote English into Chinese pages ("There is no edition …", "Dismiss").
    scripts = sorted((DOCS / "javascripts").glob("*.js"))
    literal = re.compile(r"textContent\s*=\s*[`\"'][^`\"']*[A-Za-z]{3}")
    assert [path.name for path in scripts if literal.search(path.read_text(encoding="utf-8"))] == []
    main = (ROOT / "overrides" / "main.html").read_text(encoding="utf-8")
    said = [
        (path.name, key, english)
        for path in scripts
        for key, english in re.findall(r'say\(\s*"(\w+)",\s*"((?:[^"\\]|\\.)*)"', path.read_text(encoding="utf-8"))
    ]
    assert {name for name, _, _ in said} >= {"edition-note.js", "tier-tabs.js"}
    for name, key, english in said:
        assert english in ZH, f"{name}: {english!r} has no Chinese in messages.zh.yml"
        assert f'"{key}": floors_t("{english}")' in main, f"{name}: overrides/main.html does not write {key!r}"


LAB_EN = (
    '# %% [markdown]\n# # Lab 1 · Your program\n#\n# ## Goal <a id="goal"></a>\n#\n'
    '# Measure what this floor can tell you.\n\n# %%\nprint("the lab ran")\n\n'
    '# %% tags=["checker"]\n# The self-check helpers go here.\n'
)
LAB_ZH = (
    '# %% [markdown]\n# # 实验 1 · 你的程序\n#\n# ## 目标 <a id="goal"></a>\n#\n'
    '# 先测一测这一层已经能告诉你什么，再往下走。\n\n# %%\nprint("the lab ran")\n\n'
    '# %% tags=["checker"]\n# The self-check helpers go here.\n'
)
# The English lab after its author's edit: the goal's words changed, and a section was added.
LAB_EN_EDITED = LAB_EN.replace("can tell you.", "can tell you, and why.") + (
    '\n# %% [markdown]\n# ## One more step <a id="step"></a>\n#\n# Measure it again.\n'
)


def test_behind_names_changed_new_and_removed_sections_in_order() -> None:
    recorded = {**stamp(page_text("labs/1-program.py", LAB_EN)), "gone": "0123456789ab"}
    late = behind(sections(page_text("labs/1-program.py", LAB_EN_EDITED)), recorded)
    assert [(b.anchor, b.title, b.how) for b in late] == [
        ("goal", "Goal", "changed"),
        ("step", "One more step", "new"),
        ("gone", "", "removed"),
    ]
    assert behind(sections(page_text("labs/1-program.py", LAB_EN)), stamp(page_text("labs/1-program.py", LAB_EN))) == []


def test_a_translated_lab_behind_its_english_lab_says_so_in_chinese_and_the_check_reports_it(
    fixture_site: FixtureSite, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Markdown page catches up (the English section under "本节尚未翻译"); a lab behind its English lab got no
    # note at all, and `translations check` said nothing of it.
    _lab_fixture(fixture_site, LAB_EN)
    fixture_site.write(
        "mkdocs.yml", LAB_CONFIG.replace('include: ["labs/*.py"]', 'include: ["labs/*.py", "zh/labs/*.py"]')
    )
    fixture_site.write("docs/zh/index.md", "---\ndescription: 首页。\n---\n\n# 首页\n\n这是首页，内容是中文的。\n")
    fixture_site.write("docs/zh/labs/1-program.py", LAB_ZH)
    write_lock(fixture_site.root / LOCK_FILE, {"zh/labs/1-program.py": stamp(page_text("labs/1-program.py", LAB_EN))})
    fixture_site.write("docs/labs/1-program.py", LAB_EN_EDITED)
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    chinese = build.page("zh/labs/1-program")
    note = re.search(r'<div class="admonition warning floors-stale floors-lab-behind".*?</div>', chinese, re.S)
    assert note is not None, "the translated lab says it is behind"
    assert "本实验的译文落后于英文实验" in note[0] and "（已修改）" in note[0] and "（新增）" in note[0]
    links = re.findall(r'href="([^"]+)"', note[0])
    assert links == ["../../../labs/1-program/#goal", "../../../labs/1-program/#step", "../../../labs/1-program/"]
    assert chinese.index("floors-lab-behind") < chinese.index('class="jupyter-wrapper"'), "at its top"
    assert "floors-lab-behind" not in build.page("labs/1-program"), "the English lab has no note"
    assert translations_main(["check", "--project", str(fixture_site.root)]) == 0, "behind is never wrong"
    out = capsys.readouterr().out
    assert "docs/zh/labs/1-program.py: behind its English lab (not caught up" in out
    assert "changed: #goal; new: #step" in out


def test_a_lab_stamped_before_wrapping_was_ignored_is_not_behind() -> None:
    # `behind` compared only the new digest, so every lab stamped with the older raw digests (labs 1, 4-7)
    # read "behind its English lab" in translations check, while `staleness` read them up to date.
    wrapped = ENGLISH.replace("More text.", "More\ntext, wrapped.")  # a raw digest differs from a wrapped one
    recorded = {section.anchor: raw_digest(section.text) for section in sections(wrapped)}
    assert recorded != stamp(wrapped)
    assert behind(sections(wrapped), recorded) == []
    changed = behind(sections(wrapped.replace("More", "Other")), recorded)
    assert [(b.anchor, b.how) for b in changed] == [("two", "changed")]


# The comment texts the lab tooling reads stay English on a Chinese lab: `# SELF-CHECK` starts a self-check
# cell (`labs.cells.SELF_CHECK`), and `# YOUR ANSWER` is the label the labs' introduction names (neither is
# a run of English words; they are left out so a translated hint after them is what the test reads).
LAB_MARKERS = (SELF_CHECK, "# YOUR ANSWER")


def _code_comments(source: str) -> list[str]:
    """The comments of a code cell, as tokenize finds them (a string that holds code is not one)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return [line.strip() for line in source.splitlines() if line.strip().startswith("#")]
    return [token.string for token in tokens if token.type == tokenize.COMMENT]


@pytest.mark.parametrize("lab", [page for page in translated_pages() if page.startswith("zh/labs/")])
def test_a_chinese_labs_code_comments_are_chinese(lab: str) -> None:
    """About 200 comments in the Chinese labs' code cells (self-checks, hints, why-comments) were still English."""
    notebook = jupytext.read(DOCS / lab)
    english = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for comment in _code_comments(cell.source):
            text = next((comment[len(m) :] for m in LAB_MARKERS if comment.startswith(m)), comment)
            if english_runs(text):
                english.append(comment)
    assert not english, f"{lab}: comments in its code cells still in English: {english}"


def test_a_translated_lab_translates_its_comments_and_nothing_else_of_its_code() -> None:
    """`# YOUR ANSWER: the dtype you expect…` stayed English on the Chinese lab: its code was compared byte for byte."""
    lab = "zh/labs/1-program.py"
    english = (ROOT / "docs" / english_source(lab)).read_text(encoding="utf-8")
    chinese = (ROOT / "docs" / lab).read_text(encoding="utf-8")
    assert "# YOUR ANSWER：你预期每一对得到的数据类型" in chinese
    assert problems(lab, english, chinese) == []
    for code, edited in (
        ("torch.manual_seed(0)", "torch.manual_seed(1)"),  # a number
        ('"int64 tensor + float32 tensor": None', '"int64 张量 + float32 张量": None'),  # a string the code reads
        ("MY_GUESS = None  #", "MY_GUESS = 0  #"),  # code before a comment
    ):
        assert chinese.count(code) >= 1, code
        found = problems(lab, english, chinese.replace(code, edited, 1))
        assert any(p.startswith("code blocks differ") for p in found), (code, found)
    # The run is the English lab's: neither the comments nor the helpers' language change what identifies it.
    english_lab, chinese_lab = (with_checker(jupytext.reads(s, fmt="py:percent"), lab) for s in (english, chinese))
    assert code_key(english_lab) == code_key(chinese_lab)
    chinese_lab.cells[-2 if chinese_lab.cells[-1].cell_type != "code" else -1].source += "\nx = 1"
    assert code_key(english_lab) != code_key(chinese_lab)


def test_a_render_only_build_says_in_chinese_that_it_ran_nothing(fixture_site: FixtureSite) -> None:
    # zh pages of a build without execution showed the engine's "(execution disabled for this build)".
    fixture_site.page("index.md", TWIN_ENGLISH)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE)
    build = fixture_site.build(strict=True, env={"FLOORS_EXEC": "off", "FLOORS_EXEC_CACHE": "off"})
    assert build.returncode == 0, build.log[-3000:]
    assert SKIPPED_OUTPUT in build.page(".")
    chinese = build.page("zh")
    assert ZH[SKIPPED_OUTPUT] in chinese and SKIPPED_OUTPUT not in chinese


def test_the_404_page_says_in_chinese_what_it_says_in_english() -> None:
    # One 404 page answers both languages; its "Search the site … (press /), or pick a floor" had no Chinese.
    page = (ROOT / "overrides" / "404.html").read_text(encoding="utf-8")
    page += (ROOT / "overrides" / "partials" / "not-found.html").read_text(encoding="utf-8")
    chinese = " ".join(text for _, text in re.findall(r'<(\w+)[^>]*\blang="zh"[^>]*>(.*?)</\1>', page, re.S))
    assert "<kbd>/</kbd>" in chinese and "搜索" in chinese, "the way to search, in Chinese too"


def test_the_published_root_404_says_in_chinese_what_it_says_in_english() -> None:
    # gh-pages' root 404 answers every language's missing address; its own lines were English only.
    versions = [{"version": "2026.12", "aliases": ["latest"]}, {"version": "2026.11", "aliases": []}]
    layout = layout_from(
        site_name="S", site_url="https://x.org/r/", latest="latest", versions_json=versions, redirects={}
    )
    html = render_root_404(layout, ROOT / "overrides")
    english_lines = ("Taking you to this address", "The same address in the latest edition", "Or pick a floor")
    sections = re.findall(r"<(section|p)\b[^>]*>(.*?)</\1>", html, re.S)
    for line in english_lines:
        assert any(line in text for _, text in sections), line
    chinese = " ".join(re.findall(r'<(?:p|span)\b[^>]*\blang="zh"[^>]*>(.*?)</(?:p|span)>', html, re.S))
    for words in ("正在带你前往", "最新版次中的同一地址", "选最新版次的一层", "2026.12、2026.11"):
        assert words in chinese, words
    assert "没有 ${route.unknownEdition} 这个版次" in html, "the script's note, in both languages"
