"""No output is ever read by a Markdown extension that can open files.

`pymdownx.snippets` expands a `--8<-- "file"` line wherever Markdown reads it. A block's output, and a
recording's, once went through the page's own Markdown, so a printed `--8<-- ".git/config"` published the
file (with a CI job's token in it). Each test here prints or records such lines and requires the page to
show them as they are and never the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_engine import Pages, make_pages
from test_recordings import as_elsewhere, recorded, render  # noqa: F401  (`recorded` is a fixture)

from conftest import FixtureSite
from pytorch_floors.errors import InputError
from pytorch_floors.i18n.messages import _catalog
from pytorch_floors.plugin import fence
from pytorch_floors.recordings.recorder import record_site
from pytorch_floors.recordings.schema import Recording, write_recording

TOKEN = "ghp_fakeIncluded0123"  # what the included files hold: never on a page
INCLUDES = '--8<-- ".git/config"\n--8<-- "private.txt"\n;--8<-- "private.txt"\n--8<--\nprivate.txt\n--8<--'


def _plant(root: Path) -> None:
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "config").write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {TOKEN}\n")
    (root / "private.txt").write_text(f"the token is {TOKEN}\n")


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[Pages]:
    _plant(tmp_path)
    yield make_pages(tmp_path)


def test_a_blocks_printed_include_lines_are_shown_as_printed_and_no_file_is_read(pages: Pages) -> None:
    html = pages.render(f'```python exec="1" id="prints-includes"\nprint({INCLUDES!r})\n```\n')
    assert pages.status() == {"prints-includes": "ran"}
    assert TOKEN not in html and "the token is" not in html
    assert "--8&lt;-- &quot;.git/config&quot;" in html or '--8&lt;-- ".git/config"' in html
    assert html.count("private.txt") == 3, "each line is shown as it was printed"


def test_a_blocks_printed_include_lines_with_its_source_shown_read_no_file(pages: Pages) -> None:
    html = pages.render(f'```python exec="1" source="above" id="shows-source"\nprint({INCLUDES!r})\n```\n')
    assert pages.status() == {"shows-source": "ran"}
    assert TOKEN not in html and "the token is" not in html


def test_text_that_names_an_image_is_not_inlined_by_an_extension_that_reads_files(pages: Pages) -> None:
    # pymdownx.b64 reads every local <img> of the HTML; printed text is escaped before any extension sees it.
    (pages.root / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n" + TOKEN.encode())
    html = pages.render('```python exec="1" id="img"\nprint(\'<img src="secret.png">\')\n```\n')
    assert "data:image" not in html and "&lt;img" in html


def test_a_recordings_include_lines_are_shown_as_recorded_and_no_file_is_read(
    recorded: tuple[Path, Recording],  # noqa: F811  (the fixture)
) -> None:
    root, recording = recorded
    _plant(root)
    elsewhere = as_elsewhere(recording, f"x\n{INCLUDES}\nend")
    html, engine = render(root, (elsewhere,))
    assert not engine.failures
    assert TOKEN not in html and "the token is" not in html
    assert "--8&lt;--" in html, "the recorded lines are shown as they are"


def test_a_built_site_shows_include_lines_of_a_block_and_a_recording_and_publishes_no_file(
    fixture_site: FixtureSite,
) -> None:
    # The reproduction end to end: a recording merged as another tier, its tab data written beside
    # the page (floors-tiers.json), and a block of the page printing the same lines.
    _plant(fixture_site.root)
    fixture_site.write("snippets/p.py", f"print({INCLUDES!r})\nprint('--8<-- \"mkdocs.yml\"')\n")
    fixture_site.page("index.md", '```python exec="1" id="p"\n--8<-- "snippets/p.py"\n```\n')
    recording = record_site(
        fixture_site.root, fixture_site.root / "docs", "t1", stands_for="t1", cache_dir=fixture_site.root / ".cache"
    )
    write_recording(as_elsewhere(recording, f"recorded\n{INCLUDES}\nend"), fixture_site.root / "recordings")
    build = fixture_site.build(strict=True, process=True)
    assert build.returncode == 0, build.log
    published = [p for p in build.site.rglob("*") if p.is_file() and p.suffix in {".html", ".json", ".js"}]
    for path in published:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert TOKEN not in text, f"{path.relative_to(build.site)} publishes an included file"
        assert "site_name: Fixture" not in text, f"{path.relative_to(build.site)} publishes mkdocs.yml"
    tiers = [json.loads(p.read_text(encoding="utf-8")) for p in build.site.rglob("floors-tiers.json")]
    assert tiers, "the recording's tab data was written beside the page"
    assert "--8&lt;--" in json.dumps(tiers), "the recorded include lines are shown as recorded"


# --- a rendering error names its real cause -----------------------------------------------------------


def test_an_error_while_rendering_a_result_names_its_cause_not_the_fence(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> str:
        raise ValueError("a template's fault")

    monkeypatch.setattr(fence, "claims_html", broken)
    html = pages.render('```python exec="1" id="shown"\nprint(1)\n```\n')
    assert "floors-proof-failure" in html
    assert pages.status() == {"shown": "failed"}
    [failure] = pages.engine.failures
    assert "its result could not be rendered: ValueError: a template's fault" in str(failure)
    assert "source instead of its output" not in str(failure)


def test_an_error_while_rendering_a_translated_pages_block_names_its_cause_once(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = '```python exec="1" id="shown"\nprint(1)\n```\n'
    pages.render(body)
    pages.engine.plan_twin("zh/index.md", "index.md")

    def broken(*_: object, **__: object) -> str:
        raise KeyError("held")

    monkeypatch.setattr(fence, "claims_html", broken)
    pages.render(body, "zh/index.md")
    [failure] = pages.engine.failures
    assert failure.page == "zh/index.md"
    assert "its result could not be rendered: KeyError: 'held'" in str(failure)


@pytest.mark.parametrize(
    ("translation", "problem"),
    [
        ("{0.__class__}", r"has the field \{0.__class__\}: a message's fields are plain names"),
        ("{held 条成立", "is not a message template: expected '}' before end of string"),
        ("{held} 条成立 {secret}", "has fields its English message lacks: secret"),
    ],
    ids=["attribute-field", "unclosed-brace", "unknown-field"],
)
def test_a_message_catalog_that_cannot_be_filled_is_refused_in_one_line_when_read(
    tmp_path: Path, translation: str, problem: str
) -> None:
    catalog = tmp_path / "messages.zh.yml"
    catalog.write_text(json.dumps({"{held} held": translation}, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(InputError, match=r"^messages\.zh\.yml: the translation of '\{held\} held' " + problem):
        _catalog(catalog)
