"""Proof outputs and a lab's folded answers leave the search index, read back through Material's own parser (no build).

The built index is checked in `test_phone.py` (`test_no_folded_answer_of_a_lab_is_in_the_search_index`).
"""

import contextlib
import io

import pytest
from test_search_exclusion import indexed_text

from pytorch_floors.claims import Claim
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.plot import bar_chart, show
from pytorch_floors.render.proof_frame import claims_html, recorded_claims_html
from pytorch_floors.render.search_scope import narrow_search

# A lab's markdown cell as mkdocs-jupyter renders it: the prompt, then the folded answer (with a code
# block in it), then the next exercise's prose.
LAB = """<div class="jupyter-wrapper"><div class="jp-Notebook">
<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedMarkdown">
<h2 id="keys">Exercise 1 · Keys</h2><p><strong>Predict</strong> which keys a sparse tensor carries.</p>
</div></div>
<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedMarkdown">
<details class="success"><summary>What to notice</summary>
<p>A layout that needs kernels of its own swaps the backend key.</p>
<div class="highlight"><pre><code>print(torch.ops.aten.add_.Tensor._schema)</code></pre></div>
<p>The dtype is not a key.</p>
</details>
</div></div>
<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedMarkdown">
<h2 id="ops">Exercise 2 · Operators</h2><p>The measurement logs every operator.</p>
</div></div>
</div></div>"""


def test_a_labs_folded_answers_leave_the_index_and_its_prose_stays() -> None:
    text = indexed_text(narrow_search(LAB))
    for prose in ("Exercise 1", "which keys a sparse tensor carries", "Exercise 2", "logs every operator"):
        assert prose in text, (prose, text)
    for answer in ("What to notice", "swaps the backend key", "_schema", "The dtype is not a key"):
        assert answer not in text, (answer, text)


def test_a_success_block_outside_a_lab_stays_in_the_index() -> None:
    page = '<h2 id="a">A</h2><details class="success"><summary>Done</summary><p>It worked.</p></details>'
    assert "It worked." in indexed_text(narrow_search(page))


def shown(text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What `plot.show` prints on a page for a chart and the numbers behind it."""
    monkeypatch.setenv("FLOORS_OUTPUT", "html")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        show(bar_chart([("a", 1.0), ("b", 2.0)], title="Two bars", value_label="seconds"), text=text, name="bars")
    return printed.getvalue()


def test_a_figure_and_the_numbers_behind_it_leave_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    output = shown("measured: 12.3 GFLOP/s at n = 512", monkeypatch)
    page = (
        '<h2 id="rate">Rate</h2><p>Look for the rate at each size.</p>'
        f'<div class="floors-proof"><div class="floors-proof__output">{output}</div></div><p>After it.</p>'
    )
    text = indexed_text(narrow_search(page))
    assert "Look for the rate" in text and "After it." in text, text
    for measured in ("12.3 GFLOP/s", "Two bars", "seconds"):
        assert measured not in text, (measured, text)


def test_a_proofs_claims_leave_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    claims = (
        Claim("copy time grows with size", held=True, detail="ratio 3.1"),
        Claim("two threads beat one", held=True, applies=False, why_not="one core: no second thread"),
        Claim("the cache is faster", held=False, detail="1.2x"),
    )
    result = BlockResult("floors/x.md", "x-1", None, "ran", 0.1, claims=claims)
    page = (
        '<h2 id="copy">Copy</h2><p>Copy time grows with size.</p>'
        f"{claims_html(result, 'en')}{recorded_claims_html(claims, 'Apple M3 Max', 'en')}<p>After them.</p>"
    )
    text = indexed_text(narrow_search(page))
    assert "Copy time grows with size." in text and "After them." in text, text
    for measured in ("Claims, checked", "Held:", "ratio 3.1", "one core", "Apple M3 Max", "did not show"):
        assert measured not in text, (measured, text)
