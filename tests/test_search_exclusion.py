"""What the hook leaves out of Material's search index, read back through Material's own parser."""

from pathlib import Path

from material.plugins.search.plugin import Parser
from mkdocs.utils.meta import get_data

from conftest import ROOT
from pytorch_floors.render.proof_frame import proof_frame_html
from pytorch_floors.render.search_scope import narrow_search

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
    text = indexed_text(narrow_search(LAB))
    assert "Setup" in text and "Run this first" in text
    for noise in ("import", "Copied!", "torch 2.x"):
        assert noise not in text, (noise, text)


def test_pages_without_a_notebook_keep_their_code_in_the_index() -> None:
    page = '<h2 id="a">A</h2><pre><code>torch.add</code></pre>'
    assert "torch.add" in indexed_text(narrow_search(page))


# A floor's proof as the proof frame renders it (source collapsed, download line, output), and a BibTeX
# entry as the Cite page shows it.
FRAME = proof_frame_html(
    proof="snippets/4/x.py",
    href="x.py",
    listing='<div class="highlight"><pre><code>import torch</code></pre></div>',
    output='<div class="highlight"><pre><span></span><code>aten::add.Tensor(Tensor self)</code>\n</pre></div>',
    claims="",
    seconds="7 ms",
    cached=False,
    language="en",
)
PROOF = f"""<h2 id="op-schema">Operator schemas</h2><p>Look for the schema of add.</p>
{FRAME}
<p>After the proof, prose again.</p>
<pre><code class="language-bibtex">@misc{{pytorchfloors, title = {{Floors}}}}</code></pre>
<p>Cite the edition you read.</p>"""


def test_proof_outputs_download_lines_and_bibtex_stay_out_while_prose_stays() -> None:
    text = indexed_text(narrow_search(PROOF))
    for prose in ("Operator schemas", "Look for the schema of add.", "After the proof, prose again.", "Cite the"):
        assert prose in text, (prose, text)
    for noise in ("import torch", "aten::add.Tensor", "Download and run it", "ran in", "@misc"):
        assert noise not in text, (noise, text)


def test_api_reference_pages_leave_the_index_and_its_index_page_stays() -> None:
    reference = Path(ROOT) / "docs" / "reference"
    for page in sorted(reference.glob("*.md")):
        _, meta = get_data(page.read_text(encoding="utf-8"))
        excluded = meta.get("search", {}).get("exclude", False)
        assert excluded is (page.name != "index.md"), page.name


# A "Check yourself" question as Material writes `??? question "…"`, and a lab's folds as the project's
# nbconvert template writes them (a solution's fold holds its output's).
QUESTIONS = """<h2 id="check-yourself">Check yourself</h2>
<details class="question">
<summary>Where does the first call's time go?</summary>
<p>In compiling: Dynamo traces the frame.</p>
<ul><li>and Inductor writes C++</li></ul>
</details>
<p>Then the lab.</p>"""
FOLDS = """<div class="jupyter-wrapper"><h2 id="exercise-1">Exercise 1</h2><p>Predict the keys.</p>
<details class="floors-fold"><summary>Solution</summary><div class="jp-Cell">
<details class="floors-fold"><summary>Output: open it after you have predicted</summary><div>x</div></details>
</div></details><p>After the fold.</p></div>"""


def test_check_yourself_answers_leave_the_index_and_their_questions_stay() -> None:
    text = indexed_text(narrow_search(QUESTIONS))
    for kept in ("Check yourself", "Where does the first call's time go?", "Then the lab."):
        assert kept in text, (kept, text)
    for answer in ("Dynamo traces the frame", "Inductor writes C++"):
        assert answer not in text, (answer, text)


def test_a_labs_fold_labels_leave_the_index_and_its_prose_stays() -> None:
    text = indexed_text(narrow_search(FOLDS))
    assert "Predict the keys." in text and "After the fold." in text
    for label in ("Solution", "open it after you have predicted"):
        assert label not in text, (label, text)


def test_an_open_questions_answer_leaves_the_index_too() -> None:
    # `???+ question` writes the block open (`<details class="question" open="open">`): the pattern the marks
    # were once put by matched only the closed one, so an open question's answer was indexed.
    opened = QUESTIONS.replace('<details class="question">', '<details class="question" open="open">')
    text = indexed_text(narrow_search(opened))
    assert "Where does the first call's time go?" in text
    for answer in ("Dynamo traces the frame", "Inductor writes C++"):
        assert answer not in text, (answer, text)


def test_marks_change_only_the_tags_they_mark() -> None:
    marked = narrow_search(PROOF)
    assert marked.replace(" data-search-exclude", "") == PROOF.replace(" data-search-exclude", "")
