"""What changed inside PyTorch: the facts' proof joined by torch release, from this build's run and the recordings.

The recordings here are written by the tests from one fixture printout (`fixtures/inside-torch/facts.txt`)
and read back through the schema, as a build reads `recordings/`; each test changes what it is about.
"""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from collections.abc import Callable
from html import unescape
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT, FixtureSite
from pytorch_floors.claims import CHANNEL
from pytorch_floors.execution.options import BlockOptions
from pytorch_floors.execution.provenance import Provenance
from pytorch_floors.execution.result import BlockResult
from pytorch_floors.execution.scan import ExecBlock
from pytorch_floors.floors import COMPILER
from pytorch_floors.i18n.messages import ZH
from pytorch_floors.measure import dispatch_stub_slots, stub_name
from pytorch_floors.plugin.pages import proofs_page
from pytorch_floors.recordings.schema import RecordedBlock, Recording, read_recordings, write_recording
from pytorch_floors.recordings.torch_changes import (
    BLOCK_ID,
    FACTS,
    PAGE,
    PROOF,
    TITLE,
    TorchFactsError,
    fact_rows,
    inside_torch_html,
    parse_facts,
    torch_columns,
)

FACTS_TEXT = (ROOT / "tests" / "fixtures" / "inside-torch" / "facts.txt").read_text(encoding="utf-8")
BASE = parse_facts(FACTS_TEXT, "the fixture")
DIGEST = "sha256:" + "a" * 64
OLDER_PROOF = "sha256:" + "b" * 64


def provenance(version: str) -> Provenance:
    return Provenance(
        torch_version=version,
        python_version="3.11.7",
        platform="Linux x86_64",
        cpu="Fixture CPU",
        cpu_capability="AVX512",
        threads=2,
        cores=2,
        accelerator="none",
        built="2026-12-06",
    )


def printout(version: str, **changes: str) -> str:
    """The fixture's printout as `version` printed it, with some facts' values changed (`name=value`)."""
    lines = []
    for line in FACTS_TEXT.splitlines():
        name, _, value = line.partition(": ")
        value = changes.get(name.replace(".", "_"), value)
        lines.append(f"{name}: {version if name == 'torch.version' else value}")
    return "\n".join(lines) + "\n"


def own_run(output: str, version: str = "2.13.0+cpu") -> BlockResult:
    return BlockResult(
        PAGE, BLOCK_ID, "snippets/inside-torch/facts.py", "ran", 9.0, output, None, provenance(version), (), DIGEST
    )


def record(root: Path, tier: str, version: str, output: str, digest: str = DIGEST) -> None:
    block = RecordedBlock(PAGE, BLOCK_ID, digest, False, output, 9.0, (), provenance(version))
    write_recording(Recording(tier, "a torch tier", "2026-12-06", provenance(version), (block,)), root)


def test_the_columns_are_ordered_by_release_whatever_the_tiers_are_named(tmp_path: Path) -> None:
    record(tmp_path, "a-newest", "2.15.0+cu128", printout("2.15.0+cu128"))
    record(tmp_path, "b-middle", "2.14.1+cu128", printout("2.14.1+cu128"))
    record(tmp_path, "ci-2core", "2.13.0+cpu", printout("2.13.0+cpu", operators_overloads="1"))
    columns = torch_columns(own_run(printout("2.13.0+cpu")), read_recordings(tmp_path), tmp_path)
    assert [(c.version, c.source) for c in columns] == [
        ("2.13.0", None),
        ("2.14.1", "b-middle"),
        ("2.15.0", "a-newest"),
    ]
    # The build's own release is its own run, not another machine's recording of the same torch.
    assert columns[0].values == BASE


def test_a_release_recorded_only_with_an_earlier_proof_is_not_recorded_never_filled_in(tmp_path: Path) -> None:
    record(tmp_path, "torch-2.14.1", "2.14.1+cu128", printout("2.14.1+cu128"))
    record(tmp_path, "torch-2.15.0", "2.15.0+cu128", printout("2.15.0+cu128", guards_count="12"), OLDER_PROOF)
    columns = torch_columns(own_run(printout("2.13.0+cpu")), read_recordings(tmp_path), tmp_path)
    assert [(c.version, c.values is None, c.stale_tiers) for c in columns] == [
        ("2.13.0", False, ()),
        ("2.14.1", False, ()),
        ("2.15.0", True, ("torch-2.15.0",)),
    ]
    assert all(row.values[2] is None for row in fact_rows(columns))
    page = inside_torch_html([own_run(printout("2.13.0+cpu"))], read_recordings(tmp_path), tmp_path, "en")
    cells = re.findall(r'<td data-label="torch 2\.15\.0">([^<]*)</td>', page)
    assert cells and set(cells) == {"not recorded"}
    assert "12" not in re.sub(r"<[^>]+>", " ", page.split("<table", 1)[1]).split()  # the stale value is not shown
    assert "make record TIER=torch-2.15.0" in page


def test_with_only_this_builds_run_the_page_says_so_and_compares_nothing(tmp_path: Path) -> None:
    page = inside_torch_html([own_run(printout("2.13.0+cpu"))], (), tmp_path, "en")
    assert "Only one torch release measured these facts" in page
    assert re.findall(r"<th scope=\"col\">(torch [^<]*)</th>", page) == ["torch 2.13.0"]
    assert "floors-inside-torch__differences" not in page


def test_a_sentence_only_where_two_releases_differ(tmp_path: Path) -> None:
    more = {"operators_overloads": str(int(BASE["operators.overloads"]) + 37)}
    record(tmp_path, "torch-2.14.1", "2.14.1+cpu", printout("2.14.1+cpu", **more, import_seconds="9.5"))
    keys = {"dispatch_keys_cpu_tensor": "CPU, ADInplaceOrView, AutogradCPU"}
    record(tmp_path, "torch-2.15.0", "2.15.0+cpu", printout("2.15.0+cpu", **more, **keys))
    columns = torch_columns(own_run(printout("2.13.0+cpu")), read_recordings(tmp_path), tmp_path)
    said = {row.fact.name: [d.words("en") for d in row.differences] for row in fact_rows(columns) if row.differences}
    assert said == {
        "operators.overloads": ["37 more in 2.14.1 than in 2.13.0"],
        "dispatch_keys.cpu_tensor": ["2.15.0 drops AutocastCPU, against 2.14.1"],
    }  # not the version, which names the column, nor the import time, which is a timing
    page = inside_torch_html([own_run(printout("2.13.0+cpu"))], read_recordings(tmp_path), tmp_path, "en")
    listed = re.findall(r'<li data-fact="([^"]+)">', page)
    assert listed == ["operators.overloads", "dispatch_keys.cpu_tensor"]
    assert "different builds" not in page  # all three are CPU builds


def test_columns_of_different_builds_are_named_above_the_table(tmp_path: Path) -> None:
    record(tmp_path, "torch-2.14.1", "2.14.1+cu128", printout("2.14.1+cu128", torch_build="CUDA 12.8"))
    page = inside_torch_html([own_run(printout("2.13.0+cpu"))], read_recordings(tmp_path), tmp_path, "en")
    assert "different builds of torch (CPU only, CUDA 12.8)" in page
    assert "CPU only in 2.13.0, CUDA 12.8 in 2.14.1" in page
    assert BASE["library.libtorch_cuda.so"] == "-"  # the fixture is a CPU build: no CUDA library
    record(tmp_path, "torch-2.14.1", "2.14.1+cu128", printout("2.14.1+cu128", library_libtorch_cuda_so="502842281"))
    page = inside_torch_html([own_run(printout("2.13.0+cpu"))], read_recordings(tmp_path), tmp_path, "en")
    assert "2.14.1 has it (502.8 MB), 2.13.0 does not" in page


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"operators_overloads": "12x"}, "operators.overloads: '12x' is not a count value"),
        ({"linear_make_fx": "<img src=x onerror=alert(1)>"}, "linear.make_fx"),
        ({"dynamo_recompile_limit": "[link](javascript:alert(1))"}, "dynamo.recompile_limit"),
    ],
)
def test_an_invalid_recorded_value_is_refused_naming_the_recordings_file(
    tmp_path: Path, change: dict[str, str], why: str
) -> None:
    record(tmp_path, "torch-2.15.0", "2.15.0+cpu", printout("2.15.0+cpu", **change))
    with pytest.raises(TorchFactsError) as refused:
        torch_columns(own_run(printout("2.13.0+cpu")), read_recordings(tmp_path), tmp_path)
    assert str(tmp_path / "torch-2.15.0" / "recording.json") in str(refused.value)
    assert why in str(refused.value)


def test_a_printout_with_an_unknown_a_repeated_or_a_missing_fact_is_refused() -> None:
    unknown = len(FACTS_TEXT.splitlines()) + 1
    with pytest.raises(TorchFactsError, match=f"line {unknown} is not one of the facts"):
        parse_facts(FACTS_TEXT + "made.up: 1\n", "here")
    with pytest.raises(TorchFactsError, match="printed twice"):
        parse_facts(FACTS_TEXT + FACTS_TEXT.splitlines()[2] + "\n", "here")
    with pytest.raises(TorchFactsError, match=r"lack guards\.kinds"):
        parse_facts(FACTS_TEXT.rsplit("guards.kinds", 1)[0], "here")


def test_the_chinese_page_shows_the_table_in_chinese(tmp_path: Path) -> None:
    more = str(int(BASE["operators.overloads"]) + 37)
    record(tmp_path, "torch-2.14.1", "2.14.1+cpu", printout("2.14.1+cpu", operators_overloads=more))
    record(tmp_path, "torch-2.15.0", "2.15.0+cpu", printout("2.15.0+cpu"), OLDER_PROOF)
    page = unescape(inside_torch_html([own_run(printout("2.13.0+cpu"))], read_recordings(tmp_path), tmp_path, "zh"))
    assert "2.14.1 比 2.13.0 多 37 个" in page
    assert ZH["Operator overloads registered"] in page and ZH["not recorded"] in page
    assert "not recorded" not in page and "more in" not in page


def test_every_fact_the_page_shows_is_named_on_the_pages_it_describes() -> None:
    # The compiler's defaults are those the compile page names, in its prose or in the proofs it runs.
    compile_page = "\n".join(
        path.read_text(encoding="utf-8")
        for path in [ROOT / "docs" / "compile.md", *(ROOT / "snippets" / "compile").glob("*.py")]
    )
    settings = [fact.name.split(".", 1)[1] for fact in FACTS if fact.name.startswith(("dynamo.", "inductor."))]
    assert settings and [s for s in settings if s not in compile_page] == []
    proof = (ROOT / "snippets" / "inside-torch" / "facts.py").read_text(encoding="utf-8")
    guards = (ROOT / "snippets" / "compile" / "guards.py").read_text(encoding="utf-8")
    # The guards are the compile page's example's: the same function, so the same graph and guards.
    assert "return (x * scale + 1).relu()" in proof and "return (x * scale + 1).relu()" in guards


@pytest.mark.slow
def test_the_proof_prints_every_fact_the_page_shows_in_its_order(tmp_path: Path) -> None:
    # As the build runs it: its claims go to the channel, so what it prints is its facts alone.
    claims = tmp_path / "claims.jsonl"
    claims.write_text("", encoding="utf-8")  # the channel is the build's file: a proof only appends to it
    done = subprocess.run(
        [sys.executable, "snippets/inside-torch/facts.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", CHANNEL: str(claims)},
    )
    facts = parse_facts(done.stdout, "the proof")
    assert list(facts) == [fact.name for fact in FACTS]
    assert "aten.linear.default" in claims.read_text(encoding="utf-8")  # its claim's detail


INSIDE_EN = """\
# Inside { #inside-torch }

```python exec="1" id="torch-facts"
--8<-- "facts.py"
```

## Release by release { #by-release }

<!-- floors:inside-torch -->
"""
INSIDE_ZH = """\
---
description: 中文页面
---

# 内部 { #inside-torch }

```python exec="1" id="torch-facts"
--8<-- "facts.py"
```

## 逐个版本对照 { #by-release }

<!-- floors:inside-torch -->
"""


def test_the_page_builds_strictly_in_both_languages_with_a_stale_release_named(fixture_site: FixtureSite) -> None:
    fixture_site.write("facts.py", f"print({FACTS_TEXT!r}, end='')\n")
    fixture_site.page(PAGE, INSIDE_EN)
    fixture_site.write(f"docs/zh/{PAGE}", INSIDE_ZH)
    record(fixture_site.root / "recordings", "torch-2.15.0", "2.15.0+cpu", printout("2.15.0+cpu"), OLDER_PROOF)
    build = fixture_site.build(strict=True)
    assert build.returncode == 0, build.log[-3000:]
    english, chinese = unescape(build.page("inside-torch")), unescape(build.page("zh/inside-torch"))
    own = re.search(r"<th scope=\"col\">torch (\d+\.\d+\.\d+)</th>", english)
    assert own is not None  # this build's torch, whichever it is
    assert "this build's own run." in english and "make record TIER=torch-2.15.0" in english
    assert ZH["this build's own run."] in chinese and ZH["Fact"] in chinese
    assert "floors:inside-torch" not in english + chinese


def test_a_stubs_name_is_the_one_its_length_announces() -> None:
    # frexp_stub's symbols end as exp_stub's do; _segment_reduce_lengths_stub's name starts after "50", not "0".
    exp = b"_ZN2at6native12DispatchStubIPFvRNS_18TensorIteratorBaseEENS0_30exp_stub_DECLARE_DISPATCH_typeEE6AVX512E"
    assert stub_name(exp) == "exp_stub"
    assert stub_name(exp.replace(b"30exp_stub", b"32frexp_stub")) == "frexp_stub"
    assert stub_name(b"NS0_50_segment_reduce_lengths_stub_DECLARE_DISPATCH_typeEE6AVX512E") == (
        "_segment_reduce_lengths_stub"
    )
    assert stub_name(b"_ZN2at6native16DispatchStubImpl15choose_cpu_implEPvS2_S2_") is None


def test_the_slot_reader_agrees_with_floor_6s_and_reads_only_an_elf_file(
    load_proof: Callable[[str], ModuleType], tmp_path: Path
) -> None:
    # Floor 6's proof reads three stubs' slots; the facts proof reads every stub's: on the same library they agree.
    proof = load_proof("6-kernels/capability.py")
    library = proof.torch_cpu_library()
    if library is None or platform.machine().lower() not in {"x86_64", "amd64"}:
        pytest.skip("not an x86-64 Linux build of torch: there are no AVX slots to read")
    stubs = [(stub_name(mangled.encode()), slots) for mangled, slots in dispatch_stub_slots(library).items()]
    by_name = dict(stubs)
    assert proof.kernel_slots(library) == {stub: by_name[stub] for stub in proof.SLOT_STUBS}
    assert len(stubs) > len(by_name), "a stub name in two namespaces (copy_stub, cpublas::copy_stub) counts twice"
    text = tmp_path / "libnot.so"
    text.write_text("not a library", encoding="utf-8")
    with pytest.raises(ValueError, match="not a little-endian 64-bit ELF"):
        dispatch_stub_slots(text)


def test_a_release_recorded_without_this_proof_is_named_not_recorded(tmp_path: Path) -> None:
    # The torch tiers recorded every proof before this page had one: their release is named, its cells empty.
    machine = provenance("2.14.1+cu130")
    other = RecordedBlock("floors/4-dispatcher.md", "op-count", DIGEST, False, "3598 operators\n", 1.0, (), machine)
    write_recording(Recording("torch-2.14.1", "a torch tier", "2026-12-06", machine, (other,)), tmp_path)
    columns = torch_columns(own_run(printout("2.13.0+cpu")), read_recordings(tmp_path), tmp_path)
    assert [(c.version, c.values is None, c.without_tiers) for c in columns] == [
        ("2.13.0", False, ()),
        ("2.14.1", True, ("torch-2.14.1",)),
    ]
    page = unescape(inside_torch_html([own_run(printout("2.13.0+cpu"))], read_recordings(tmp_path), tmp_path, "en"))
    assert "torch-2.14.1 holds no run of this proof; make record TIER=torch-2.14.1 adds it." in re.sub(
        r"<[^>]+>", "", page
    )
    assert "Only one torch release measured these facts" in page


def test_a_recorded_torch_version_that_is_no_version_is_refused_naming_the_file(tmp_path: Path) -> None:
    record(tmp_path, "torch-odd", "not-a-version", printout("2.15.0+cpu"))
    with pytest.raises(TorchFactsError, match=re.escape(str(tmp_path / "torch-odd" / "recording.json"))):
        torch_columns(own_run(printout("2.13.0+cpu")), read_recordings(tmp_path), tmp_path)


def test_the_page_is_in_the_navigation_and_on_the_proofs_page_by_its_title() -> None:
    assert f"  - {TITLE}: {PAGE}\n" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    planned = {
        page: [ExecBlock(page, block, 1, BlockOptions(block), proofs=[proof])]
        for page, block, proof in [
            (PAGE, BLOCK_ID, PROOF),
            (COMPILER.page, "guards", "snippets/compile/guards.py"),
        ]
    }
    english, chinese = proofs_page(planned, ROOT, "en"), proofs_page(planned, ROOT, "zh")
    assert f"[{TITLE}]({PAGE})" in english and english.index(COMPILER.title) < english.index(TITLE)
    assert f"[{ZH[TITLE]}]({PAGE})" in chinese
