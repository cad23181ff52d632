import platform

import torch

from pytorch_floors.execution.provenance import collect


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
