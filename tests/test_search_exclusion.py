"""What the hook leaves out of Material's search index, read back through Material's own parser."""

from material.plugins.search.plugin import Parser

from pytorch_floors.site_build import _leave_out_of_search

# The shape mkdocs-jupyter gives a markdown cell and a code cell: the code cell's input holds the
# clipboard button (a <div> inside a <div>) before the highlighted code.
LAB = """<div class="jupyter-wrapper"><div class="jp-Notebook">
<div class="jp-Cell jp-MarkdownCell"><div class="jp-InputArea jp-Cell-inputArea"><div class="jp-RenderedMarkdown">
<h2 id="setup">Setup</h2><p>Run this first: it defines the helpers.</p>
</div></div></div>
<div class="jp-Cell jp-CodeCell"><div class="jp-InputArea jp-Cell-inputArea">
<div class="jp-CodeMirrorEditor"><div class="zeroclipboard-container"><clipboard-copy for="cell-1">
<div><span class="notice" hidden="">Copied!</span></div></clipboard-copy></div>
<div class="highlight-ipynb"><pre><span>import</span> <span>time</span></pre></div></div></div>
<div class="jp-OutputArea jp-Cell-outputArea"><div class="jp-OutputArea-output"><pre>torch 2.x</pre></div></div>
</div></div></div>"""


def indexed_text(html: str) -> str:
    parser = Parser()
    parser.feed(html)
    parser.close()
    return " ".join("".join(section.title) + " " + "".join(section.text) for section in parser.data)


def test_lab_code_outputs_and_copy_notices_stay_out_of_the_index_while_prose_stays() -> None:
    text = indexed_text(_leave_out_of_search(LAB))
    assert "Setup" in text and "Run this first" in text
    for noise in ("import", "Copied!", "torch 2.x"):
        assert noise not in text, (noise, text)


def test_pages_without_a_notebook_keep_their_code_in_the_index() -> None:
    page = '<h2 id="a">A</h2><pre><code>torch.add</code></pre>'
    assert "torch.add" in indexed_text(_leave_out_of_search(page))
