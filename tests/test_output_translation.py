"""A proof's printed lines and figures on a Chinese page: one run, shown in the page's language.

The catalog (`pytorch_floors.i18n.outputs`, `outputs.zh.yml`) is applied where a block's output is rendered; the
proofs print English and are never edited for a language. The fast tests use small catalogs; one builds a
fixture site with an English page and its twin.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import re
from collections.abc import Callable
from html.parser import HTMLParser
from types import ModuleType

import pytest

from conftest import PROJECT_CACHE, ROOT, FixtureSite
from pytorch_floors.claims import Claim
from pytorch_floors.errors import InputError
from pytorch_floors.execution.cache import OutputCache, machine_fingerprint
from pytorch_floors.execution.engine import Engine, ProofFailure
from pytorch_floors.execution.facts import torch_facts
from pytorch_floors.execution.options import BlockOptions
from pytorch_floors.execution.provenance import collect
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import ExecBlock
from pytorch_floors.floors import FLOORS
from pytorch_floors.i18n.messages import PageLanguage
from pytorch_floors.i18n.outputs import OutputCatalog, catalog, english_runs, translate_line, translate_output
from pytorch_floors.plugin.pages import first_docstring_line, proofs_page
from pytorch_floors.recordings.recorder import planned_blocks
from pytorch_floors.render.proof_frame import claims_html, recorded_claims_html

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


def test_a_claims_detail_and_reason_are_shown_in_the_pages_language_with_the_runs_numbers() -> None:
    # A Chinese page translated a claim's statement and showed its detail and its reason in English (issue 58).
    measured = Claim("the first call pays for compiling", held=True, detail="first 567 ms, later 96.4 µs")
    one_core = Claim(
        "two threads are faster than one",
        held=True,
        applies=False,
        why_not="this process may run on one CPU only: there is no second thread to add",
    )
    result = BlockResult("compile.md", "cost", None, "ran", 1.0, claims=(measured, one_core))
    page = PageLanguage("zh", {measured.statement: "首次调用要编译", one_core.statement: "两个线程比一个快"})
    for chinese in (claims_html(result, page), recorded_claims_html(result.claims, "ci-2core", page)):
        assert '首次调用要编译 <span class="floors-claim__detail">（首次 567 ms，之后 96.4 µs）</span>' in chinese
        assert "</strong> 这个进程只能在一个 CPU 上运行：没有第二个线程可加。 <span" in chinese
        assert "later" not in chinese and "second thread" not in chinese
    for english in (claims_html(result, "en"), recorded_claims_html(result.claims, "ci-2core", "en")):
        assert '<span class="floors-claim__detail">(first 567 ms, later 96.4 µs)</span>' in english
        assert "</strong> this process may run on one CPU only: there is no second thread to add. <span" in english


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


def test_braces_in_an_entry_are_braces_on_both_sides() -> None:
    # `{{` is a brace in a template: an entry without fields matches it, and its translation shows one.
    lines = OutputCatalog.from_mapping({'a set such as {{"kernel"}}': '一个集合，例如 {{"kernel"}}'})
    assert lines.line('  a set such as {"kernel"}') == '  一个集合，例如 {"kernel"}'


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


# --- the real site's outputs, without building it ---

RECORDINGS = sorted((ROOT / "recordings").glob("*/recording.json"))
PROOF_CACHE = PROJECT_CACHE / "floors-exec"

# A run of English words in a quoted error (`RuntimeError: view size is not compatible…`) or a Python repr
# (`<built-in function mul>`) is the program's own text: a reader searches for it as it is.
_QUOTED = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning)\b:? .*|<built-in function \w+>")

_WRAPPED = "a quoted error message, wrapped by the proof: a line after the one naming the error"
_TRUNCATED = "a quoted error message, cut short by the proof (…): the reader searches for it as it is"
_AFTER_LABEL = "a quoted error message after the proof's own (translated) label"
_DATA = "program data: what a library or a compiler prints about itself"
_CODE = "code: a line of generated C++ or of the traced program"
_SIGNATURE = "a quoted error message: the signatures the argument parser's TypeError lists"

ALLOWED_ENGLISH: dict[str, str] = {
    # compile.md: Dynamo's own words for a guard that failed and for a graph break.
    "N/N: tensor 'x' size mismatch at index N. expected N, actual N": "a quoted guard failure, as Dynamo words it",
    "中断 N：Failed to trace builtin operator": "a quoted graph-break reason, as Dynamo words it",
    'at: print(" (the print runs as plain Python, between two graphs)")': _CODE,
    "#pragma omp for": _CODE,
    "#pragma omp parallel": _CODE,
    # floor 1 and 7: the view error, wrapped or whole.
    "tensor's size and stride (at least one dimension spans across two": _WRAPPED,
    "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
    "contiguous subspaces). Use .reshape(...) instead.": "a quoted error message, printed whole on its own line",
    # floor 3: the parser's TypeError and inspect's.
    "* (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)": _SIGNATURE,
    "* (tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)": _SIGNATURE,
    "* (tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)": (
        _SIGNATURE
    ),
    "class, method, function, traceback, frame, or code object was expected, got": _WRAPPED,
    # floor 4
    "从 Python 为 AutocastCPU 注册第二个 fallback：Tried to register multiple backend fallbacks for the same "
    "dispatch key AutocastCPU": _AFTER_LABEL,
    "在 meta 张量上，注册 fake 内核之前：floors_cxx::twice: attempted to run this operator with Meta tensors, "
    "but there was no fake impl or Meta ker...": _AFTER_LABEL,
    # floor 5: autograd's errors, wrapped or cut short.
    "autograd.grad(). Specify retain_graph=True if you need to backward through": _WRAPPED,
    "directly access saved tensors after they have already been freed). Saved": _WRAPPED,
    "intermediate values of the graph are freed when you call .backward() or": _WRAPPED,
    "the graph a second time or if you need to access saved tensors after": _WRAPPED,
    "one of the variables needed for gradient computation has been modified by an inplace": _WRAPPED,
    "operation: [torch.FloatTensor [N]], which is output N of Mul, is at version N; expected": _WRAPPED,
    "version N instead. Hint: enable anomaly detection to find the operation that failed to": _WRAPPED,
    "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).": _WRAPPED,
    "A view was created in no_grad mode and is being modified inplace with grad mo...": _TRUNCATED,
    "In order to use an autograd.Function with functorch transforms (vmap, grad, j...": _TRUNCATED,
    "Output N of DoubleInPlaceUnmarked is a view and is being modified inplace. Th...": _TRUNCATED,
    "Output N of Split is a view and is being modified inplace. This view is the o...": _TRUNCATED,
    "Output N of Unbind is a view and is being modified inplace. This view is the ...": _TRUNCATED,
    "You tried to vmap over SineNoRule, but it does not have vmap support. Please ...": _TRUNCATED,
    ".backward() 作用于它：trying to differentiate twice a function that was marked with @once_d...": (_AFTER_LABEL),
    "torch.autograd.grad 作用于它：The differentiated Tensor at index N appears to not have been used in...": (
        _AFTER_LABEL
    ),
    "y.mul_(N) 之后 backward：被拒绝，one of the variables needed for gradient computation has bee...": _AFTER_LABEL,
    "之前取得的 b.sin()，然后 backward：one of the variables needed for gradient computat...": _AFTER_LABEL,
    "二阶梯度：element N of tensors does not require grad and does not have a grad_fn": _AFTER_LABEL,
    "在要求梯度的叶子张量的视图上做同样的事：a view of a leaf Variable that requires grad is being used in an "
    "in-place operation.": _AFTER_LABEL,
    "已标记，作用于要求梯度的叶子张量：a leaf Variable that requires grad has been used in an in-place...": (
        _AFTER_LABEL
    ),
    # floor 6: torch.__config__.show(), quoted.
    "Intel(R) oneAPI Math Kernel Library Version N-Product Build N": _DATA,
    "LAPACK is enabled (usually provided by MKL)": _DATA,
    "GPU：Apple MPS（Metal）；matmul 交给 Metal Performance Shaders": "a proper name: Apple's framework",
    # Claims' details (compile.md, floor 5): the generated code's pragma, the traced program's lines, and the words
    # of autograd's error that the proof found in it.
    "N 个线程，#pragma omp parallel：True": _CODE,
    "N 个线程，#pragma omp parallel：False": _CODE,
    'print(" (the print runs as plain Python, between two graphs)") | if z.sum().item() > N:': _CODE,
    "消息提到 'created inside a custom Function'": "a quoted error message: the words the proof found in it",
}
"""Lines a Chinese page shows with English words, each as `english_line` spells it, and why that is right."""


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.runs: list[str] = []

    def handle_data(self, data: str) -> None:
        self.runs += data.split("\n")


def english_line(line: str) -> str:
    """A line as the allow-list spells it: its ends' spaces dropped, every number N."""
    return re.sub(r"\d+(?:\.\d+)?", "N", line.strip())


def english_left(output: str, *, html: bool) -> list[str]:
    """The lines of an output, as a Chinese page shows it, that hold English prose no rule or entry allows."""
    shown = translate_output(output, "zh", html=html)
    if html:
        reader = _Text()
        reader.feed(shown)
        reader.close()
        lines = reader.runs
    else:
        lines = shown.split("\n")
    return [line for line in lines if english_runs(_QUOTED.sub("", line)) and english_line(line) not in ALLOWED_ENGLISH]


def real_outputs() -> list[tuple[str, str, bool]]:
    """Every output the Chinese pages show: each block of every recording, and this checkout's proof cache."""
    outputs = []
    for path in RECORDINGS:
        recording = json.loads(path.read_text(encoding="utf-8"))
        for block in recording["blocks"]:
            if (ROOT / "docs" / "zh" / block["page"]).is_file():
                where = f"{path.parent.name}: {block['page']}#{block['block']}"
                outputs.append((where, block["output"], bool(block["html"])))
    for result in shown_from_the_cache():
        outputs.append(
            (f"cache: {result.page}#{result.block_id}", result.output, result.output.lstrip().startswith("<"))
        )
    return outputs


@functools.cache
def shown_from_the_cache() -> tuple[BlockResult, ...]:
    """What a build of this checkout shows from its proof cache without running anything: each planned block's entry.

    The cache also keeps the entries of code that has changed since (the next full build prunes them): a
    proof printed anew has its old lines there, whose catalog entries went with the old layout, and no
    page shows them, so they are not read. A block with no entry here (a fresh clone) is in the recordings.
    """
    facts = torch_facts()
    engine = Engine(
        ROOT,
        OutputCache(PROOF_CACHE, "on"),
        execute=False,
        provenance=collect(facts),
        advisory_claims=True,
        machine=machine_fingerprint(facts),
    )
    planned = planned_blocks(ROOT / "docs", ROOT)
    try:
        for page, blocks in planned.items():
            engine.plan(page, blocks)
        for page, blocks in planned.items():
            engine.begin_page(page, "")
            for block in blocks:
                with contextlib.suppress(ProofFailure):
                    engine.run_scanned(block)
            engine.end_page()
    finally:
        engine.close()
    return tuple(result for result in engine.records if result.status == "cached")


def real_claim_words() -> list[tuple[str, str, bool]]:
    """Every claim's detail and reason the Chinese pages show, from the same recordings and proof cache, as lines.

    A claim's statement comes translated from the page's front matter; its detail (`detail=`, "first 567 ms, later
    96.4 µs") and its reason for not applying (`why_not=`) are written by the proof, in English, and are shown
    through the catalog of printed lines as a printed line is (`render.templates.words_in`: `printed_line`).
    """
    claims: list[tuple[str, dict[str, object]]] = []
    for path in RECORDINGS:
        recording = json.loads(path.read_text(encoding="utf-8"))
        for block in recording["blocks"]:
            if (ROOT / "docs" / "zh" / block["page"]).is_file():
                claims += [(f"{path.parent.name}: {block['page']}#{block['block']}", c) for c in block["claims"]]
    for result in shown_from_the_cache():
        claims += [(f"cache: {result.page}#{result.block_id}", claim.__dict__) for claim in result.claims]
    return [
        (f"{where}, {claim['file']}:{claim['line']} {field}", str(claim[field]), False)
        for where, claim in claims
        for field in ("detail", "why_not")
        if claim[field]
    ]


def test_an_english_run_left_in_an_output_fails_naming_its_line() -> None:
    assert english_left("threads  GFLOP/s\nthe matmul ran faster here\n", html=False) == ["the matmul ran faster here"]
    assert english_left("<svg><text>an untranslated axis label</text></svg>", html=True) == [
        "an untranslated axis label"
    ]
    assert english_left("x.view(3): RuntimeError: shape '[3]' is invalid for input of size 4", html=False) == []
    assert english_left("tensor([1., 2.])\nCPU, ADInplaceOrView, AutogradCPU", html=False) == []


def test_no_english_prose_is_left_in_what_the_chinese_pages_show() -> None:
    # A claim's detail and reason showed in English beside its Chinese statement (issue 58): they are checked too.
    outputs, claim_words = real_outputs(), real_claim_words()
    assert len(outputs) > 100, "the recordings hold every block of the site"
    assert len(claim_words) > 100, "the recordings hold every claim of the site"
    outputs += claim_words
    left = sorted(
        {
            f"{english_line(line)!r}  ({where})"
            for where, output, html in outputs
            for line in english_left(output, html=html)
        }
    )
    assert left == [], "English a Chinese page shows (add its Chinese to outputs.zh.yml):\n" + "\n".join(left)


def page_proofs() -> list[str]:
    """The proofs the pages with a Chinese twin include (`snippets/…`)."""
    proofs: set[str] = set()
    for page in (ROOT / "docs").rglob("*.md"):
        if (ROOT / "docs" / "zh" / page.relative_to(ROOT / "docs")).is_file():
            proofs |= set(re.findall(r"snippets/[\w/.-]+\.py", page.read_text(encoding="utf-8")))
    return sorted(proof for proof in proofs if (ROOT / proof).is_file())


def printed_literals() -> list[tuple[str, str]]:
    """Each line a page's proofs print as a plain string: the branches a CPU build never takes too (a GPU, MPS)."""
    proofs = page_proofs()
    lines = []
    for proof in proofs:
        for node in ast.walk(ast.parse((ROOT / proof).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    lines += [(f"{proof}:{node.lineno}", line) for line in first.value.split("\n")]
    return lines


def test_no_english_prose_is_left_in_a_line_a_proof_prints_on_any_machine() -> None:
    # The recordings are CPU runs: what a proof prints on a GPU, on MPS or without a C++ compiler is read from its
    # source (a plain string; an f-string's lines are checked where a recording holds them).
    lines = printed_literals()
    assert len(lines) > 100
    left = [f"{where}: {line!r}" for where, line in lines for _ in english_left(line, html=False)]
    assert left == [], "English a Chinese page would show (add its Chinese to outputs.zh.yml):\n" + "\n".join(left)


def test_the_proofs_page_says_in_chinese_what_each_proof_shows() -> None:
    # Its 它说明什么 column showed each proof's English docstring on the Chinese page.
    proof = "snippets/8-chip/thread_scaling.py"
    planned = {
        "floors/8-chip.md": [ExecBlock("floors/8-chip.md", "threads", 1, BlockOptions("threads"), proofs=[proof])]
    }
    english = first_docstring_line(ROOT / proof)
    chinese = proofs_page(planned, ROOT, "zh")
    assert translate_line(english, "zh") in chinese and english not in chinese
    assert english in proofs_page(planned, ROOT, "en")
    summaries = {first_docstring_line(ROOT / proof) for proof in page_proofs()}
    assert len(summaries) > 50
    assert sorted(s for s in summaries if translate_line(s, "zh") == s) == [], "a proof's summary has no Chinese"


def test_the_matmul_charts_axis_unit_reads_in_chinese() -> None:
    # Floor 6's matmul chart and the dtypes chart kept "GFLOP/s (2 n³ per call / time)" in English on the zh
    # page: the English-run check cuts runs at "/", so no run of three words was left to catch it.
    shown = translate_line("GFLOP/s (2 n³ per call / time)", "zh")
    assert "per call" not in shown and "耗时" in shown


def test_every_sentence_the_dtypes_proof_can_print_about_a_reduced_precision_product_is_in_chinese(
    load_proof: Callable[[str], ModuleType],
) -> None:
    """A processor without bfloat16 instructions (an AMD EPYC, Zen 3) printed "bfloat16: no library logged it, so
    ATen's own fallback gemm ran": the catalog had that sentence for float16 only, and the Chinese page showed it in
    English. Each dtype, served by oneDNN or left to ATen, is translated."""
    proof = load_proof("6-kernels/dtypes.py")
    rates = {"matmul float32": 100.0, "matmul bfloat16": 20.0, "matmul float16": 10.0}
    for library in ("oneDNN", ""):
        sentences, _ = proof.reduced_precision({"bfloat16": library, "float16": library}, rates)
        assert len(sentences) == 2, sentences
        for sentence in sentences:
            assert english_left(sentence, html=False) == [], sentence


def test_the_crossing_charts_legend_is_in_chinese_on_the_chinese_page() -> None:
    """ "fixed overhead (a + b at 1 element)" stayed English in Floor 3's Chinese legend: two words, then a number,
    too short a run of prose for the check of English left over, and the catalog had no entry for it."""
    for label in ("a + b (allocates its result)", "fixed overhead (a + b at 1 element)"):
        shown = translate_line(label, "zh")
        assert shown is not None and shown != label and "overhead" not in shown, (label, shown)


def test_the_first_entry_that_matches_a_line_translates_it_whatever_its_line_starts_with() -> None:
    # The catalog looks only at the entries a line's first character allows, and remembers each answer: in the
    # file's order still, an entry that starts with a field before one that starts with the line's words.
    lines = OutputCatalog.from_mapping(
        {"{n} items": "{n} 项", "5 items": "五项", "at {t} s": "在 {t} 秒", "at once": "立刻", "x": "叉"}
    )
    assert lines.line("5 items") == "5 项", "the first entry that matches, though another starts as the line does"
    assert lines.line("5 items") == "5 项", "and so again, remembered"
    assert lines.line("  at once") == "  立刻" and lines.line("at 3 s") == "在 3 秒"
    assert lines.line("at 3 ms") is None and lines.line("zzz") is None and lines.line("   ") is None
    assert lines.line("x") == "叉" and lines.line("xx") is None
