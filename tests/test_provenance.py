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
