"""The annex lab's launcher (`docs/labs/distributed.py`, its setup cell): no rank outlives its limit, and a
rank that hangs or fails is named.

The launcher is the setup cell's own code, run here as the notebook runs it (the reader's machine has
torch alone); the ranks it starts are scripts written by the test, so that a rank can hang or fail on purpose.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

import jupytext
import pytest

from conftest import ROOT
from pytorch_floors.floors import DISTRIBUTED_LAB, FLOORS, LABS, lab_for_page
from pytorch_floors.i18n.languages import LANGUAGES
from pytorch_floors.labs.cells import lab_name
from pytorch_floors.page_facts import page_facts
from pytorch_floors.plugin.languages import translated_nav
from pytorch_floors.plugin.pages import fill_nav

# Rank 1 starts a child that sleeps too (in the rank's session: it must go when its rank goes), writes its
# pid down, then hangs; rank 0 answers at once. No collective: the limit alone must stop rank 1.
HANGS = """
import json, os, subprocess, sys, time
rank = int(os.environ["RANK"])
if rank == 1:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(sys.argv[0] + ".child", "w") as pid:
        pid.write(str(child.pid))
    time.sleep(600)
print(json.dumps({"rank": rank}))
"""

# Rank 1 raises after the rendezvous; rank 0 waits at a barrier for it, which never comes.
FAILS = """
import os
import torch.distributed as dist
dist.init_process_group("gloo")
if int(os.environ["RANK"]) == 1:
    raise ValueError("rank 1 broke on purpose")
dist.barrier()
"""

# Both ranks meet and answer.
MEETS = """
import json, os
import torch.distributed as dist
dist.init_process_group("gloo")
dist.barrier()
print(json.dumps({"rank": dist.get_rank()}))
dist.destroy_process_group()
"""


def launcher() -> dict[str, Any]:
    """The names the lab's setup cell defines (`run_ranks` among them), run as the notebook runs it."""
    notebook = jupytext.read(ROOT / "docs" / DISTRIBUTED_LAB.lab)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    setup = next(source for source in code if "def run_ranks" in source)
    namespace: dict[str, Any] = {"__name__": "lab_setup"}
    exec(compile(setup, str(DISTRIBUTED_LAB.lab), "exec"), namespace)
    return namespace


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z" if Path(f"/proc/{pid}").exists() else True


def test_the_annex_lab_is_a_lab_of_the_registry_and_no_floors() -> None:
    assert DISTRIBUTED_LAB in LABS and DISTRIBUTED_LAB.floor is None
    assert lab_for_page("labs/distributed.py") is DISTRIBUTED_LAB
    assert (ROOT / "docs" / DISTRIBUTED_LAB.lab).is_file() and (ROOT / "docs/zh" / DISTRIBUTED_LAB.lab).is_file()
    for src_uri in ("labs/distributed.py", "zh/labs/distributed.py"):
        facts = page_facts(src_uri)
        assert (facts.kind, facts.lab, facts.floor) == ("lab", DISTRIBUTED_LAB, None), src_uri


def test_the_labs_navigation_lists_the_annex_lab_after_the_floors_labs_in_both_languages() -> None:
    nav: list[Any] = [{"Labs": []}]
    fill_nav(nav, ROOT / "docs")
    labs = nav[0]["Labs"]
    assert len(labs) == len(FLOORS) + 1 and labs[-1] == {DISTRIBUTED_LAB.title: DISTRIBUTED_LAB.lab}
    chinese = translated_nav(nav, ROOT / "docs", LANGUAGES[1])
    assert chinese[0]["实验"][-1] == {DISTRIBUTED_LAB.title_zh: "zh/" + DISTRIBUTED_LAB.lab}


def test_the_annex_labs_title_names_its_file_in_both_languages() -> None:
    """nbconvert's preprocessors know a lab by its title alone: the annex lab's is no floor's "Lab N"."""
    for docs in (ROOT / "docs", ROOT / "docs/zh"):
        assert lab_name(jupytext.read(docs / DISTRIBUTED_LAB.lab)) == f"docs/{DISTRIBUTED_LAB.lab}"


@pytest.mark.waits
@pytest.mark.skipif(os.name != "posix", reason="the rank's session is stopped as a process group (POSIX)")
def test_a_hanging_rank_is_stopped_at_its_limit_named_and_leaves_no_process(tmp_path: Path) -> None:
    script = tmp_path / "hangs.py"
    script.write_text(HANGS, encoding="utf-8")
    run_ranks = launcher()["run_ranks"]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"^rank 1 of 2 still running \(hang\) after 6 s: stopped"):
        run_ranks("hang", 2, timeout=6, script=script)
    took = time.monotonic() - start
    assert took < 6 + 10, f"the launcher took {took:.0f} s to stop a rank whose limit was 6 s"
    child = int((tmp_path / "hangs.py.child").read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child), "the hanging rank's own child outlived it"


@pytest.mark.waits
def test_a_failing_rank_is_named_and_the_rank_waiting_for_it_is_stopped(tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text(FAILS, encoding="utf-8")
    run_ranks = launcher()["run_ranks"]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"^rank 1 of 2 failed \(barrier\): .*ValueError: rank 1 broke on purpose"):
        run_ranks("barrier", 2, timeout=300, script=script)
    took = time.monotonic() - start
    assert took < 120, f"rank 0, waiting at a barrier for the failed rank, was not stopped ({took:.0f} s)"


@pytest.mark.waits
def test_a_port_another_program_took_is_no_failure(tmp_path: Path) -> None:
    """The free port is free when asked for; another program may listen on it before rank 0 does."""
    script = tmp_path / "meets.py"
    script.write_text(MEETS, encoding="utf-8")
    namespace = launcher()
    ports: list[int] = []
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        free = namespace["free_port"]

        def taken_first() -> int:
            ports.append(taken.getsockname()[1] if not ports else free())
            return ports[-1]

        namespace["free_port"] = taken_first  # the launcher looks it up where the notebook defined it
        results = namespace["run_ranks"]("meet", 2, timeout=120, script=script)
    assert [r["rank"] for r in results] == [0, 1]
    assert len(ports) == 2, f"the ranks did not start again on another port: {ports}"
