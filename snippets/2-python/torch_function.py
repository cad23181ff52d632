"""__torch_function__: a Tensor subclass, and then a mode, see the torch calls the one-page program makes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from pytorch_floors.claims import claim


def name_of(func: Callable[..., Any]) -> str:
    """The public name of a torch function, such as 'torch.nn.functional.linear'."""
    return resolve_name(func) or getattr(func, "__qualname__", repr(func))


class LoggingTensor(torch.Tensor):
    """A Tensor subclass whose every torch call is written to `LoggingTensor.seen` before it runs."""

    seen: list[str] = []  # noqa: RUF012  (one shared log, on purpose)

    @classmethod
    def __torch_function__(
        cls,
        func: Callable[..., Any],
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        cls.seen.append(name_of(func))
        return super().__torch_function__(func, types, args, kwargs or {})


class CallLog(TorchFunctionMode):
    """A mode: sees every torch call made while it is active, whether or not a tensor argument asks for it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        self.seen.append(name_of(func))
        return func(*args, **(kwargs or {}))


def program(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Lines two to five of the one-page program on given data; returns the loss."""
    model = torch.nn.Linear(x.shape[1], 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def subclass_sees(batch: int = 64, features: int = 784) -> tuple[list[str], str]:
    """Calls a LoggingTensor input sees during the program, and the class of the loss it produces."""
    torch.manual_seed(0)
    x = torch.randn(batch, features).as_subclass(LoggingTensor)
    y = torch.randint(0, 10, (batch,))
    LoggingTensor.seen.clear()
    loss = program(x, y)
    return list(LoggingTensor.seen), type(loss).__name__


def mode_sees(batch: int = 64, features: int = 784) -> list[str]:
    """Calls a CallLog mode sees during the whole program, the randn line included."""
    torch.manual_seed(0)
    with CallLog() as log:
        x = torch.randn(batch, features)
        y = torch.randint(0, 10, (batch,))
        program(x, y)
    return log.seen


def main() -> None:
    seen, loss_class = subclass_sees()
    print(f"x is a LoggingTensor; __torch_function__ saw {len(seen)} calls:")
    for name in seen:
        print(f"  {name}")
    print(f"the loss came back as a {loss_class}")
    claim(
        "__torch_function__ sees linear, cross_entropy and backward, and the result stays a LoggingTensor",
        held=loss_class == "LoggingTensor"
        and all(
            name in seen
            for name in ("torch.nn.functional.linear", "torch.nn.functional.cross_entropy", "torch.Tensor.backward")
        ),
    )
    claim("a factory call (torch.randn) has no tensor argument to ask", held="torch.randn" not in seen)
    print()
    calls = mode_sees()
    counts = Counter(calls)
    print(f"a TorchFunctionMode saw {len(calls)} torch calls ({len(counts)} different ones):")
    for name, count in counts.items():
        print(f"  {name}" + (f"  (x{count})" if count > 1 else ""))
    claim(
        "a mode sees every call, factories and the optimizer's in-place add_ included",
        held=calls[0] == "torch.randn" and "torch.Tensor.add_" in calls and len(calls) > len(seen),
        detail=f"{len(calls)} calls against the subclass's {len(seen)}",
    )


if __name__ == "__main__":
    main()
