"""Pattern tests for Floor 8, the chip and the two clocks: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

import os
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest
import torch
from core_hogs import hogs_on, one_core
from pytest import MonkeyPatch

from conftest import ROOT, section_words
from pytorch_floors.claims import CHANNEL, Claim, parse_claims
from pytorch_floors.measure import detect_device, share_changed

Loader = Callable[[str], ModuleType]
SVG = "{http://www.w3.org/2000/svg}"


def test_timeline_figure_is_accessible(load_proof: Loader) -> None:
    proof = load_proof("8-chip/timeline.py")
    device = detect_device()
    rows = proof.record(device)
    root = ET.fromstring(proof.draw(rows, device))
    assert root.get("role") == "img"
    assert root.find(f"{SVG}title") is not None and root.find(f"{SVG}desc") is not None
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "host (Python thread)" in texts and "time since the first call (ms)" in texts
    if device.type == "cpu":
        assert "schematic, not measured here" in texts
    assert len(root.findall(f"{SVG}rect")) >= 2 * (len(rows) - 1)


def _timeline(*durations: float) -> list[dict[str, object]]:
    names = ["c = a @ b (1)", "c = a @ b (2)", "c = a @ b (3)", "s = c.sum()", "s.item()"]
    rows: list[dict[str, object]] = []
    now = 0.0
    for name, took in zip(names, durations, strict=True):
        rows.append({"op": name, "host": (now, now + took)})
        now += took + 0.001  # a little loop overhead between calls
    return rows


def test_one_processor_is_told_by_where_the_run_waits_not_by_which_call_is_longest(load_proof: Loader) -> None:
    """The crowded tier failed the claim: its sum, stalled beside a neighbour, outlasted the matmuls (20% of the
    run), though every call still lasted as long as its work and .item() waited for nothing."""
    one_processor = load_proof("8-chip/timeline.py").one_processor
    quiet, detail = one_processor(_timeline(0.003, 0.003, 0.003, 0.0005, 0.00001))
    assert quiet, detail
    crowded, detail = one_processor(_timeline(0.002, 0.002, 0.002, 0.024, 0.00001))
    assert crowded, detail
    cuda_like, detail = one_processor(_timeline(0.00002, 0.00002, 0.00002, 0.00002, 0.05))
    assert not cuda_like, "launches that return at once and an .item() that waits are not one processor"


def test_cache_sizes_and_thread_counts_are_well_formed(load_proof: Loader) -> None:
    for name, size in load_proof("8-chip/bandwidth_vs_size.py").cache_sizes():
        assert name.startswith("L") and size > 0
    counts = load_proof("8-chip/thread_scaling.py").thread_counts()
    assert counts[0] == 1 and counts == list(range(1, len(counts) + 1))


def test_device_detection_table(load_proof: Loader) -> None:
    proof = load_proof("8-chip/device_errors.py")
    device = detect_device()
    table = dict(proof.detection())
    assert table["detect_device()"] == device
    assert table["torch.cuda.is_available()"] == (device.type == "cuda")


def test_worker_stream_hands_errors_to_synchronize(load_proof: Loader) -> None:
    proof = load_proof("8-chip/worker_stream.py")
    stream = proof.WorkerStream(time.perf_counter())
    stream.launch("bad matmul", lambda: torch.ones(2, 3) @ torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="worker stream failed") as raised:
        stream.synchronize()
    assert "shapes cannot be multiplied" in str(raised.value.__cause__)
    stream.close()


def test_the_sweep_reaches_past_the_last_level_cache(load_proof: Loader) -> None:
    proof = load_proof("8-chip/bandwidth_vs_size.py")
    caches = [("L1 data", 48 << 10), ("L2 unified", 2 << 20), ("L3 unified", 260 << 20)]
    sweep = proof.sizes(caches)
    assert sweep[: len(proof.SIZES)] == proof.SIZES and sweep[-1] >= 2 * (260 << 20)
    assert proof.fits(32 << 10, caches) == "L1 data" and proof.fits(sweep[-1], caches) == "main memory"
    assert proof.sizes([]) == proof.SIZES


def test_the_memory_ceiling_tensors_outgrow_the_largest_cache(load_proof: Loader) -> None:
    proof = load_proof("8-chip/memory_ceiling.py")
    cache = proof.largest_cache()
    numel = proof.main_memory_numel(torch.device("cpu"))
    assert numel >= proof.MAIN_MEMORY and (cache is None or 4 * numel >= 2 * cache)


def test_thread_timing_reports_the_cores_it_got(load_proof: Loader) -> None:
    proof = load_proof("8-chip/thread_scaling.py")
    seconds, cores, share = proof.timed(lambda: sum(range(20000)), samples=2, min_sample_seconds=0.005)
    assert seconds > 0 and 0 < cores < 1.5  # one Python thread gets at most one core
    assert share is None or 0 < share <= 1


NOT_COMPILED = "Torch not compiled with CUDA enabled"  # torch/cuda/__init__.py, _lazy_init
NO_DRIVER = "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver"


def _reached(proof: ModuleType, outcome: str, message: str) -> list[tuple[str, str, str]]:
    return [(expression, outcome, message) for expression in proof.REACH]


def test_each_of_the_three_setups_holds_its_own_cuda_claim(load_proof: Loader) -> None:
    """A build without CUDA, PyPI's CUDA build on a machine with no driver (issue 33), and a GPU: one claim each."""
    proof = load_proof("8-chip/device_errors.py")
    setups = {
        proof.NO_CUDA_BUILD: ((None, None, False), _reached(proof, "AssertionError", NOT_COMPILED)),
        proof.NO_USABLE_GPU: (("13.0", None, False), _reached(proof, "RuntimeError", NO_DRIVER)),
        proof.USABLE_GPU: (("13.0", None, True), _reached(proof, "made", "a tensor on cuda:0")),
    }
    for expected, (facts, reached) in setups.items():
        kind = proof.setup(*facts)
        assert kind == expected
        outcomes = proof.cuda_outcomes(kind, reached)
        applying = [outcome for outcome in outcomes if outcome.applies]
        assert len(applying) == 1 and applying[0].held, (kind, outcomes)
        assert all(kind in outcome.why_not for outcome in outcomes if not outcome.applies)
    # A ROCm build drives AMD GPUs through torch.cuda: it is no build without CUDA.
    assert proof.setup(None, "6.4", False) == proof.NO_USABLE_GPU
    assert proof.setup(None, "6.4", True) == proof.USABLE_GPU


def test_each_cuda_claim_misses_on_the_wrong_outcome(load_proof: Loader) -> None:
    """The claim the issue saw miss, and each other, still fail where their setup does something else."""
    proof = load_proof("8-chip/device_errors.py")
    wrong = {
        proof.NO_CUDA_BUILD: [
            _reached(proof, "RuntimeError", NO_DRIVER),
            _reached(proof, "made", "a tensor on cuda:0"),
            [],
        ],
        proof.NO_USABLE_GPU: [
            _reached(proof, "AssertionError", NOT_COMPILED),
            _reached(proof, "RuntimeError", "CUDA error: an illegal memory access was encountered"),
            _reached(proof, "made", "a tensor on cuda:0"),
        ],
        proof.USABLE_GPU: [_reached(proof, "RuntimeError", NO_DRIVER), _reached(proof, "made", "a tensor on cpu")],
    }
    for kind, cases in wrong.items():
        for reached in cases:
            (applying,) = [outcome for outcome in proof.cuda_outcomes(kind, reached) if outcome.applies]
            assert not applying.held, (kind, reached)


def test_a_cuda_build_with_no_driver_runs_the_proof_and_holds(
    load_proof: Loader, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole proof, on PyPI's CUDA build with no NVIDIA driver, as the issue saw it, without a CUDA build."""
    proof = load_proof("8-chip/device_errors.py")

    def no_driver() -> object:
        raise RuntimeError(NO_DRIVER + " from http://www.nvidia.com/Download/index.aspx")

    monkeypatch.setattr(proof.torch.version, "cuda", "13.0")
    monkeypatch.setattr(proof.torch.version, "hip", None, raising=False)
    monkeypatch.setattr(proof.torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(proof, "REACH", dict.fromkeys(proof.REACH, no_driver))
    stated: list[tuple[str, bool, bool]] = []

    def record(statement: str, held: object, detail: str = "", *, applies: object = True, why_not: str = "") -> bool:
        stated.append((statement, bool(held), bool(applies)))
        return bool(held) and bool(applies)

    monkeypatch.setattr(proof, "claim", record)
    proof.main()
    assert f"This is {proof.NO_USABLE_GPU}." in capsys.readouterr().out
    assert all(held for _, held, applies in stated if applies), stated
    applying = [statement for statement, _, applies in stated if applies]
    assert any("no usable NVIDIA driver" in statement for statement in applying)
    assert not any("not compiled" in statement for statement in applying)


def test_the_cache_claims_stand_aside_for_kernels_without_avx2(
    load_proof: Loader, tmp_path: Path, monkeypatch: MonkeyPatch
) -> None:
    """A flat sweep (one-core-scalar on a CPU whose DEFAULT sum is slower than its memory) misses the three
    claims with vector kernels and is not applicable with scalar ones, saying why."""
    proof = load_proof("8-chip/bandwidth_vs_size.py")
    caches = [("L1 data", 48 << 10), ("L2 unified", 1 << 20), ("L3 unified", 32 << 20)]
    flat = [(size, 2.0) for size in proof.sizes(caches)]
    flat[-4] = (flat[-4][0], 2.01)  # the fastest lies beyond every private cache
    verdicts = {}
    for capability in ("AVX512", "DEFAULT"):
        channel = tmp_path / f"{capability}.jsonl"
        channel.write_text("", encoding="utf-8")
        monkeypatch.setenv(CHANNEL, str(channel))
        proof.state_claims(flat, caches, capability)
        verdicts[capability] = [(c.applies, c.held, c.why_not) for c in parse_claims(channel.read_text("utf-8"))]
    assert [(applies, held) for applies, held, _ in verdicts["AVX512"]] == [(True, False)] * 3  # the steps too
    assert [applies for applies, _, _ in verdicts["DEFAULT"]] == [False, False, False]
    assert all("without AVX2 or AVX-512" in why for _, _, why in verdicts["DEFAULT"])


def test_the_thread_sentence_says_slower_when_a_speed_up_is_below_one(load_proof: Loader) -> None:
    """The ci-2core tab printed "the sum gained more than the matmul" under matmul ×0.12, sum ×0.58: both lost."""
    sentence = load_proof("8-chip/thread_scaling.py").gain_sentence
    both_lost = sentence(2, 0.12, 0.58)
    assert "gained" not in both_lost and "8.33× slower" in both_lost and "1.72× slower" in both_lost
    assert sentence(2, 1.9, 1.2).endswith("the matmul gained more.")
    assert sentence(2, 1.2, 1.9).endswith("the sum gained more.")
    assert "gained" not in sentence(2, 1.5, 0.9)


def test_two_cores_at_once_is_judged_by_cpu_time_which_time_slicing_cannot_fake(load_proof: Loader) -> None:
    """The one-CPU tab's overlap held by interval arithmetic: its threads took turns. CPU time tells them apart."""
    at_once = load_proof("8-chip/worker_stream.py").at_once
    free = {"serial": 1.0, "free_cores": 1.95}
    parallel = {"overlapped": 1.0, "overlapped_cpu": 1.6, **free}
    sliced = {"overlapped": 1.0, "overlapped_cpu": 0.97, **free}
    verdict, cannot = at_once(parallel, together=0.7, cpus=2)
    assert verdict.held and cannot is None
    verdict, cannot = at_once(sliced, together=0.7, cpus=2)
    assert not verdict.held and cannot is None, "turns taken on one core must not pass for two cores"
    assert "one CPU" in (at_once(sliced, together=0.7, cpus=1)[1] or "")


def test_two_cores_at_once_is_not_judged_where_other_work_holds_a_core(load_proof: Loader) -> None:
    """The loaded tier (a hog per core): one thread alone still got 0.7 of a core, so the run was judged, and
    the overlap's CPU time was 1.00x its wall time. Two GIL-free threads measured beside it tell why."""
    at_once = load_proof("8-chip/worker_stream.py").at_once
    loaded = {"overlapped": 1.0, "overlapped_cpu": 1.0, "serial": 1.0, "free_cores": 1.05}
    verdict, cannot = at_once(loaded, together=0.7, cpus=2)
    assert not verdict.held
    assert cannot is not None and "other work held the cores" in cannot and "1.05 cores" in cannot


def _overlap_run(cpu: float, free_cores: float) -> dict[str, object]:
    """One overlapped run's figures: 0.7 s of Python beside 0.7 s of matmuls, over one second of wall time."""
    return {
        "host": [("Python work", 0.0, 0.7)],
        "worker": [("a @ b #1", 0.0, 0.7)],
        "overlapped": 1.0,
        "overlapped_cpu": cpu,
        "serial": 1.4,
        "free_cores": free_cores,
    }


def test_a_core_taken_for_a_moment_in_one_run_does_not_fail_two_cores_at_once(load_proof: Loader) -> None:
    """CI (two cores, make test beside it): the cores were free just before and after (1.62) but the run's CPU time
    was 1.18x its wall time. The proof runs again until one run shows two cores, and shows that run."""
    proof = load_proof("8-chip/worker_stream.py")
    squeezed, parallel = _overlap_run(cpu=1.18, free_cores=1.62), _overlap_run(cpu=1.6, free_cores=1.9)
    runs = iter([squeezed, parallel])
    judged = proof.judged_run(lambda: next(runs), runs=5, cpus=2)
    assert judged.verdict.held and judged.cannot is None
    assert judged.result is parallel and judged.runs == 2


def test_threads_that_never_run_at_once_still_fail_two_cores_at_once(load_proof: Loader) -> None:
    """Runs that all serialise, with the cores free around each, miss on every try: the claim still fails."""
    proof = load_proof("8-chip/worker_stream.py")
    made: list[dict[str, object]] = []

    def serialised() -> dict[str, object]:
        made.append(_overlap_run(cpu=0.98, free_cores=1.7 + 0.05 * len(made)))
        return made[-1]

    judged = proof.judged_run(serialised, runs=4, cpus=2)
    assert len(made) == 4 and judged.runs == 4
    assert not judged.verdict.held and judged.cannot is None
    assert judged.result is made[-1], "judged on the run whose cores were the freest"


def test_two_cores_at_once_is_not_applicable_when_no_run_had_free_cores(load_proof: Loader) -> None:
    """A neighbour on a core through every run: not applicable, with the freest run's reason."""
    proof = load_proof("8-chip/worker_stream.py")
    judged = proof.judged_run(lambda: _overlap_run(cpu=1.0, free_cores=1.05), runs=3, cpus=2)
    assert not judged.verdict.held and judged.cannot is not None and "other work held the cores" in judged.cannot


def test_the_chip_page_says_the_grain_caps_the_pieces_not_their_length(load_proof: Loader) -> None:
    """Issue 60 (K3): #cpu-threads said chunks are "at least a grain size" and #where-it-lives called GRAIN_SIZE
    "the smallest chunk"; invoke_parallel cuts a range into range / tasks, shorter than the grain at 1.5 grains."""
    proof = load_proof("6-kernels/grain_size.py")
    grain = proof.GRAIN_SIZE
    assert proof.tasks(3 * grain // 2) == 2 and proof.piece(3 * grain // 2) < grain
    for page in ("docs/floors/8-chip.md", "docs/zh/floors/8-chip.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        for wrong in ("chunks of at least a", "the smallest chunk", "不小于粒度的块", "值得交给另一个线程的最小块"):
            assert wrong not in text, (page, wrong)
        assert "6-kernels.md#kernel-walk" in text, page


def _scaling_verdict(proof: ModuleType, base: dict[str, float], most: dict[str, float], channel: Path) -> Claim:
    channel.write_text("", encoding="utf-8")
    proof.scaling_claim(base, most)
    (stated,) = parse_claims(channel.read_text("utf-8"))
    return stated


def test_the_thread_scaling_claim_stands_aside_when_the_share_of_a_core_changed_between_the_runs(
    load_proof: Loader, monkeypatch: MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 60: on torch 2.15 at load 5 the claim missed (×0.54 on 1.74× the cores one thread got): CPU time
    counts a thread spinning at OpenMP's barrier for a descheduled one, so a share that fell between the
    one-thread and the two-thread run went unseen. It stands aside now, and still misses on steady shares."""
    proof = load_proof("8-chip/thread_scaling.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    base = {"threads": 1.0, "matmul": 1.0, "cores": 1.0, "share": 0.97}
    fell = {"threads": 2.0, "matmul": 1 / 0.54, "cores": 1.74, "share": 0.5}
    stated = _scaling_verdict(proof, base, fell, channel)
    assert not stated.applies and "changed between the two runs" in stated.why_not, stated
    steady = _scaling_verdict(proof, base, {**fell, "share": 0.95}, channel)
    assert steady.applies and not steady.held, "on steady shares a slower matmul still misses"
    unmeasured = _scaling_verdict(proof, {**base, "share": -1.0}, fell, channel)
    assert unmeasured.applies and not unmeasured.held, "where Linux does not say, judged on CPU time as before"
    scaled = _scaling_verdict(proof, base, {**fell, "matmul": 0.55, "share": 0.96}, channel)
    assert scaled.applies and scaled.held


@pytest.mark.waits
@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "sched_setaffinity"), reason="Linux")
def test_a_hog_that_starts_between_two_timed_runs_is_seen_in_the_share_of_a_core(load_proof: Loader) -> None:
    """The share is measured per run, so a program that starts between the runs and takes the core shows."""
    proof = load_proof("8-chip/thread_scaling.py")

    def work() -> None:
        deadline = time.perf_counter() + 0.01
        while time.perf_counter() < deadline:
            pass

    with one_core() as core:
        _, _, before = proof.timed(work, samples=5, min_sample_seconds=0.05)
        with hogs_on(core, count=3):
            _, _, after = proof.timed(work, samples=5, min_sample_seconds=0.05)
    assert before is not None and after is not None
    assert share_changed(before, after), (before, after)


def test_the_bandwidth_steps_claim_reads_the_plateaus_the_page_points_at(
    load_proof: Loader, monkeypatch: MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 60 (E5): the page tells the reader to look for steps on the bandwidth chart, and no claim tested
    them. The plateaus' medians are judged: held on steps, missed on a flat sweep, not applicable without caches."""
    proof = load_proof("8-chip/bandwidth_vs_size.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    caches = [("L1 data", 32 << 10), ("L2 unified", 1 << 20), ("L3 unified", 16 << 20)]
    sizes = [1 << k for k in range(12, 27)]

    def verdict(rate: Callable[[int], float], known: list[tuple[str, int]], loop_bound: str = "") -> Claim:
        channel.write_text("", encoding="utf-8")
        proof.steps_claim([(size, rate(size)) for size in sizes], known, loop_bound)
        (stated,) = parse_claims(channel.read_text("utf-8"))
        return stated

    stepped = verdict(lambda size: 200.0 if size <= 1 << 20 else 100.0 if size <= 16 << 20 else 40.0, caches)
    assert stepped.applies and stepped.held
    flat = verdict(lambda size: 24.0, caches)
    assert flat.applies and not flat.held
    assert not verdict(lambda size: 24.0, []).applies
    assert not verdict(lambda size: 24.0, caches, "kernels compiled without AVX2").applies


def test_the_pages_say_no_fixed_ridge_side_or_free_core_that_a_tab_contradicts() -> None:
    """Issue 60: floor 6 said every product but the fastest sits right of the ridge (the scalar tab: n = 16 at
    2.67 FLOP/byte, left of it), floor 8 that finishing sooner "depends on a free core" beside a one-CPU tab
    at x1.08. The pages now point at the lines their proofs print instead."""
    six = (ROOT / "docs/floors/6-kernels.md").read_text(encoding="utf-8")
    assert "the other products sit to the right of the ridge" not in six
    assert "the line under\nthe table names the products that do on this machine" in six
    eight = (ROOT / "docs/floors/8-chip.md").read_text(encoding="utf-8")
    assert "depends on a\nfree core" not in eight and "either way round" in eight
    for page, said in (("6-kernels.md", "表格下面那一行列出了"), ("8-chip.md", "谁长谁短都有可能")):
        assert said in (ROOT / "docs/zh/floors" / page).read_text(encoding="utf-8"), page


def _bandwidth_verdicts(
    proof: ModuleType, rows: list[tuple[int, float]], shares: Sequence[float | None], channel: Path
) -> list[Claim]:
    caches = [("L1 data", 32 << 10), ("L2 unified", 1 << 20), ("L3 unified", 16 << 20)]
    channel.write_text("", encoding="utf-8")
    proof.state_claims(rows, caches, "AVX512", list(shares))
    return parse_claims(channel.read_text("utf-8"))


def test_the_bandwidth_claims_stand_aside_when_the_share_of_a_core_changed_between_the_sizes(
    load_proof: Loader, monkeypatch: MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 60: every claim that compares two timed runs stands aside when the share of a core changed between
    them. The sweep measures its sizes one after the other: a program that left after the small buffers (or
    came before the large ones) made the cache look no faster than memory, or faster than it is."""
    proof = load_proof("8-chip/bandwidth_vs_size.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    sizes = [1 << k for k in range(12, 27)]
    flat = [(size, 24.0) for size in sizes]
    flat[-4] = (flat[-4][0], 24.1)  # the fastest lies beyond every private cache
    # Each claim looks at the runs it compares: the fastest and the last size; the private caches' sizes and
    # those beyond; the plateaus one after the other.
    left: list[float | None] = [
        0.5 if size <= 1 << 20 else 1.0 for size in sizes
    ]  # a program left after the private caches' sizes
    stood = _bandwidth_verdicts(proof, flat, left, channel)
    assert [c.applies for c in stood] == [True, False, False], stood
    came: list[float | None] = [1.0 if size <= 16 << 20 else 0.5 for size in sizes]  # one came before memory's
    stood += _bandwidth_verdicts(proof, flat, came, channel)
    assert [c.applies for c in stood[3:]] == [False, True, False], stood
    assert all("changed between the two runs" in c.why_not for c in stood if not c.applies), stood
    steady = _bandwidth_verdicts(proof, flat, [0.97] * len(sizes), channel)
    assert [(c.applies, c.held) for c in steady] == [(True, False)] * 3, "on steady shares a flat sweep misses"
    unmeasured = _bandwidth_verdicts(proof, flat, [None] * len(sizes), channel)
    assert [(c.applies, c.held) for c in unmeasured] == [(True, False)] * 3, "where Linux does not say, as before"
    burst = [0.97] * len(sizes)
    burst[3] = 0.3  # one size beside a burst of other work: the plateau's median share holds steady
    assert _bandwidth_verdicts(proof, flat, burst, channel)[2].applies


@pytest.mark.waits
@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "sched_setaffinity"), reason="Linux")
def test_a_hog_that_starts_between_two_sizes_of_the_sweep_makes_the_cache_claim_stand_aside(
    load_proof: Loader, monkeypatch: MonkeyPatch, tmp_path: Path
) -> None:
    """A real hog, started between the sweep's small buffer and its large one on the same core: the claim that
    compares the two says "not applicable", naming the shares, instead of judging two different machines."""
    proof = load_proof("8-chip/bandwidth_vs_size.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    with one_core() as core:
        small, small_shares = proof.sweep((64 << 10,), samples=3)
        with hogs_on(core):
            large, large_shares = proof.sweep((64 << 20,), samples=3)
    assert None not in small_shares + large_shares, (small_shares, large_shares)
    stated = _bandwidth_verdicts(proof, small + large, small_shares + large_shares, channel)
    cache_claim = stated[0]
    assert not cache_claim.applies and "changed between the two runs" in cache_claim.why_not, stated


def test_the_bandwidth_section_says_its_claims_stand_aside_when_the_share_changed() -> None:
    """The bandwidth proof's claims now stand aside when the share of a core changed between the sizes they
    compare; the page says so in both languages, as it does for the thread-scaling claim."""
    for page, said in (
        ("docs/floors/8-chip.md", "where that share changed\nbetween the sizes a claim compares"),
        ("docs/zh/floors/8-chip.md", "如果论断所比较的几个大小之间，这个份额变了"),
    ):
        assert " ".join(said.split()) in section_words(page, "bandwidth-vs-size"), page
