"""mdc-profile --program-kit's arithmetic for one unit's seconds
(profiler/program_timing.py): on the host a call less an empty call plus
a dispatch; on an accelerator that runs copies, what one more copy adds,
at least a dispatch; a unit whose function or function of copies did not
compile is not timed (it is modelled)."""

from __future__ import annotations

import numpy as np
import pytest

from mdc.profiler.program import copies_symbol, unit_symbol
from mdc.profiler.program_timing import _unit_seconds, timed_on

UNIT = {"symbol": "u3", "arguments": [[[2, 2], "float32"]]}
TINY, DISPATCH = 200e-6, 4e-6


class FakeProbe:
    def __init__(self, seconds: dict):
        self.seconds = seconds
        self.called = []

    def time_call(self, name, arguments):
        assert [a.shape for a in arguments] == [(2, 2)]
        self.called.append(name)
        return self.seconds[name]


def _seconds(seconds: dict, device: dict) -> tuple[float, list]:
    probe = FakeProbe(seconds)
    return _unit_seconds(probe, UNIT, device, TINY, DISPATCH, np.random.default_rng(0)), probe.called


def test_the_host_takes_its_call_less_an_empty_call():
    got, called = _seconds({"u3": 260e-6}, {"copies": 1})
    assert got == pytest.approx(64e-6) and called == ["u3"]


def test_a_host_call_faster_than_the_empty_one_costs_a_dispatch():
    assert _seconds({"u3": 190e-6}, {"copies": 1})[0] == pytest.approx(DISPATCH)


def test_the_accelerator_takes_what_one_more_copy_adds():
    # One copy's call hides its kernel in the call's noise (190 us < @tiny);
    # eight copies take 7 x 30 us more.
    got, called = _seconds({"u3": 190e-6, copies_symbol("u3"): 400e-6}, {"copies": 8})
    assert got == pytest.approx(30e-6)
    assert called == ["u3", copies_symbol("u3")]


def test_copies_no_slower_than_one_cost_a_dispatch():
    assert _seconds({"u3": 210e-6, copies_symbol("u3"): 205e-6}, {"copies": 8})[0] == pytest.approx(DISPATCH)


def test_a_unit_is_timed_only_where_its_functions_compiled():
    host, accelerator = {"copies": 1, "dropped": {}}, {"copies": 8, "dropped": {}}
    assert timed_on("u3", host) and timed_on("u3", accelerator)
    assert not timed_on("u3", {**host, "dropped": {"u3": "error"}})
    assert not timed_on("u3", {**accelerator, "dropped": {"u3": "error"}})
    assert not timed_on("u3", {**accelerator, "dropped": {copies_symbol("u3"): "error"}})
    # A host has no function of copies: a name like it there is another unit's business.
    assert timed_on("u3", {**host, "dropped": {copies_symbol("u3"): "error"}})
    assert unit_symbol(copies_symbol("u3")) == unit_symbol("u3") == "u3"


def test_a_kit_without_copies_is_timed_as_before():
    assert _seconds({"u3": 260e-6}, {})[0] == pytest.approx(64e-6)
