"""A proof's printed lines and figures on a Chinese page: one run, shown in the page's language.

The catalog (`pytorch_floors.i18n.outputs`, `outputs.zh.yml`) is applied where a block's output is rendered; the
proofs print English and are never edited for a language. The fast tests use small catalogs; one builds a
fixture site with an English page and its twin.
"""

from __future__ import annotations

import pytest

from conftest import FixtureSite
from pytorch_floors.errors import InputError
from pytorch_floors.floors import FLOORS
from pytorch_floors.i18n.outputs import OutputCatalog, catalog, english_runs, translate_line, translate_output

SAMPLE = OutputCatalog.from_mapping(
    {
        "Here, on {threads} threads against one, the matmul ran {ratio} as fast": (
            "这里，{threads} 个线程对比一个线程，matmul 快了 {ratio}"
        ),
        "Read bandwidth against buffer size (one CPU thread)": "读带宽随缓冲区大小的变化（单个 CPU 线程）",
    }
)

THREADS = "Here, on 2 threads against one, the matmul ran 1.63× as fast"
SCALING = (
    "Here, on 2 threads against one, the matmul ran 1.94× as fast and the sum ran 2.62× as fast: the sum gained more."
)


def test_a_line_is_translated_whole_with_the_runs_values_in_their_fields() -> None:
    assert SAMPLE.line(THREADS) == "这里，2 个线程对比一个线程，matmul 快了 1.63×"
    assert SAMPLE.line("  " + THREADS + " ") == "  这里，2 个线程对比一个线程，matmul 快了 1.63× "
    # Only a whole line matches: a longer line, a table row or a tensor is program data, shown as printed.
    assert SAMPLE.line(THREADS + ", and more") is None
    assert SAMPLE.line("tensor([1., 2.])") is None


def test_the_chinese_catalog_translates_what_the_proofs_print_and_english_stays_as_it_is() -> None:
    line = SCALING
    chinese = "在这里，2 个线程对比一个线程，matmul 快了 1.94×，sum 快了 2.62×：sum 获益更多。"
    assert translate_line(line, "zh") == chinese
    assert translate_line(line, "en") == line
    output = f"threads    GFLOP/s\n  1         50.0\n{line}\n"
    shown = translate_output(output, "zh", html=False)
    # Line for line: a recording's differing lines are marked by number on the English text.
    assert shown.count("\n") == output.count("\n") and shown.splitlines()[:2] == output.splitlines()[:2]
    assert translate_output(output, "en", html=False) is output


def test_a_figures_text_runs_are_translated_and_its_markup_kept() -> None:
    figure = (
        '<figure class="floors-chart"><svg viewBox="0 0 10 10" role="img" aria-labelledby="t1">'
        '<title id="t1">Read bandwidth against buffer size (one CPU thread)</title>'
        '<text x="1" y="2" text-anchor="middle">read bandwidth (GB/s, log scale)</text>'
        '<text x="3" y="4">a &lt; b &amp; tensor([1.])</text></svg>'
        "<figcaption>Read bandwidth against buffer size (one CPU thread)</figcaption></figure>"
    )
    shown = translate_output(figure, "zh", html=True)
    assert shown.count("读带宽随缓冲区大小的变化（单个 CPU 线程）") == 2
    assert "读带宽（GB/s，对数坐标）" in shown
    assert '<svg viewBox="0 0 10 10" role="img" aria-labelledby="t1">' in shown  # the tag as written
    assert '<text x="1" y="2" text-anchor="middle">' in shown
    assert "a &lt; b &amp; tensor([1.])" in shown  # text the catalog lacks, escaped as it came
    untouched = "<pre>tensor([1., 2.])</pre><script>if (a < b) {}</script>"
    assert translate_output(untouched, "zh", html=True) is untouched


def test_the_buildings_floors_read_the_registrys_chinese_titles() -> None:
    storeys = "".join(
        f'<span class="floors-building__number">Floor {floor.number}</span>'
        f'<span class="floors-building__title">{floor.title}</span>'
        for floor in FLOORS
    )
    shown = translate_output(storeys, "zh", html=True)
    for floor in FLOORS:
        assert f'>第 {floor.number} 层</span><span class="floors-building__title">{floor.title_zh}<' in shown


def test_script_text_is_never_read_as_words() -> None:
    page = "<script>const s = 'Read bandwidth against buffer size (one CPU thread)';</script><p>Floor 1</p>"
    assert translate_output(page, "zh", html=True) == (
        "<script>const s = 'Read bandwidth against buffer size (one CPU thread)';</script><p>第 1 层</p>"
    )


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"ran {a} as fast": "快了 {b}"}, "has the fields ['b'], its English ['a']"),
        ({"ran {a} and {a}": "{a}"}, "each field is a plain name, used once"),
        ({"ran {a.x}": "{a}"}, "each field is a plain name, used once"),
        ({"two\nlines": "两行"}, "an entry is one line"),
        ({"ran {": "快"}, "not a template"),
    ],
)
def test_an_entry_whose_fields_cannot_be_filled_is_refused_when_read(entry: dict[str, str], why: str) -> None:
    with pytest.raises(InputError, match=why.replace("[", r"\[").replace("]", r"\]")):
        OutputCatalog.from_mapping(entry)


def test_the_chinese_catalog_reads_and_english_has_none() -> None:
    zh = catalog("zh")
    assert zh is not None and len(zh.entries) > 400
    assert catalog("en") is None


def test_an_english_run_is_three_words_of_prose_not_names_or_variables() -> None:
    assert english_runs("Here, on 2 threads against one, the matmul ran 1.63× as fast") == [
        "threads against one",
        "the matmul ran",
    ]
    assert english_runs("It ran fast.") == ["It ran fast"]
    assert english_runs("CPU, ADInplaceOrView, AutogradCPU, AutocastCPU") == []
    assert english_runs("matrix size n (n x n @ n x n)") == []
    assert english_runs("torch.add(a, b, out=c) grad_fn.next_functions x.t().contiguous()") == []
    assert english_runs("在这里，2 个线程对比一个线程，matmul 快了 1.94×") == []


TWIN_ENGLISH = """## Scaling { #scaling }

Two threads against one.

```python exec="1" id="scaling"
print("threads    GFLOP/s")
print("Here, on 2 threads against one, the matmul ran 1.94× as fast "
      "and the sum ran 2.62× as fast: the sum gained more.")
```

```python exec="1" html="1" id="chart"
print('<figure><svg viewBox="0 0 4 4"><text x="1" y="1">read bandwidth (GB/s, log scale)</text></svg>'
      '<figcaption>Read bandwidth against buffer size (one CPU thread)</figcaption></figure>')
```
"""

TWIN_CHINESE = """---
description: 中文页面
---

## 扩展 { #scaling }

两个线程对比一个线程。

```python exec="1" id="scaling"
print("threads    GFLOP/s")
print("Here, on 2 threads against one, the matmul ran 1.94× as fast "
      "and the sum ran 2.62× as fast: the sum gained more.")
```

```python exec="1" html="1" id="chart"
print('<figure><svg viewBox="0 0 4 4"><text x="1" y="1">read bandwidth (GB/s, log scale)</text></svg>'
      '<figcaption>Read bandwidth against buffer size (one CPU thread)</figcaption></figure>')
```
"""


def test_a_twin_shows_its_english_blocks_lines_and_figure_in_chinese(fixture_site: FixtureSite) -> None:
    fixture_site.page("index.md", TWIN_ENGLISH)
    fixture_site.write("docs/zh/index.md", TWIN_CHINESE)
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    assert build.log.count("docs/index.md › scaling: ran in") == 1  # one run for both languages
    english, chinese = build.page(""), build.page("zh")
    assert "the sum gained more." in english and "Read bandwidth against buffer size" in english
    assert "sum 获益更多。" in chinese and "the sum gained more" not in chinese
    assert "threads    GFLOP/s" in chinese  # a table's header row the catalog lacks is shown as printed
    assert "读带宽（GB/s，对数坐标）" in chinese and "读带宽随缓冲区大小的变化（单个 CPU 线程）" in chinese
    assert "Read bandwidth against buffer size" not in chinese
