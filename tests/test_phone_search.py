"""A lab's folded answers leave the search index, read back through Material's own parser (no build).

The built index is checked in `test_phone.py` (`test_no_folded_answer_of_a_lab_is_in_the_search_index`).
"""

from material.plugins.search.plugin import Parser

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


def indexed_text(html: str) -> str:
    parser = Parser()
    parser.feed(html)
    parser.close()
    return " ".join("".join(section.title) + " " + "".join(section.text) for section in parser.data)


def test_a_labs_folded_answers_leave_the_index_and_its_prose_stays() -> None:
    text = indexed_text(narrow_search(LAB))
    for prose in ("Exercise 1", "which keys a sparse tensor carries", "Exercise 2", "logs every operator"):
        assert prose in text, (prose, text)
    for answer in ("What to notice", "swaps the backend key", "_schema", "The dtype is not a key"):
        assert answer not in text, (answer, text)


def test_a_success_block_outside_a_lab_stays_in_the_index() -> None:
    page = '<h2 id="a">A</h2><details class="success"><summary>Done</summary><p>It worked.</p></details>'
    assert "It worked." in indexed_text(narrow_search(page))
