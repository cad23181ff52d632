"""The self-check helpers, the same in every lab (`pytorch_floors/labs/checker.py`, put into the lab when it is built).

`require` stops with `NotFilled`, naming what to fill in, while an answer is still a placeholder;
`expect` stops with `WrongAnswer` and a message for you when an answer and the measurement
disagree; `expect_type` says which type an answer should have when it has another; `within`
compares a prediction with a measurement; `best_time` times a call.
"""

import time
from collections.abc import Callable

import torch


class NotFilled(AssertionError):
    """A self-check found a placeholder (None or ...) where your answer goes."""


class WrongAnswer(AssertionError):
    """A self-check found an answer that disagrees with what you measured."""


def _placeholders(name: str, value: object) -> list[str]:
    if value is None or value is ...:
        return [name]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _placeholders(f"{name}[{key!r}]", item)]
    return []


def require(**answers: object) -> None:
    """Stop, naming every answer that is still a placeholder."""
    missing = [p for name, value in answers.items() for p in _placeholders(name, value)]
    if missing:
        raise NotFilled(f"fill in {', '.join(missing)} in the answer cell above, run it, then run this check again")


def expect(ok: object, message: str) -> None:
    """Stop with `message` unless `ok`."""
    if not ok:
        raise WrongAnswer(message)


def expect_type(name: str, value: object, types: type | tuple[type, ...], wanted: str) -> None:
    """Stop unless the answer called `name` is one of `types`, saying that it should be `wanted`.

    True and False do not count as numbers here, although Python treats them as 1 and 0.
    """
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, types) and (bool in types or not isinstance(value, bool)):
        return
    kind = "string" if isinstance(value, str) else type(value).__name__
    raise WrongAnswer(f"{name} should be {wanted}, not the {kind} {value!r}")


def within(predicted: object, measured: float, factor: float) -> bool:
    """True when a positive `predicted` is within `factor` times `measured`, either way."""
    return isinstance(predicted, (int, float)) and predicted > 0 and measured / factor <= predicted <= measured * factor


def _sync() -> None:
    """Wait until the GPU has finished the work queued on it (nothing to wait for if the lab never used one)."""
    if torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        torch.cuda.synchronize()


def best_time(
    fn: Callable[[], object], repeat: int = 15, min_batch_s: float = 0.002, synchronize: bool = True
) -> float:
    """Fastest seconds per call of `fn()` over `repeat` batches of at least `min_batch_s` each.

    With `synchronize`, each batch waits for the GPU to finish what it queued; without it, the time
    is only that of queueing the work.
    """
    fn()  # warm up: first calls pay one-off costs
    _sync()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if synchronize:
            _sync()
        if time.perf_counter() - start >= min_batch_s:
            break
        calls *= 2
    samples = []
    for _ in range(repeat):
        _sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if synchronize:
            _sync()
        samples.append((time.perf_counter() - start) / calls)
    _sync()
    return min(samples)  # other programs can only add time to a batch, never remove it
