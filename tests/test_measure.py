import time
from collections.abc import Callable, Sequence

import pytest
import torch

from pytorch_floors import measure
from pytorch_floors.measure import (
    CoreShare,
    cuda_event_seconds,
    detect_device,
    human_bytes,
    human_seconds,
    interleaved_rounds,
    paired_ratio,
    paired_ratios,
    past_the_thread_count,
    private_share_fits,
    same_storage,
    seconds_per_call,
    storage_bytes,
    synchronize,
    tensor_bytes,
    time_call,
)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.int8, torch.bool])
def test_tensor_bytes_is_numel_times_element_size(dtype: torch.dtype) -> None:
    t = torch.zeros(3, 5, dtype=dtype)
    assert tensor_bytes(t) == 15 * torch.empty((), dtype=dtype).element_size()
    assert tensor_bytes(t) == t.untyped_storage().nbytes()


def test_a_slice_sees_fewer_bytes_than_its_storage() -> None:
    big = torch.zeros(100, 100)
    row = big[3]
    assert tensor_bytes(row) == 400
    assert storage_bytes(row) == storage_bytes(big) == 40_000


def test_meta_tensors_are_counted_without_memory() -> None:
    w = torch.empty(12288, 49152, device="meta")
    assert tensor_bytes(w) == 12288 * 49152 * 4


def test_human_bytes_states_the_unit_system() -> None:
    assert human_bytes(999) == "999 B"
    assert human_bytes(2_415_919_104) == "2.42 GB"
    assert human_bytes(2_415_919_104, binary=True) == "2.25 GiB"
    assert human_bytes(1536, binary=True) == "1.50 KiB"


def test_human_seconds_picks_a_unit() -> None:
    assert human_seconds(3.4e-7) == "340 ns"
    assert human_seconds(2.5e-5) == "25 µs"
    assert human_seconds(0.0123) == "12.3 ms"
    assert human_seconds(4.0) == "4 s"


def test_same_storage_tells_views_from_copies() -> None:
    x = torch.arange(12.0).view(3, 4)
    assert same_storage(x, x.T)
    assert same_storage(x, x[:, 1])
    assert not same_storage(x, x.T.contiguous())
    assert not same_storage(x, x.clone())
    m = torch.empty(4, device="meta")
    assert same_storage(m, m.view(2, 2))
    assert not same_storage(m, torch.empty(4, device="meta"))


def test_time_call_reports_median_within_quartiles_and_scales_with_work() -> None:
    short = time_call(lambda: time.sleep(0.001), samples=5, warmup=1, number=1)
    long = time_call(lambda: time.sleep(0.004), samples=5, warmup=1, number=1)
    assert short.q1 <= short.median <= short.q3
    assert short.median >= 0.001
    assert long.median > 2 * short.median
    assert "per call" in short.describe()


def test_time_call_batches_fast_calls() -> None:
    timing = time_call(lambda: None, samples=3)
    assert timing.number > 1


def test_time_call_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="samples"):
        time_call(lambda: None, samples=0)


def test_time_call_on_the_thread_clock_leaves_out_time_the_thread_does_not_run() -> None:
    """A sleeping call costs its wall time on the host clock, and almost nothing of the thread's CPU time."""
    wall = time_call(lambda: time.sleep(0.002), samples=3, warmup=0, number=1)
    cpu = time_call(lambda: time.sleep(0.002), samples=3, warmup=0, number=1, clock=time.thread_time)
    assert wall.median >= 0.002 and cpu.median < wall.median / 4


def test_interleaved_rounds_visit_every_measurement_once_a_round_alternating_the_order() -> None:
    visits: list[str] = []

    def measured(name: str) -> Callable[[], str]:
        def measure() -> str:
            visits.append(name)
            return f"{name}{visits.count(name)}"

        return measure

    rounds = interleaved_rounds({name: measured(name) for name in ("small", "large", "other")}, 3)
    assert visits == ["small", "large", "other", "other", "large", "small", "small", "large", "other"]
    assert rounds == {
        "small": ["small1", "small2", "small3"],
        "large": ["large1", "large2", "large3"],
        "other": ["other1", "other2", "other3"],
    }
    with pytest.raises(ValueError, match="rounds"):
        interleaved_rounds({"small": lambda: 1.0}, 0)


def test_paired_ratios_compare_within_a_round_so_a_busy_moment_cancels() -> None:
    """Size-independence on a shared machine: a busy moment slows both sizes of its round, the median drops a burst."""
    quiet, busy = 1.0, 6.0
    small = [quiet, busy, quiet, busy, quiet]
    large = [quiet, busy, 9.0, busy, quiet]  # one burst hit only the large size, in round 3
    assert max(large) / min(small) > 3, "the scene: best and worst of separate rounds spread past the claims' lines"
    assert paired_ratio(large, small) == 1.0
    assert paired_ratios({"small": small, "large": large}, against="small") == {"small": 1.0, "large": 1.0}
    # A size that really costs more shows it in every round, and the ratio says so: the claims can miss.
    assert paired_ratio([5 * value for value in small], small) == 5.0
    # A round where one side could not run pairs with nothing; no round at all gives no ratio.
    assert paired_ratio([2.0, "not supported"], [1.0, 1.0]) == 2.0
    assert paired_ratio(["not supported"], [1.0]) is None
    assert "large" not in paired_ratios({"small": [1.0], "large": ["not supported"]}, against="small")
    with pytest.raises(ValueError, match="same rounds"):
        paired_ratio([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="divide"):
        paired_ratio([1.0], [0.0])


def test_detect_device_agrees_with_torch() -> None:
    device = detect_device()
    if torch.cuda.is_available():
        assert device.type == "cuda"
    elif torch.backends.mps.is_available():
        assert device.type == "mps"
    else:
        assert device.type == "cpu"
    synchronize(device)


def test_seconds_per_call_uses_the_host_clock_without_cuda() -> None:
    if torch.cuda.is_available():
        assert seconds_per_call(lambda: torch.ones(8, device="cuda") + 1, "cuda") > 0
        return
    with pytest.raises(RuntimeError, match="needs a CUDA device"):
        cuda_event_seconds(lambda: None)
    short = seconds_per_call(lambda: time.sleep(0.001), "cpu", samples=3)
    assert short >= 0.001


def test_a_speed_up_past_the_thread_count_is_explained_only_where_a_private_cache_holds_a_share() -> None:
    """Issue 60: superlinear speed-ups (x5.61 on two threads) went unexplained. The line names a private cache
    that holds one thread's share but not the whole, says none does otherwise, and is not printed below the
    thread count; a shared L3 gains nothing from the split and is never named."""
    caches = [("L1 data", 48 << 10), ("L2 unified", 1 << 20), ("L3 unified", 32 << 20)]
    assert past_the_thread_count(1.9, 2, 12 << 20, caches) == []
    assert past_the_thread_count(5.0, 1, 12 << 20, caches) == []
    first, fits_l2 = past_the_thread_count(2.6, 2, 1536 << 10, caches)
    assert first == "×2.60 on 2 threads is more than ×2:"
    assert "its own core's L2 unified (1.00 MiB)" in fits_l2 and "768.00 KiB" in fits_l2
    _, none = past_the_thread_count(3.64, 2, 64 << 20, caches)
    assert none.startswith("no private cache") and "L3" not in none
    assert private_share_fits(64 << 20, 2, caches) is None
    assert past_the_thread_count(3.0, 2, 12 << 20, [])[1].startswith("no private cache")


def _schedstats_reading(readings: Sequence[dict[str, tuple[int, int]] | None]) -> Callable[[], object]:
    """A stand-in for `thread_schedstats` that returns `readings` in turn."""
    queue = list(readings)
    return lambda: queue.pop(0)


def test_a_core_share_entered_again_adds_each_blocks_time_to_the_earlier_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """A size sampled once per round (Floor 3's sweep) is judged on the share over all of its samples: one sample
    of a few milliseconds rarely shows a wait, the samples together do."""
    readings = [{"1": (0, 0)}, {"1": (4, 0)}, {"1": (10, 0)}, {"1": (14, 12)}]
    monkeypatch.setattr(measure, "thread_schedstats", _schedstats_reading(readings))
    got = CoreShare()
    with got:
        pass
    assert got.share == 1.0
    with got:
        pass
    assert got.share == pytest.approx(8 / 20), "4 ns run then 4 ns run and 12 ns waited: 8 of the 20 ready"


def test_a_core_share_whose_counters_did_not_move_says_no_thread_waited(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linux moves a thread's counters when the scheduler takes it off its core or gives it one back: a short
    block none of whose threads was preempted got its whole core (it said "not measured" before, and Floor 3's
    sizes then went unjudged where a hog was on their core)."""
    monkeypatch.setattr(measure, "thread_schedstats", _schedstats_reading([{"1": (5, 7)}, {"1": (5, 7)}]))
    with CoreShare() as got:
        pass
    assert got.share == 1.0
    monkeypatch.setattr(measure, "thread_schedstats", _schedstats_reading([None, None]))
    with CoreShare() as unknown:
        pass
    assert unknown.share is None, "where the kernel does not say, the share is not measured"
