"""The browser tours' bookkeeping (tests/page_tour.py), without a browser: what a test that reads a tour is told."""

from __future__ import annotations

import pytest
from page_tour import PROBES, TOURS, Toured


def test_a_probe_that_raised_fails_every_test_that_reads_it_naming_the_page_and_the_tour() -> None:
    record = {
        "facts": {"head": {"": {"h1": 90}}, "wide": {"": {"page": 390, "tables": []}}},
        "errors": {"head": ["floors/4-dispatcher/ at 390 px (slate): Timeout 30000ms exceeded"]},
    }
    toured = Toured(TOURS["phone-slate"], record)
    assert toured.facts("wide") == {"": {"page": 390, "tables": []}}, "a probe that raised nowhere reads as it found"
    with pytest.raises(AssertionError, match=r"'head' failed in the phone-slate tour:\nfloors/4-dispatcher/ at 390 px"):
        toured.facts("head")


def test_every_probe_runs_in_known_tours_and_each_tour_has_a_probe() -> None:
    names = [probe.name for probe in PROBES]
    assert len(names) == len(set(names)), "two probes would keep their facts under one name"
    unknown = {probe.name: sorted(set(probe.tours) - set(TOURS)) for probe in PROBES if set(probe.tours) - set(TOURS)}
    assert unknown == {}
    assert {tour for probe in PROBES for tour in probe.tours} == set(TOURS)
    assert [tour.name for tour in TOURS.values() if tour.every_page] == ["desktop-default"], "the load check's tour"
