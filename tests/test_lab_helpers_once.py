"""The self-check helpers are shown once per language, not inlined into every lab page (they weighed 44 KB each)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from mkdocs_jupyter.nbconvert2 import nb2html  # type: ignore[import-untyped]

from conftest import ROOT
from pytorch_floors.floors import LABS
from pytorch_floors.labs.cells import checker_source, read_lab
from pytorch_floors.labs.kernel import CHECKER_FILE
from pytorch_floors.labs.launch import Launch
from pytorch_floors.labs.notebooks import jupyter_environment, publish_notebooks

LAB = LABS[0]


def _page(language_folder: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    for name, value in jupyter_environment(ROOT / "jupyter", {}).items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "lab.ipynb"
    path.write_text(nbformat.writes(read_lab(ROOT / "docs" / language_folder, LAB)), encoding="utf-8")  # type: ignore[no-untyped-call]
    return str(nb2html(str(path), execute=False, no_prompt=True))


@pytest.mark.parametrize(("folder", "words"), [("", "self-check helpers"), ("zh", "自检辅助函数")])
def test_a_lab_page_links_the_helpers_instead_of_showing_them(
    folder: str, words: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    page = _page(folder, monkeypatch, tmp_path)
    assert "def require" not in page and "NotFilled" not in page, "the helpers' source is not on the page"
    assert f'<a href="../{CHECKER_FILE}">' in page and words in page
    lines = checker_source("zh" if folder else "en").count("\n") + 1
    assert f"{lines} " in page, "the page says how many lines the helpers are"


def test_the_helpers_are_published_once_per_language_in_its_words(tmp_path: Path) -> None:
    launch = Launch(None, None, [], ROOT / "requirements.txt")
    for folder, language in (("", "en"), ("zh", "zh")):
        site = tmp_path / (folder or "en")
        publish_notebooks(site, ROOT / "docs" / folder, launch, language)
        published = (site / "labs" / CHECKER_FILE).read_text(encoding="utf-8")
        assert published == checker_source(language) + "\n"
