"""Pattern tests for Floor 3, the boundary: what its page says that is not a claim of its proofs.

Every proof's claims are required to hold by `tests/test_floor_proofs.py`, which finds the proofs on disk.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from core_hogs import hogs_on, one_core
from pytest import MonkeyPatch

from conftest import section_words
from pytorch_floors.claims import CHANNEL, Claim, parse_claims


def test_the_parser_lists_as_many_signatures_as_the_library_stores(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/parser_error.py")
    library = load_proof("3-boundary/binding_in_library.py")
    listed = proof.listed_signatures(proof.parser_message(proof.CALLS['torch.randn(64, 784, dtype="float32")']))
    assert all(s.startswith("(tuple of ints size") for s in listed)
    assert len(listed) == len(library.signature_strings(library.python_library().read_bytes(), "randn"))
    assert len(proof.listed_signatures(proof.parser_message(proof.CALLS["torch.max(torch.ones(3), 1.5)"]))) >= 3


def test_crossover_interpolates_on_log_axes(load_proof: Callable[[str], ModuleType]) -> None:
    proof = load_proof("3-boundary/crossing_cost.py")
    assert proof.crossover([(1, 1.0), (10, 1.0), (100, 4.0)]) == pytest.approx(10**1.5)
    assert proof.crossover([(1, 1.0), (10, 1.5)]) == float("inf")


Row = tuple[int, float, float | None]


def _crossing_verdicts(proof: ModuleType, plain: list[Row], into: list[Row], channel: Path) -> list[Claim]:
    channel.write_text("", encoding="utf-8")
    proof.state_claims(plain, into)
    return parse_claims(channel.read_text("utf-8"))


def test_the_crossing_claims_stand_aside_when_the_share_of_a_core_changed_between_the_sizes(
    load_proof: Callable[[str], ModuleType], monkeypatch: MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 60: every claim that compares two timed runs stands aside when the share of a core changed between
    them. The sweep times its sizes one after the other: a program that came after the floor's size made 256
    elements look dear, and one that left between the last two sizes hid their growth."""
    proof = load_proof("3-boundary/crossing_cost.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    sizes = proof.SIZES

    def rows(seconds: Callable[[int], float], share: Callable[[int], float | None]) -> list[Row]:
        return [(n, seconds(n), share(n)) for n in sizes]

    # A sweep that misses all three: 256 elements at 3x the floor, the crossover there, the last step flat.
    def missed(n: int) -> float:
        return 1e-6 if n < 256 else 3e-6

    steady = _crossing_verdicts(proof, rows(missed, lambda n: 0.95), rows(missed, lambda n: 0.95), channel)
    assert [(c.applies, c.held) for c in steady] == [(True, False)] * 3, steady
    came = _crossing_verdicts(  # a program came after the floor's size and left before the last one
        proof,
        rows(missed, lambda n: 1.0 if n == 1 else 0.4),
        rows(missed, lambda n: 1.0 if n == sizes[-1] else 0.4),
        channel,
    )
    assert [c.applies for c in came] == [False] * 3, came
    assert all("changed between the two runs" in c.why_not for c in came), came
    unmeasured = _crossing_verdicts(proof, rows(missed, lambda n: None), rows(missed, lambda n: None), channel)
    assert [(c.applies, c.held) for c in unmeasured] == [(True, False)] * 3, "where Linux does not say, as before"


def test_a_slow_stretch_of_the_machine_slows_no_size_of_the_sweep_alone(
    load_proof: Callable[[str], ModuleType], monkeypatch: MonkeyPatch
) -> None:
    """A virtual machine's core can run at half speed for a tenth of a second, which no counter inside it shows.
    The sweep timed each size in one stretch, so one such stretch made 64 elements twice the floor and the
    crossover "53 elements" on an AMD EPYC (Zen 3) here; sampled in rounds, each size keeps a sample outside it."""
    proof = load_proof("3-boundary/crossing_cost.py")
    taken = 0

    def timed_add(numel: int, *, reuse_output: bool = False) -> Callable[[], tuple[float, float | None]]:
        def sample() -> tuple[float, float | None]:
            nonlocal taken
            taken += 1
            slow = 2 * proof.ROUNDS <= taken < 4 * proof.ROUNDS  # as long as two sizes' samples, taken in a row
            return (2e-6 if slow else 1e-6), 1.0

        return sample

    monkeypatch.setattr(proof, "timed_add", timed_add)
    rows = proof.shared_sweep()
    assert taken == proof.ROUNDS * len(proof.SIZES)
    assert [seconds for _, seconds, _ in rows] == [1e-6] * len(proof.SIZES), rows


@pytest.mark.waits
@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "sched_setaffinity"), reason="Linux")
def test_a_hog_that_starts_between_two_sizes_makes_the_flat_floor_claim_stand_aside(
    load_proof: Callable[[str], ModuleType], monkeypatch: MonkeyPatch, tmp_path: Path
) -> None:
    """A real hog, started on the same core between the floor's size and 256 elements, never fails the claim that
    compares the two. Each size keeps its fastest sample, taken in rounds: one that ran without being taken off
    its core times the code, and the claim holds; where the hog held the core through every sample, the shares
    differ and the claim says "not applicable", naming them, instead of judging two different machines."""
    proof = load_proof("3-boundary/crossing_cost.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    with one_core() as core:
        floor = proof.shared_sweep([1])
        with hogs_on(core):
            rest = proof.shared_sweep([4, 16, 64, 256])
    plain = floor + rest
    assert None not in [share for _, _, share in plain], plain
    flat = _crossing_verdicts(proof, plain, plain, channel)[0]
    assert flat.held if flat.applies else "changed between the two runs" in flat.why_not, flat


def test_the_crossing_section_says_its_claims_stand_aside_when_the_share_changed() -> None:
    """The crossing and tiny-add proofs' claims stand aside when the share of a core changed between the runs they
    compare; the page says so in both languages."""
    for page, anchor, said in (
        ("docs/floors/3-boundary.md", "crossing-cost", "where\nthat share changed between the sizes a claim compares"),
        ("docs/zh/floors/3-boundary.md", "crossing-cost", "如果论断所比较的几个大小之间，这个份额变了"),
        ("docs/floors/3-boundary.md", "tiny-add-three-ways", "a claim\nwhose candidates got different shares"),
        ("docs/zh/floors/3-boundary.md", "tiny-add-three-ways", "如果论断所比较的几种做法得到的核心份额不同"),
    ):
        assert " ".join(said.split()) in section_words(page, anchor), (page, anchor)


def test_the_tiny_add_claims_stand_aside_when_the_share_of_a_core_changed_between_the_candidates(
    load_proof: Callable[[str], ModuleType], monkeypatch: MonkeyPatch, tmp_path: Path
) -> None:
    """The candidates are timed one after the other: a program that left after NumPy's timing made NumPy look
    as dear as torch. The claims comparing them stand aside then, and are judged on steady shares."""
    proof = load_proof("3-boundary/tiny_add.py")
    channel = tmp_path / "claims.jsonl"
    monkeypatch.setenv(CHANNEL, str(channel))
    names = list(proof.candidates())

    def verdicts(seconds: list[float], shares: list[float | None]) -> list[Claim]:
        channel.write_text("", encoding="utf-8")
        proof.state_claims(dict(zip(names, zip(seconds, shares, strict=True), strict=True)))
        return parse_claims(channel.read_text("utf-8"))

    numpy_as_dear = [5e-8, 2e-6, 1.9e-6, 2e-6]
    steady = verdicts(numpy_as_dear, [0.95] * 4)
    assert [(c.applies, c.held) for c in steady] == [(True, False)] * 2, steady
    left = verdicts(numpy_as_dear, [0.4, 0.4, 1.0, 1.0])
    assert [c.applies for c in left] == [False, False], left
    assert all("changed between the two runs" in c.why_not for c in left), left
    unmeasured = verdicts(numpy_as_dear, [None] * 4)
    assert [(c.applies, c.held) for c in unmeasured] == [(True, False)] * 2
    assert all(c.applies and c.held for c in verdicts([5e-8, 4e-7, 2e-6, 2e-6], [0.95] * 4))
