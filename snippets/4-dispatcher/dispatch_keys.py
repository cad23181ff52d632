"""Every tensor carries a set of dispatch keys; print the sets the running torch actually gives."""

from __future__ import annotations

import textwrap

import torch

from pytorch_floors.claims import claim
from pytorch_floors.measure import detect_device


def keys(tensor: torch.Tensor) -> list[str]:
    """The names in a tensor's dispatch key set, lowest priority first (the order torch prints them)."""
    text = str(torch._C._dispatch_keys(tensor))
    inside = text[text.index("(") + 1 : text.rindex(")")]
    return [name.strip() for name in inside.split(",") if name.strip()]


def examples() -> dict[str, torch.Tensor]:
    """Tensors that differ in one respect each: device, requires_grad, dtype, inference mode."""
    with torch.inference_mode():
        inference = torch.ones(3)
    return {
        "torch.ones(3)": torch.ones(3),
        "torch.ones(3, requires_grad=True)": torch.ones(3, requires_grad=True),
        "torch.ones(3, dtype=torch.int64)": torch.ones(3, dtype=torch.int64),
        'torch.ones(3, device="meta")': torch.ones(3, device="meta"),
        "made under torch.inference_mode()": inference,
    }


def accelerator_example() -> tuple[str, torch.Tensor] | None:
    """A tensor on the CUDA or MPS device when this machine has one, else `None`."""
    device = detect_device()
    if device.type == "cpu":
        return None
    return f'torch.ones(3, device="{device.type}")', torch.ones(3, device=device)


def keys_of(keyset: str) -> list[str]:
    """The names in a printed key set such as `DispatchKeySet(AutocastCPU, AutocastCUDA)`."""
    inside = keyset[keyset.index("(") + 1 : keyset.rindex(")")]
    return [name.strip() for name in inside.split(",") if name.strip()]


def tls_sets() -> tuple[str, str]:
    """This thread's include and exclude sets (added to / removed from every tensor's keys)."""
    return str(torch._C._dispatch_tls_local_include_set()), str(torch._C._dispatch_tls_local_exclude_set())


def main() -> None:
    # Printed for a phone's 46 columns: each tensor's keys on the lines under it.
    print(f"torch {torch.__version__}:")
    print("torch._C._dispatch_keys(t) for")
    rows = list(examples().items())
    extra = accelerator_example()
    if extra is not None:
        rows.append(extra)
    for label, tensor in rows:
        print(f"  {label}")
        print(
            textwrap.fill(
                ", ".join(keys(tensor)),
                width=46,
                initial_indent="    ",
                subsequent_indent="    ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    if extra is None:
        print("  (no CUDA or MPS device here:")
        print(f"   torch.cuda.is_available() = {torch.cuda.is_available()},")
        print(f"   torch.version.cuda = {torch.version.cuda};")
        print("   on a CUDA machine this script adds a row")
        print("   whose keys name CUDA where these name CPU)")
    plain, grad = keys(torch.ones(3)), keys(torch.ones(3, requires_grad=True))
    print()
    print(f"requires_grad changes the key set: {plain != grad}")
    include, exclude = tls_sets()
    print()
    print("Thread-local sets (every call on this thread):")
    for label, keyset in (("included", include), ("excluded", exclude)):
        print(textwrap.fill(f"{label}: {keyset}", width=46, initial_indent="  ", subsequent_indent="    "))
    print("  (each call's keys = the tensors' keys")
    print("   + the included set - the excluded set)")
    table = {label: keys(tensor) for label, tensor in examples().items()}
    claim("a tensor's keys include autograd's", held=any(key.startswith("Autograd") for key in plain))
    claim("requires_grad does not change the key set", held=plain == grad)
    claim(
        "the dtype is not a dispatch key: int64 and float32 have the same keys",
        held=table["torch.ones(3, dtype=torch.int64)"] == plain,
    )
    meta = table['torch.ones(3, device="meta")']
    claim("the device is: a meta tensor has Meta keys, not CPU's", held="Meta" in meta and "CPU" not in meta)
    claim(
        "a tensor made under inference_mode has no autograd keys",
        held=not any(key.startswith("Autograd") for key in table["made under torch.inference_mode()"]),
    )
    claim(
        "AutocastCPU is on a CPU tensor, but sits in the thread's excluded set",
        held="AutocastCPU" in plain and "AutocastCPU" in keys_of(exclude),
    )


if __name__ == "__main__":
    main()
