"""Pattern tests for floor 8 (the chip and the two clocks): the proofs' claims, asserted with small sizes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from types import ModuleType

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
