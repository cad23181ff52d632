"""A bad call is rejected by torch's argument parser, which lists every signature the binding accepts."""

from __future__ import annotations

from collections.abc import Callable

import torch

from pytorch_floors.claims import claim


def parser_message(call: Callable[[], object]) -> str:
    """Run a call that should fail and return the TypeError message the argument parser raised."""
    try:
        call()
    except TypeError as error:
        return str(error)
    raise AssertionError("the call was accepted")


def listed_signatures(message: str) -> list[str]:
    """The signatures an 'expected one of' message offers, one per `* (...)` line."""
    return [line.strip()[2:] for line in message.splitlines() if line.lstrip().startswith("* (")]


CALLS: dict[str, Callable[[], object]] = {
    'torch.randn(64, 784, dtype="float32")': lambda: torch.randn(64, 784, dtype="float32"),
    # a float where a dimension goes (a string would not do: a build with named tensors takes it as a name)
    "torch.max(torch.ones(3), 1.5)": lambda: torch.max(torch.ones(3), 1.5),
    # the same two positional arguments, a float first or a float second
    "torch.randn(64.0, 784)": lambda: torch.randn(64.0, 784),
    "torch.randn(64, 784.0)": lambda: torch.randn(64, 784.0),
    # one argument: a count only one of randn's signatures accepts
    'torch.randn("64")': lambda: torch.randn("64"),
}


def required_count(signature: str) -> int:
    """How many arguments a listed signature needs: those without a default (`= ...`)."""
    inside = signature.strip().removeprefix("(").removesuffix(")")
    return sum(1 for part in inside.split(", ") if part != "*" and "=" not in part)


def main() -> None:
    offered = {}
    for text, call in CALLS.items():
        message = parser_message(call)
        signatures = listed_signatures(message)
        offered[text] = (message, signatures)
        print(f">>> {text}")
        print(f"TypeError: {message.rstrip()}")
        if signatures:
            print(f"[no signature matched: all {len(signatures)} offered]")
        elif "failed to unpack" in message:
            print("[a signature matched; converting one element of 'size' failed afterwards]")
        else:
            print("[one signature fits this many arguments: the parser re-parsed against it and named the argument]")
        print()
    (bad_dtype, full), _, (_, float_first), (float_second, none), (one_argument, none_listed) = offered.values()
    needs = [required_count(signature) for signature in full]
    print(f"randn's signatures need at least {' and '.join(map(str, needs))} arguments")
    claim(
        "no signature matched: the parser lists every signature it holds",
        held="invalid combination of arguments" in bad_dtype and len(full) >= 2,
        detail=f"{len(full)} signatures",
    )
    claim(
        "same argument count, different errors: a float first lists every signature, a float second blames one element",
        held=float_first == full and none == [] and "pos 2" in float_second,
    )
    claim(
        "one argument fits only the signature without a required generator, so its error names the argument",
        held=sum(1 for need in needs if need <= 1) == 1 and none_listed == [] and "argument 'size'" in one_argument,
        detail=f"required counts {needs}",
    )


if __name__ == "__main__":
    main()
