"""One training step's memory — parameters, gradients, Adam state, activations — estimated by formula, then measured."""

from __future__ import annotations

import itertools

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import human_bytes, tensor_bytes
from pytorch_floors.plot import bar_chart, show

FLOAT = 4  # bytes of a float32 element
INT64 = 8  # bytes of an int64 class label


def build(widths: tuple[int, ...]) -> torch.nn.Sequential:
    """A multilayer perceptron: Linear layers of the given widths with ReLU between them."""
    layers: list[torch.nn.Module] = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(widths)):
        if i:
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(n_in, n_out))
    return torch.nn.Sequential(*layers)


def estimate(widths: tuple[int, ...], batch: int) -> dict[str, int]:
    """Bytes by formula, before running anything.

    - parameters: each Linear(n_in, n_out) has n_in × n_out weights and n_out biases;
    - gradients: one float32 per parameter;
    - Adam: two moments (exp_avg, exp_avg_sq) per parameter, plus a one-element `step` per tensor;
    - activations (what autograd keeps for backward): the input of the first Linear; the output of
      each ReLU (shared with the Linear that reads it); the log-softmax output; the int64 targets;
      and a one-element total weight kept by the loss.
    """
    params = sum(n_in * n_out + n_out for n_in, n_out in itertools.pairwise(widths))
    tensors = 2 * (len(widths) - 1)
    activations = FLOAT * batch * sum(widths[:-1]) + FLOAT * batch * widths[-1] + INT64 * batch + FLOAT
    return {
        "parameters": FLOAT * params,
        "gradients": FLOAT * params,
        "Adam state": 2 * FLOAT * params + FLOAT * tensors,
        "activations": activations,
    }


def measure(widths: tuple[int, ...], batch: int, seed: int = 0) -> dict[str, int]:
    """Run one real training step and count the bytes of each kind of tensor it holds."""
    torch.manual_seed(seed)
    model = build(widths)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(batch, widths[0])
    y = torch.randint(0, widths[-1], (batch,))
    param_storages = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in param_storages:  # a parameter is not an activation
            saved[storage.data_ptr()] = storage.nbytes()  # one entry per storage: shared saves count once
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    activations = sum(saved.values())
    loss.backward()
    optimizer.step()
    state = [t for s in optimizer.state.values() for t in s.values() if isinstance(t, torch.Tensor)]
    return {
        "parameters": sum(tensor_bytes(p) for p in model.parameters()),
        "gradients": sum(tensor_bytes(p.grad) for p in model.parameters() if p.grad is not None),
        "Adam state": sum(tensor_bytes(t) for t in state),
        "activations": activations,
    }


def report(title: str, widths: tuple[int, ...], batch: int) -> tuple[list[str], dict[str, int]]:
    """Lines of a side-by-side table for one model, and its measured bytes."""
    guess, real = estimate(widths, batch), measure(widths, batch)
    worst = max(abs(guess[key] - value) / value for key, value in real.items())
    claim(f"the formula matches the measurement within 2 % ({widths})", held=worst <= 0.02, detail=f"worst {worst:.2%}")
    # Printed for a phone's 46 columns: columns of 9, the title in two lines (its `\n`).
    lines = [*title.split("\n"), f"  {'':<12} {'formula':>9} {'measured':>9}"]
    for key in guess:
        lines.append(f"  {key:<12} {guess[key]:>9} {real[key]:>9}  ({human_bytes(real[key])})")
    total_guess, total_real = sum(guess.values()), sum(real.values())
    lines.append(f"  {'total':<12} {total_guess:>9} {total_real:>9}  ({human_bytes(total_real)})")
    return lines, real


def main() -> None:
    lines, _ = report("The one-page program's model, Linear(784, 10),\nbatch 64, with Adam (bytes):", (784, 10), 64)
    mlp = (784, 512, 512, 10)
    more, real = report("An MLP 784-512-512-10 with ReLU,\nbatch 64, with Adam (bytes):", mlp, 64)
    lines += ["", *more]
    lines.append("")
    kept = real["parameters"] + real["gradients"] + real["Adam state"]
    claim(
        "gradients take as much as the parameters; Adam's state twice as much",
        held=real["gradients"] == real["parameters"]
        and 2 * real["parameters"] <= real["Adam state"] < 2.01 * real["parameters"],
    )
    lines += [
        f"Adam's state is {real['Adam state'] / real['parameters']:.2f}× the parameters;",
        "parameters + gradients + state",
        f"= {kept / real['parameters']:.2f}× the parameters.",
    ]
    chart = bar_chart(
        [(key, value / 1e6) for key, value in real.items()],
        title="Memory of one training step of the MLP (measured)",
        value_label="megabytes (10^6 bytes)",
        description="Bars: parameters, gradients, Adam state, activations of one training step, measured.",
        value_format="{:.3f} MB",
        highlight=("Adam state",),
    )
    show(chart, text="\n".join(lines), name="training_step_memory")


if __name__ == "__main__":
    main()
