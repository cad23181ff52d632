"""Pattern tests for floor 8 (the chip and the two clocks): the proofs' claims, asserted with small sizes."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from types import ModuleType

import pytest
import torch

from pytorch_floors.measure import detect_device

Loader = Callable[[str], ModuleType]
SVG = "{http://www.w3.org/2000/svg}"


def test_host_and_device_clocks(load_proof: Loader) -> None:
    proof = load_proof("8-chip/two_clocks.py")
    device = detect_device()
    side = 256 if device.type == "cpu" else None
    result = proof.measure(device, side=side, repeats=7)
    assert result["finished"] >= result["returned"] > 0
    if device.type == "cpu":
        # The op ran inside the call: synchronising afterwards adds (almost) nothing.
        assert result["finished"] / result["returned"] < 1.5
        assert result["events"] != result["events"]  # NaN: no device clock on the CPU
    else:
        # The call only launched the kernel: the work ends much later.
        assert result["returned"] < result["finished"] / 2
        assert result["events"] > 0


def test_timeline_lanes_and_figure(load_proof: Loader) -> None:
    proof = load_proof("8-chip/timeline.py")
    device = detect_device()
    rows = proof.record(device)
    assert [row["op"] for row in rows][-1] == "s.item()"
    previous_end = 0.0
    for row in rows:
        start, end = row["host"]
        assert previous_end <= start <= end
        previous_end = end
        if device.type == "cpu":
            assert row["device"] == row["host"]
    svg = proof.draw(rows, device)
    root = ET.fromstring(svg)
    assert root.get("role") == "img"
    assert root.find(f"{SVG}title") is not None and root.find(f"{SVG}desc") is not None
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "host (Python thread)" in texts and "time since the first call (ms)" in texts
    if device.type == "cpu":
        assert "schematic, not measured here" in texts
    assert len(root.findall(f"{SVG}rect")) >= 2 * (len(rows) - 1)


def test_small_buffer_bandwidth_beats_large(load_proof: Loader) -> None:
    proof = load_proof("8-chip/bandwidth_vs_size.py")
    in_cache = proof.read_bandwidth(256 << 10, samples=5)
    from_memory = proof.read_bandwidth(256 << 20, samples=5)
    assert in_cache > 1.5 * from_memory > 0
    for name, size in proof.cache_sizes():
        assert name.startswith("L") and size > 0


def test_thread_counts_apply_and_are_restored(load_proof: Loader) -> None:
    proof = load_proof("8-chip/thread_scaling.py")
    original = torch.get_num_threads()
    counts = proof.thread_counts()
    assert counts[0] == 1 and counts == list(range(1, len(counts) + 1))
    rows = proof.scaling(counts, side=128, elements=1 << 20, rounds=1)
    assert [row["threads"] for row in rows] == [float(n) for n in counts]
    for row in rows:
        assert row["in_effect"] == row["threads"]
        assert row["matmul"] > 0 and row["sum"] > 0
    assert torch.get_num_threads() == original


def test_cross_device_errors_are_raised(load_proof: Loader) -> None:
    proof = load_proof("8-chip/device_errors.py")
    device = detect_device()
    found = proof.errors(device)
    assert found
    mixing = [(kind, message) for expression, kind, message in found if "+" in expression]
    assert mixing and all(kind == "RuntimeError" and "device" in message for kind, message in mixing)
    if device.type == "cpu":
        creating = [(kind, message) for expression, kind, message in found if "cuda" in expression]
        assert creating and all(
            kind == "AssertionError" and "not compiled with CUDA" in message for kind, message in creating
        )
        pinning = load_proof("8-chip/host_device_copy.py").pinning_without_accelerator()
        assert all(message.startswith("RuntimeError") for _, message in pinning)
    assert "works" in proof.scalar_exception(device)
    table = dict(proof.detection())
    assert table["detect_device()"] == device
    assert table["torch.cuda.is_available()"] == (device.type == "cuda")


def test_worker_stream_overlaps_the_host(load_proof: Loader) -> None:
    """Launches return at once; the worker's matmuls run, in order, while the host runs Python."""
    proof = load_proof("8-chip/worker_stream.py")
    threads = torch.get_num_threads()
    try:
        result = proof.run(side=384, matmuls=3, python_steps=300_000)
    finally:
        torch.set_num_threads(threads)
    host, worker = result["host"], result["worker"]
    launches = [end - start for what, start, end in host if what == "launch"]
    matmuls = [end - start for _, start, end in worker]
    assert len(launches) == len(matmuls) == 3
    assert max(launches) < 0.1 * min(matmuls)  # the host does not wait for the work it queues
    starts = [start for _, start, _ in worker]
    ends = [end for _, _, end in worker]
    assert all(e <= s for e, s in zip(ends, starts[1:], strict=False))  # one queue: in order, one at a time
    python = [i for i in host if i[0] == "Python work"]
    python_time = python[0][2] - python[0][1]
    assert proof.busy_together(python, worker) > 0.3 * min(python_time, sum(matmuls))
    wait = next(i for i in host if i[0].startswith("synchronize"))
    assert wait[2] >= max(ends)  # synchronize returns only after the last queued call ended
    svg = ET.fromstring(proof.draw(host, worker))
    assert len(svg.findall(f".//{SVG}rect")) >= len(host) + len(worker)


def test_worker_stream_hands_errors_to_synchronize(load_proof: Loader) -> None:
    proof = load_proof("8-chip/worker_stream.py")
    stream = proof.WorkerStream(time.perf_counter())
    stream.launch("bad matmul", lambda: torch.ones(2, 3) @ torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="worker stream failed") as raised:
        stream.synchronize()
    assert "shapes cannot be multiplied" in str(raised.value.__cause__)
    stream.close()


def test_to_noop_is_flat_and_copies_grow(load_proof: Loader) -> None:
    proof = load_proof("8-chip/to_cost.py")
    small, large = (times for _, times in proof.sweep(torch.device("cpu"), (1 << 10, 1 << 22)))
    assert large["x.to(torch.float32)"] < 5 * small["x.to(torch.float32)"]  # no-op: the same at every size
    assert large["x.to(torch.float32, copy=True)"] > 20 * small["x.to(torch.float32, copy=True)"]
    assert large["x.to(torch.float64)"] > 20 * small["x.to(torch.float64)"]
    assert large["x.to(torch.float32)"] < 0.1 * large["x.to(torch.float32, copy=True)"]


def test_memory_ceiling_streams_agree_and_sit_below_the_ridge(load_proof: Loader) -> None:
    proof = load_proof("8-chip/memory_ceiling.py")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rates = proof.stream_rates(torch.device("cpu"), 1 << 22)
        compute = proof.matmul_rate(torch.device("cpu"), 512)
    finally:
        torch.set_num_threads(threads)
    assert max(rates.values()) < 4 * min(rates.values())  # the page: the three land close together
    assert compute / max(rates.values()) > 1 / 12  # the add (1/12 FLOP per byte) is left of the ridge
