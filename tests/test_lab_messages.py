"""A Chinese lab says its own messages in Chinese: each `expect` message and `print`, on its page (its downloads:
tests/test_labs.py::test_a_downloaded_chinese_lab_says_its_own_messages_in_chinese).

The lab's source keeps its English lab's code (one run: `kernel.code_key`); the literals are translated from the
catalog of printed lines when a notebook is made (`labs.messages`). Nothing here executes a lab or builds a site.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from mkdocs_jupyter.nbconvert2 import nb2html  # type: ignore[import-untyped]
from test_labs import message_strings

from conftest import ROOT
from pytorch_floors.floors import LABS, Lab
from pytorch_floors.i18n.outputs import OutputCatalog, english_runs
from pytorch_floors.labs import messages
from pytorch_floors.labs.cells import read_lab
from pytorch_floors.labs.kernel import LabExecutePreprocessor, LabMessagesPreprocessor, LabRuns, bind, code_key, unbind
from pytorch_floors.labs.messages import translate_messages
from pytorch_floors.labs.notebooks import jupyter_environment, translated_messages_digest

CATALOG = OutputCatalog.from_mapping(
    {
        "self-check passed: all {n} strides predicted": "自检通过：{n} 个步长全部预测正确",
        "the ratio is {measured}, not {guess}": "这个比值是 {measured}，而不是 {guess}",
        "these are not what you predicted:": "这些与你的预测不符：",
        "torch-level calls: {names}": "torch 一级的调用：{names}",
        "backward {outcome}; you said {said}": "backward {outcome}；你说 {said}",
        "did not raise": "没有抛出错误",
        "x {x}, y {y}": "y {y}，x {x}",
        "a tuple of ints": "一个 int 元组",
        "self-check passed:": "自检通过：",
        "a set of names such as {{1, 2}}: {names}": "名字的集合，例如 {{1, 2}}：{names}",
    }
)


@pytest.fixture
def catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """The transform reads a small catalog of its own for "zh" (and none for English, as the real one)."""
    monkeypatch.setattr(messages, "catalog", lambda language: CATALOG if language == "zh" else None)


@pytest.mark.parametrize(
    ("code", "translated"),
    [
        ('print("self-check passed: all 3 strides predicted")', 'print("自检通过：3 个步长全部预测正确")'),
        (
            'print(f"self-check passed: all {len(VIEWS)} strides predicted")',
            'print(f"自检通过：{len(VIEWS)} 个步长全部预测正确")',
        ),
        (  # a conversion and a format spec are kept, a field's quotes too
            'expect(ok, f"the ratio is {g:.1f}, not {guess[name]!r}")',
            'expect(ok, f"这个比值是 {g:.1f}，而不是 {guess[name]!r}")',
        ),
        (  # the fields may change their order
            'print(f"x {a:>{width}}, y {b}")',
            'print(f"y {b}，x {a:>{width}}")',
        ),
        (  # a message added up from a literal and the rest
            'expect(not wrong, "these are not what you predicted:\\n  " + "\\n  ".join(wrong))',
            'expect(not wrong, "这些与你的预测不符：\\n  " + "\\n  ".join(wrong))',
        ),
        (  # a print of several arguments, matched as it prints them, a space apart
            'print("torch-level calls:", recorder.names)',
            'print("torch 一级的调用：", recorder.names)',
        ),
        (  # a string a field chooses
            "expect(x, f\"backward {'raised' if r else 'did not raise'}; you said {SAID}\")",
            "expect(x, f\"backward {'raised' if r else '没有抛出错误'}；你说 {SAID}\")",
        ),
        (  # keyword message
            'expect(ok, message="the ratio is 1, not 2")',
            'expect(ok, message="这个比值是 1，而不是 2")',
        ),
        (  # the type an answer should have
            'expect_type("SHAPE", SHAPE, tuple, "a tuple of ints")',
            'expect_type("SHAPE", SHAPE, tuple, "一个 int 元组")',
        ),
        (  # a print argument added up from strings
            'print("self-check passed:" + ", ".join(names))',
            'print("自检通过：" + ", ".join(names))',
        ),
        (  # braces in an entry are braces (`{{`), in the code's literal and in an f-string's
            'print(f"a set of names such as {{1, 2}}: {names}")',
            'print(f"名字的集合，例如 {{1, 2}}：{names}")',
        ),
    ],
)
def test_a_message_the_catalog_has_is_written_in_its_language(catalog: None, code: str, translated: str) -> None:
    assert translate_messages(code, "zh") == translated
    compile(translate_messages(code, "zh"), "cell", "exec")


def test_what_is_no_message_or_has_no_entry_stays_as_written(catalog: None) -> None:
    code = "\n".join(
        [
            'print("no entry for this line")',
            'expect(ok, f"no entry for {this}")',
            'ratios = {"the ratio is 1, not 2": 1}  # a key of the code, which its tables print',
            'assert ok, "the ratio is 1, not 2"',
            'label = "self-check passed: all 3 strides predicted"',
            'print("self-check passed: all 3 strides predicted", sep="")',  # a separator of its own: each alone
            "%timeit f()",
        ]
    )
    assert translate_messages(code, "zh") == code, "a cell Python cannot parse (a magic) is left whole"
    parsed = code.removesuffix("\n%timeit f()")
    assert translate_messages(parsed, "zh") == parsed.replace(
        'print("self-check passed: all 3 strides predicted", sep="")', 'print("自检通过：3 个步长全部预测正确", sep="")'
    )
    english = 'print("self-check passed: all 3 strides predicted")'
    assert translate_messages(english, "en") == english, "an English lab is left as it is"


def test_an_entry_that_drops_a_field_leaves_the_literal_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # Fields of two print arguments cannot be cut apart again where the translation moves one across the other.
    swapped = OutputCatalog.from_mapping({"{a} is {b}": "{b} 是 {a}"})
    monkeypatch.setattr(messages, "catalog", lambda language: swapped)
    code = 'print(x, "is", y)'
    assert translate_messages(code, "zh") == code


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.key)
def test_a_chinese_lab_page_shows_its_english_labs_run_and_its_messages_in_chinese(lab: Lab) -> None:
    """The page's path without a kernel: keyed as its English lab, given that run's outputs, then translated."""
    english, chinese = read_lab(ROOT / "docs", lab), read_lab(ROOT / "docs" / "zh", lab)
    assert code_key(chinese) == code_key(english), "the Chinese lab is its English lab's run"
    runs = LabRuns()
    runs.executed[code_key(english)] = [([], None) for c in english.cells if c.cell_type == "code"]
    bind(runs)
    try:  # a key that differed would start a kernel here: the assertion above stops that first
        shown, _ = LabExecutePreprocessor().preprocess(chinese, {})  # type: ignore[no-untyped-call]
    finally:
        unbind(runs)
    page, _ = LabMessagesPreprocessor().preprocess(shown, {})  # type: ignore[no-untyped-call]
    english_messages = [s for c in english.cells if c.cell_type == "code" for s in message_strings(c.source)]
    shown_messages = [s for c in page.cells if c.cell_type == "code" for s in message_strings(c.source)]
    assert [run for said in english_messages for run in english_runs(said)], "the English lab has messages"
    assert [run for said in shown_messages for run in english_runs(said)] == []
    assert code_key(read_lab(ROOT / "docs" / "zh", lab)) == code_key(english), "its source is left as it was"


def test_the_page_translates_after_the_executor_has_keyed_the_lab() -> None:
    config = json.loads((ROOT / "jupyter" / "jupyter_nbconvert_config.json").read_text(encoding="utf-8"))
    chain = [name.rsplit(".", 1)[-1] for name in config["HTMLExporter"]["default_preprocessors"]]
    assert chain.index("LabExecutePreprocessor") < chain.index("LabMessagesPreprocessor")


def test_a_chinese_lab_page_shows_its_messages_in_chinese(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """nbconvert with the project's configuration, as mkdocs-jupyter renders a lab that does not run."""
    for name, value in jupyter_environment(ROOT / "jupyter", {}).items():
        monkeypatch.setenv(name, value)
    lab = next(lab for lab in LABS if lab.key == "5-autograd")
    path = tmp_path / "lab.ipynb"
    path.write_text(nbformat.writes(read_lab(ROOT / "docs" / "zh", lab)), encoding="utf-8")  # type: ignore[no-untyped-call]
    page = str(nb2html(str(path), execute=False, no_prompt=True))
    assert "每多一个样本，保存的字节数应当增加同样多" in page
    assert "the saved bytes should grow" not in page


def test_the_lab_pages_cache_follows_the_messages_their_catalog_translates(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = ROOT / "docs"
    before = translated_messages_digest(docs)
    other = OutputCatalog.from_mapping(
        {"the saved bytes should grow by the same amount for every added example": "另一种译法"}
    )
    monkeypatch.setattr(messages, "catalog", lambda language: other if language == "zh" else None)
    assert translated_messages_digest(docs) != before
