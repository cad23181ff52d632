import time

import pytest
import torch

from pytorch_floors.measure import (
    cuda_event_seconds,
    detect_device,
    human_bytes,
    human_seconds,
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
