"""mdc-profile --program-kit's arithmetic for one unit's seconds
(profiler/program_timing.py): on the host a call less an empty call plus
a dispatch; on an accelerator that runs copies, what one more copy adds,
at least a dispatch; a unit whose function or function of copies did not
compile is not timed (it is modelled). Calls take turns over argument
sets in memory of their own that pass COLD_BYTES together, and copies
with arguments of their own get a set each."""

from __future__ import annotations

import numpy as np
import pytest

from mdc.profiler.program import copies_symbol, unit_symbol
from mdc.profiler import program_timing
from mdc.profiler.program_timing import _unit_seconds, timed_on

UNIT = {"symbol": "u3", "arguments": [[[2, 2], "float32"]]}
TINY, DISPATCH = 200e-6, 4e-6


class FakeProbe:
    def __init__(self, seconds: dict):
        self.seconds = seconds
        self.called = []
        self.sets = {}

    def time_calls(self, name, argument_sets):
        assert argument_sets and all(len(a) in (1, 8) and {x.shape for x in a} == {(2, 2)} for a in argument_sets)
        self.called.append(name)
        self.sets[name] = argument_sets
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


def _memory(arrays) -> set:
    return {a.ctypes.data for a in arrays}


def test_calls_take_turns_over_sets_of_their_own_that_pass_the_cold_bytes(monkeypatch):
    monkeypatch.setattr(program_timing, "COLD_BYTES", 64)  # a 2x2 f32 set is 16 bytes: 4 sets
    probe = FakeProbe({"u3": 190e-6, copies_symbol("u3"): 400e-6})
    _unit_seconds(probe, UNIT, {"copies": 8, "own_arguments": True}, TINY, DISPATCH, np.random.default_rng(0))
    singles, calls = probe.sets["u3"], probe.sets[copies_symbol("u3")]
    assert len(singles) == 4 and all(len(s) == 1 for s in singles)
    assert len(_memory(a for s in singles for a in s)) == 4
    # Eight copies' arguments are 128 bytes, past 64: one call of eight sets, each its own.
    assert len(calls) == 1 and len(calls[0]) == 8 and len(_memory(calls[0])) == 8
    assert all(np.allclose(a, singles[0][0] * (1 + j / 1024)) for j, a in enumerate(calls[0]))


def test_copies_that_share_their_arguments_take_the_singles_sets(monkeypatch):
    monkeypatch.setattr(program_timing, "COLD_BYTES", 32)
    probe = FakeProbe({"u3": 190e-6, copies_symbol("u3"): 400e-6})
    _unit_seconds(probe, UNIT, {"copies": 8}, TINY, DISPATCH, np.random.default_rng(0))
    assert probe.sets[copies_symbol("u3")] is probe.sets["u3"] and len(probe.sets["u3"]) == 2


def test_a_large_unit_is_one_set_and_a_tiny_one_at_most_max_sets():
    assert program_timing._rotation(program_timing.COLD_BYTES * 3) == 1
    assert program_timing._rotation(1) == program_timing.MAX_SETS
    assert program_timing._rotation(program_timing.COLD_BYTES // 3 + 1) == 3
