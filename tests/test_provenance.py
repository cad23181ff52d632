import html
import platform
from dataclasses import replace

import pytest
import torch

from pytorch_floors.execution.provenance import Provenance, collect, of_outputs


def test_provenance_reports_the_running_process() -> None:
    p = collect()
    assert p.torch_version == torch.__version__
    assert p.python_version == platform.python_version()
    assert p.cpu_capability == torch.backends.cpu.get_cpu_capability()
    assert p.threads == torch.get_num_threads()
    assert p.cpu
    expected = "none" if not (torch.cuda.is_available() or torch.backends.mps.is_available()) else p.accelerator
    assert p.accelerator == expected


def test_provenance_line_and_dict() -> None:
    p = collect()
    line = p.line()
    for value in (p.torch_version, p.python_version, p.cpu_capability, f"{p.threads} threads"):
        assert value in line
    assert p.as_dict()["torch_version"] == p.torch_version


def test_provenance_reads_back_what_it_wrote_and_nothing_else() -> None:
    p = collect()
    assert Provenance.from_dict(p.as_dict()) == p
    for bad in ({**p.as_dict(), "threads": "4"}, {**p.as_dict(), "cores": True}, {"torch_version": "2"}, ["x"]):
        with pytest.raises(ValueError, match="provenance"):
            Provenance.from_dict(bad)


def test_a_page_states_each_provenance_once_oldest_first() -> None:
    today = collect()
    older = replace(today, built="2020-01-01")
    assert of_outputs([today, None, older, today, older], today) == [older, today]
    assert of_outputs([], today) == [today]


def _header(provenance: Provenance, language: str) -> str:
    """The theme's header partial rendered for a page that shows a proof, in a language, with this provenance."""
    from types import SimpleNamespace  # noqa: PLC0415

    from jinja2 import Environment, FileSystemLoader  # noqa: PLC0415

    from conftest import ROOT  # noqa: PLC0415
    from pytorch_floors.render.templates import page_t  # noqa: PLC0415

    environment = Environment(loader=FileSystemLoader(ROOT / "overrides"), autoescape=True)
    environment.globals["floors_t"] = page_t
    return environment.get_template("partials/floors-header.html").render(
        config=SimpleNamespace(extra={}),
        page=SimpleNamespace(content='<div class="floors-proof">'),
        floors_provenance=provenance,
        floors_language=language,
        floors_tiers=[],
        floors_depth_bar="",
    )


def test_the_pages_provenance_line_is_in_its_language_with_the_values_measured() -> None:
    """A Chinese page's header read "(CPU capability AVX512, 2 threads) · accelerator: none · built …" in English."""
    p = replace(collect(), threads=2, accelerator="none", cpu_capability="AVX512", built="2026-12-06")
    english = _header(p, "en")
    assert html.escape(p.line(), quote=True) in english, "the English line is the provenance's own"
    chinese = _header(p, "zh")
    assert "CPU 能力级别 AVX512，2 个线程" in chinese and "加速器：无" in chinese and "构建于 2026-12-06" in chinese
    assert "accelerator" not in chinese and "threads" not in chinese and "built" not in chinese
    assert p.torch_version in chinese and p.cpu in chinese
    one = _header(replace(p, threads=1, accelerator="cuda: NVIDIA H100"), "en")
    assert "1 thread)" in one and "accelerator: cuda: NVIDIA H100" in one
